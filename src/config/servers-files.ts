import { readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseYaml } from './yaml.js';
import { z } from 'zod';
import type { Logger } from '../base/logger.js';
import { ConfigError, formatPath } from './errors.js';
import { readRegularFile, TARGET_FILE_MAX_BYTES } from './read-file.js';
import { ExpectedStreamsSchema } from './expected-streams.js';
import type { ExpectedStream } from '../wowza/expected-stream.js';
import { apiBase } from '../wowza/api-url.js';

/**
 * Target files (`servers_files:`), read at run time like Prometheus' `file_sd`: YAML or JSON files, each a list
 * of `{targets: [url, ...], module: <name>, labels: {k: v}}`. A file is re-read when it changes (a watch on its
 * directory, and a re-scan every `refresh_interval` for file systems that send no events). A file that does not
 * parse keeps its last good content, and is reported; a file removed takes its servers with it.
 */

/** Labels the exporter sets itself: a file must not set them (they would clash or be overwritten). */
export const RESERVED_LABELS = new Set([
  'server', 'vhost', 'application', 'instance', 'app_instance', 'stream', 'rendition', 'protocol', 'collector', 'endpoint', 'code',
  'mode', 'version', 'build', 'license_type', 'feature', 'app_type', 'dvr', 'transcoder', 'drm', 'source_scheme',
  'stream_manager', 'log_type', 'severity', 'category', 'event', 'sink', 'reason', 'schedule_id', 'name',
  'transcoder_id', 'action_type', 'recurrence_type', 'state', 'field', 'file', 'job', 'le', 'quantile',
]);

const LabelName = z
  .string()
  .regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, 'label names use letters, digits and _ and do not start with a digit')
  .refine((n) => !n.startsWith('__'), 'label names starting with __ are reserved by Prometheus')
  .superRefine((n, ctx) => {
    if (RESERVED_LABELS.has(n)) ctx.addIssue({ code: 'custom', message: `"${n}" is a label the exporter sets itself` });
  });

/** `wowza:8087` or a URL; http or https, without credentials (they come from the module). */
const TargetUrl = z.string().transform((v, ctx) => {
  let u: URL;
  try {
    u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(v) ? v : `http://${v}`);
  } catch {
    ctx.addIssue({ code: 'custom', message: `not a URL or host:port: ${JSON.stringify(v.replace(/\/\/[^/@]*@/, '//').slice(0, 100))}` });
    return z.NEVER;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: `must be http or https, not ${u.protocol}` });
  if (u.username || u.password) ctx.addIssue({ code: 'custom', message: 'must not carry credentials: the module holds them' });
  if (u.search || u.hash) ctx.addIssue({ code: 'custom', message: 'must not carry a query or fragment: the REST API\'s paths are appended to the URL' });
  // A path is the API's base (a server behind a reverse proxy under a prefix), kept as it is; no path is the root.
  return apiBase(u);
});

const TargetFileSchema = z.array(
  z.strictObject({
    targets: z.array(TargetUrl).min(1, 'list at least one target'),
    /** The module (of `modules:`) whose credentials and options the targets use. */
    module: z.string().min(1).default('default'),
    labels: z.record(LabelName, z.string()).default({}),
    /** Streams each of these targets must always have live (see servers[].expected_streams). */
    expected_streams: ExpectedStreamsSchema.optional(),
  }),
  { error: (issue) => (issue.code === 'invalid_type' ? 'the file must hold a list of {targets, module, labels}' : undefined) },
);

export interface TargetGroup {
  file: string;
  targets: string[];
  module: string;
  labels: Record<string, string>;
  expectedStreams?: ExpectedStream[];
}

/** A target as a problem may show it: without credentials, and short. */
function shownTarget(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const bare = v.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/?#]*@/i, '$1');
  return bare.length > 100 ? `${bare.slice(0, 100)}…` : bare;
}

/** `entry 3 (url ftp://w:21)`: the 1-based entry of a target file, and the target a problem is about (else its first). */
function entryName(doc: unknown, index: number, targetIndex?: number): string {
  const entry = Array.isArray(doc) ? (doc[index] as unknown) : undefined;
  const targets = entry !== null && typeof entry === 'object' && Array.isArray((entry as { targets?: unknown }).targets) ? ((entry as { targets: unknown[] }).targets) : [];
  const url = shownTarget(targets[targetIndex ?? 0]);
  const more = targetIndex === undefined && targets.length > 1 ? ` and ${targets.length - 1} more` : '';
  return `entry ${index + 1}${url === undefined ? '' : ` (url ${url}${more})`}`;
}

/** A target file's problems, each a line naming the file, and the entry and field when it is about one. */
export interface TargetFileCheck {
  groups: TargetGroup[];
  problems: string[];
}

/**
 * Reads one target file and reports every problem in it (`--config.check` shows them all; serve logs them as one
 * message). `groups` is empty when there is any problem: a file is taken whole or not at all.
 */
export function checkTargetFile(path: string, modules: ReadonlySet<string>): TargetFileCheck {
  let text: string;
  try {
    text = readTargetText(path);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { groups: [], problems: [err.message] };
  }
  return checkTargetText(path, text, modules);
}

/** The text of a target file, as a regular file of at most TARGET_FILE_MAX_BYTES; a ConfigError says why not. */
export function readTargetText(path: string): string {
  return readRegularFile(path, 'servers_files', TARGET_FILE_MAX_BYTES, 'a target file').text;
}

/** checkTargetFile of text already read (the target-file thread runs this). */
export function checkTargetText(path: string, text: string, modules: ReadonlySet<string>): TargetFileCheck {
  let doc: unknown;
  try {
    doc = text.trim() === '' ? [] : parseYaml(text);
  } catch (err) {
    return { groups: [], problems: [`${path}: not YAML or JSON: ${(err as Error).message}`] };
  }
  doc ??= [];
  const found: Array<{ entry: number; line: string }> = [];
  const parsed = TargetFileSchema.safeParse(doc);
  for (const issue of parsed.success ? [] : parsed.error.issues) {
    // A bad label name is an issue of the record's key, whose own issue says what is wrong with it.
    const inner = issue.code === 'invalid_key' ? issue.issues[0]?.message : undefined;
    const [index, field, targetIndex] = issue.path;
    if (typeof index !== 'number') {
      found.push({ entry: -1, line: `${issue.path.length ? `${formatPath(issue.path)}: ` : ''}${inner ?? issue.message}` });
      continue;
    }
    const about = field === 'targets' && typeof targetIndex === 'number' ? targetIndex : undefined;
    found.push({ entry: index, line: `${entryName(doc, index, about)}: ${formatPath(issue.path)}: ${inner ?? issue.message}` });
  }
  // Checked on the raw entries, so that a module missing is reported with the entries' other problems.
  if (Array.isArray(doc)) {
    doc.forEach((entry: unknown, i) => {
      if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return;
      const module = (entry as { module?: unknown }).module ?? 'default';
      if (typeof module !== 'string' || module === '' || modules.has(module)) return;
      found.push({ entry: i, line: `${entryName(doc, i)}: [${i}].module: "${module}" is not one of modules: (${[...modules].join(', ') || 'none configured'})` });
    });
  }
  if (found.length > 0 || !parsed.success) {
    return { groups: [], problems: found.sort((a, b) => a.entry - b.entry).map((f) => `${path}: ${f.line}`) };
  }
  const groups = parsed.data.map((g) => {
    const { expected_streams, ...rest } = g;
    return { file: path, ...rest, ...(expected_streams?.length ? { expectedStreams: expected_streams } : {}) };
  });
  return { groups, problems: [] };
}

/** Reads one target file; throws an Error naming the file, and the entry and field of every problem. */
export function readTargetFile(path: string, modules: ReadonlySet<string>): TargetGroup[] {
  const { groups, problems } = checkTargetFile(path, modules);
  if (problems.length === 0) return groups;
  throw new Error(problemsMessage(path, problems));
}

/** One message for the log: the file once, then each problem. */
function problemsMessage(path: string, problems: readonly string[]): string {
  return problems.length === 1 ? problems[0]! : `${path}: ${problems.length} problems: ${problems.map((p) => p.slice(path.length + 2)).join('; ')}`;
}

/** A glob of the file name only (`*`, `?`), as a regular expression; the directory is taken literally. */
export function checkPattern(pattern: string): string | undefined {
  if (/[*?[\]{}]/.test(dirname(pattern))) return `${pattern}: only the file name may hold * and ? (e.g. /etc/wowza-exporter/targets/*.yaml)`;
  return undefined;
}

function fileRegex(pattern: string): RegExp {
  const escaped = basename(pattern).replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]');
  return new RegExp(`^${escaped}$`);
}

/** The files the patterns match now, sorted; a missing directory matches nothing. */
export function matchFiles(patterns: readonly string[]): string[] {
  const files = new Set<string>();
  for (const pattern of patterns) {
    const dir = dirname(pattern);
    const re = fileRegex(pattern);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(dir, name);
      if (!re.test(name)) continue;
      try {
        if (statSync(path).isFile()) files.add(path);
      } catch {
        // removed in between
      }
    }
  }
  return [...files].sort();
}

export interface ServersFilesOptions {
  patterns: readonly string[];
  refreshMs: number;
  modules: ReadonlySet<string>;
  logger: Logger;
  /** A file that could not be read or is not valid (its last good content stays). */
  onError(file: string, message: string): void;
  /** The groups changed. */
  onChange(): void;
  /** Checks a file's text somewhere other than the event loop (a thread) when it is big; inline when not given. */
  checkAway?: (path: string, text: string, modules: ReadonlySet<string>) => Promise<TargetFileCheck>;
}

/**
 * Target files bigger than this are checked by `checkAway`. Parsing YAML costs about 10 ms per 10 KB on the event loop,
 * which also answers /metrics and the health checks: a fleet's file of 10,000 targets (200 KB) held it for seconds.
 */
export const CHECK_AWAY_BYTES = 32 * 1024;

export class ServersFiles {
  private readonly good = new Map<string, TargetGroup[]>();
  private readonly failing = new Map<string, string>();
  /** The text each file had when it was last checked: an unchanged file is not parsed again. */
  private readonly texts = new Map<string, string>();
  private readonly watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  /** Scans run one at a time; one asked for meanwhile runs after it. */
  private scanning: Promise<void> = Promise.resolve();

  constructor(private readonly o: ServersFilesOptions) {}

  /** Every group of every file, in file order. */
  groups(): TargetGroup[] {
    return [...this.good.values()].flat();
  }

  /** Files that are failing now, with why. */
  errors(): ReadonlyMap<string, string> {
    return this.failing;
  }

  /** Reads the files again; tells `onChange` when the groups are not what they were. */
  scan(): Promise<void> {
    this.scanning = this.scanning.then(() => this.scanOnce()).catch((err: unknown) => {
      this.o.logger.error({ err: (err as Error).message }, 'reading the target files failed');
    });
    return this.scanning;
  }

  private async scanOnce(): Promise<void> {
    const before = JSON.stringify(this.groups());
    const files = matchFiles(this.o.patterns);
    for (const known of [...this.good.keys()]) {
      if (files.includes(known)) continue;
      this.good.delete(known);
      this.texts.delete(known);
      this.o.logger.info({ file: known }, 'target file is gone: its servers are no longer polled');
    }
    for (const file of [...this.failing.keys()]) if (!files.includes(file)) this.failing.delete(file);
    for (const file of files) {
      const { groups, problems } = await this.check(file);
      if (problems.length === 0) {
        this.good.set(file, groups);
        if (this.failing.delete(file)) this.o.logger.info({ file }, 'target file is valid again');
        continue;
      }
      const message = problemsMessage(file, problems);
      // Counted on every failed read; logged when the reason changes, not every re-scan.
      this.o.onError(file, message);
      if (this.failing.get(file) !== message) {
        this.o.logger.warn({ file, err: message, kept: this.good.has(file) }, 'target file is broken: keeping its last good content');
      }
      this.failing.set(file, message);
    }
    if (JSON.stringify(this.groups()) !== before) this.o.onChange();
  }

  /** One file's groups or problems; a file whose text has not changed since it was good is not parsed again. */
  private async check(file: string): Promise<TargetFileCheck> {
    let text: string;
    try {
      text = readTargetText(file);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.texts.delete(file);
      return { groups: [], problems: [err.message] };
    }
    const good = this.good.get(file);
    if (good && !this.failing.has(file) && this.texts.get(file) === text) return { groups: good, problems: [] };
    const away = this.o.checkAway && Buffer.byteLength(text) > CHECK_AWAY_BYTES ? this.o.checkAway : undefined;
    const result = away ? await away(file, text, this.o.modules) : checkTargetText(file, text, this.o.modules);
    if (result.problems.length === 0) this.texts.set(file, text);
    else this.texts.delete(file);
    return result;
  }

  /** Watches the directories and re-scans every `refreshMs`. */
  start(): void {
    for (const dir of new Set(this.o.patterns.map((p) => dirname(p)))) {
      try {
        const w = watch(dir, () => this.soon());
        w.on('error', () => undefined); // the periodic re-scan still runs
        this.watchers.push(w);
      } catch {
        // A directory that does not exist yet: the re-scan picks it up.
      }
    }
    this.timer = setInterval(() => void this.scan(), this.o.refreshMs);
    this.timer.unref();
  }

  /** Editors write in several steps: one re-scan shortly after the last event. */
  private soon(): void {
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.scan(), 200);
    this.debounce.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    clearTimeout(this.debounce);
    for (const w of this.watchers.splice(0)) w.close();
  }
}
