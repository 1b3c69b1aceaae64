/**
 * The closed sets of values Wowza writes into its logs (from the REST API and log format docs), and the
 * mapping of record values onto bounded label values: a label may only take values from these sets, plus
 * `other` for anything unknown and `none` when the line has no such field.
 */

export const SEVERITIES = ['debug', 'info', 'warn', 'error'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const CATEGORIES = ['server', 'vhost', 'application', 'session', 'stream', 'rtsp'] as const;

export const EVENTS = [
  'connect-pending', 'connect', 'disconnect', 'publish', 'unpublish', 'play', 'pause', 'unpause', 'seek', 'stop',
  'record', 'recordstop', 'create', 'destroy', 'app-start', 'app-stop', 'vhost-start', 'vhost-stop',
  'server-start', 'server-stop', 'comment', 'announce', 'setbuffertime', 'setstreamtype',
] as const;

/** Wowza's own server-side filters for `GET {S}/logs/{logType}?filter=a|b`. */
export const SERVER_FILTER_FLAGS = ['noDebug', 'noInfo', 'noWarn', 'noError', 'noHeader', 'noColumnHeadings'] as const;
export type ServerFilterFlag = (typeof SERVER_FILTER_FLAGS)[number];

/** Short names accepted in config and on the command line for the standard log types. */
export const LOG_TYPE_ALIASES: Readonly<Record<string, string>> = {
  access: 'wowzastreamingengine_access',
  error: 'wowzastreamingengine_error',
  stats: 'wowzastreamingengine_stats',
};

export const DEFAULT_LOG_TYPES = ['wowzastreamingengine_access', 'wowzastreamingengine_error'];

/** `access` -> `wowzastreamingengine_access`; any other name is taken as the server spells it. */
export function resolveLogType(name: string): string {
  return LOG_TYPE_ALIASES[name] ?? name;
}

const SEVERITY_RANK: Readonly<Record<string, number>> = { debug: 0, info: 1, warn: 2, warning: 2, error: 3, fatal: 4 };

/** Rank of a severity for `>=` comparisons; undefined when the value is not a known severity. */
export function severityRank(value: unknown): number | undefined {
  return typeof value === 'string' ? SEVERITY_RANK[value.toLowerCase()] : undefined;
}

function bounded(known: ReadonlySet<string>, value: unknown): string {
  if (value === null || value === undefined || value === '') return 'none';
  const v = String(value).toLowerCase();
  return known.has(v) ? v : 'other';
}

const SEVERITY_SET: ReadonlySet<string> = new Set(SEVERITIES);
const CATEGORY_SET: ReadonlySet<string> = new Set(CATEGORIES);
const EVENT_SET: ReadonlySet<string> = new Set(EVENTS);

/** `severity` label value: `debug|info|warn|error`, `other`, or `none`. */
export const severityLabel = (value: unknown): string => bounded(SEVERITY_SET, value);
/** `category` label value: one of {@link CATEGORIES}, `other`, or `none`. */
export const categoryLabel = (value: unknown): string => bounded(CATEGORY_SET, value);
/** `event` label value: one of {@link EVENTS}, `other`, or `none`. */
export const eventLabel = (value: unknown): string => bounded(EVENT_SET, value);

/** Parses `noDebug,noInfo` (CLI) into flags; throws naming the unknown flag. */
export function parseServerFilterFlags(text: string): ServerFilterFlag[] {
  const out: ServerFilterFlag[] = [];
  for (const raw of text.split(/[,|]/)) {
    const name = raw.trim();
    if (name === '') continue;
    const flag = SERVER_FILTER_FLAGS.find((f) => f.toLowerCase() === name.toLowerCase());
    if (!flag) throw new Error(`unknown log filter "${name}": use ${SERVER_FILTER_FLAGS.join(', ')}`);
    if (!out.includes(flag)) out.push(flag);
  }
  return out;
}
