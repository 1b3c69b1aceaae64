import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseYaml } from './yaml.js';
import type { z } from 'zod';
import type { WowzaTarget } from '../wowza/client.js';
import type { ExpectedStream } from '../wowza/expected-stream.js';
import { basePath } from '../wowza/api-url.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, defaultRequestTimeoutMs, pollDeadlineMs } from './poll-deadline.js';
import { ConfigError, describeIssues, formatPath } from './errors.js';
import { parseShard } from './shard.js';
import { COLLECTOR_NAMES, ConfigSchema, type CollectorName, type Config, type ModuleConfig, type ServerConfig } from './schema.js';
import { ConfigProblems } from './problems.js';
import { readSecretFile } from './secrets.js';
import { checkTargetFile, matchFiles } from './servers-files.js';
import { CA_FILE_MAX_BYTES, checkRegularFile, CONFIG_FILE_MAX_BYTES, readRegularFile } from './read-file.js';
import { isUsableToken, resolveVideoToken, VIDEO_TOKEN_ENV } from './video-token.js';

/** The command-line flags that map onto config keys (undefined = not given, the file or default applies). */
export interface ConfigFlags {
  config?: string;
  wowzaUrl?: string[];
  wowzaUsername?: string;
  wowzaPasswordFile?: string;
  wowzaAuth?: string;
  wowzaTimeout?: string;
  wowzaInsecureSkipVerify?: boolean;
  wowzaCaFile?: string;
  /** One per `--wowza.url`, in the same order. */
  wowzaConnectionCountsUrl?: string[];
  /** `--shard i/N`. */
  shard?: string;
  listenAddress?: string[];
  telemetryPath?: string;
  webSystemdSocket?: boolean;
  webConfigFile?: string;
  webEnableLifecycle?: boolean;
  webAllowedHosts?: string[];
  webMaxConnections?: number;
  pollInterval?: string;
  pollConcurrency?: number | 'auto';
  pollMaxRequestsPerSecond?: number;
  logLevel?: string;
  logProbeLevel?: string;
  logFormat?: string;
  collectors?: Partial<Record<CollectorName, boolean>>;
  videoUrl?: string;
  videoTokenFile?: string;
}

const DEFAULT_URL = 'http://127.0.0.1:8087';

export type Warn = (msg: string, meta: object) => void;

export interface ProbeModule {
  config: ModuleConfig;
  password?: string;
  allowed: RegExp[];
}

export interface RuntimeConfig {
  config: Config;
  /** The servers as the collectors poll them (request timeout within the poll deadline). */
  servers: WowzaTarget[];
  /** The same servers for log following, whose requests the poll interval does not bound. */
  logServers: WowzaTarget[];
  modules: Map<string, ProbeModule>;
  videoToken?: string;
  webhookSecret?: string;
  /** Enabled state and interval (ms) per collector; `own`: the interval was configured for the collector itself. */
  collectors: Record<CollectorName, { enabled: boolean; intervalMs: number; own: boolean }>;
  /** The collector that polls most often, whose deadline every request must fit in. */
  fastest: { intervalMs: number; key: string };
}

/** A server of a target file: as the collectors poll it, and as log followers read it. */
export interface FileTarget {
  target: WowzaTarget;
  logTarget: WowzaTarget;
}

/**
 * A target of a target file, with the credentials and options of its module and the file's labels. Throws
 * ConfigError naming the module when its timeout cannot fit the poll deadline.
 */
export function fileTarget(runtime: RuntimeConfig, moduleName: string, url: string, labels: Record<string, string>, expectedStreams?: readonly ExpectedStream[]): FileTarget {
  const module = runtime.modules.get(moduleName);
  if (!module) throw new ConfigError(`module "${moduleName}" is not configured`);
  const m = module.config;
  const timeoutMs = requestTimeout({ ...m, timeout: m.timeout }, `modules.${moduleName}`, runtime.config, runtime.fastest);
  const target: WowzaTarget = {
    name: defaultServerName(url),
    url,
    username: m.username,
    password: module.password,
    auth: m.auth,
    timeoutMs,
    maxResponseBytes: m.max_response_size,
    maxListItems: m.max_list_items,
    tls: { caFile: m.tls.ca_file, insecureSkipVerify: m.tls.insecure_skip_verify },
    serverName: m.server_name,
    connections: connectionsFor(runtime.config),
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    ...(expectedStreams?.length ? { expectedStreams } : {}),
  };
  return { target, logTarget: { ...target, timeoutMs: m.timeout ?? runtime.config.poll.timeout ?? DEFAULT_REQUEST_TIMEOUT_MS } };
}

/** The `stream_target` collector's interval unless set for it (or the poll interval, when longer). */
export const STREAM_TARGET_INTERVAL_MS = 30_000;

/** The `stream` collector's interval when viewers come from connectioncounts and none was set for it. */
export const STREAM_INTERVAL_WITH_COUNTS_MS = 60_000;

/** Whether `target`'s viewer counts come from its connectioncounts provider. */
export function readsConnectionCounts(runtime: Pick<RuntimeConfig, 'collectors'>, target: WowzaTarget): boolean {
  return target.connectionCountsUrl !== undefined && runtime.collectors.connectioncounts.enabled;
}

/**
 * How often `collector` polls `target`. With connectioncounts the `stream` collector only reads bytes and
 * uptime, which need not be as fresh: 60 s (or the poll interval when longer), unless set for it.
 */
export function intervalFor(runtime: Pick<RuntimeConfig, 'collectors'>, collector: CollectorName, target: WowzaTarget): number {
  const c = runtime.collectors[collector];
  if (collector === 'stream' && !c.own && readsConnectionCounts(runtime, target)) return Math.max(c.intervalMs, STREAM_INTERVAL_WITH_COUNTS_MS);
  return c.intervalMs;
}

/** Collectors that run unless turned off; `logs` and `video` need configuration first. */
const DEFAULT_ENABLED: Record<CollectorName, boolean> = {
  machine: true,
  status: true,
  vhost: true,
  application: true,
  instance: true,
  stream: true,
  recorder: true,
  stream_target: true,
  connectioncounts: true,
  logs: true,
  video: true,
};

function readConfigFile(path: string): Record<string, unknown> {
  const { text } = readRegularFile(path, '--config', CONFIG_FILE_MAX_BYTES, 'a config file');
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`${path}: invalid YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  // Only keys are ever named back (as unknown keys), so a file given by mistake (a symlink to /etc/shadow, whose
  // lines read as YAML keys) is refused whole, without its content (issue 47).
  const notMapping = typeof doc !== 'object' || Array.isArray(doc);
  const odd = notMapping ? 0 : Object.keys(doc).filter((k) => !KEY_NAME.test(k)).length;
  if (notMapping || odd > 0) {
    throw new ConfigError(`${path}: the top level must be a mapping of config keys (servers:, poll:, ...); ${notMapping ? 'this file is not a YAML mapping' : `${odd} of its keys ${odd === 1 ? 'is not a key name' : 'are not key names'}`} (its content is not shown)`);
  }
  return doc as Record<string, unknown>;
}

/** What a config key may look like, typos included: letters, digits, _ . - and spaces, never a colon or a slash. */
const KEY_NAME = /^[A-Za-z_][\w .-]{0,63}$/;

const isMapping = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function obj(parent: Record<string, unknown>, key: string): Record<string, unknown> {
  const v = parent[key];
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  const fresh: Record<string, unknown> = {};
  if (v === undefined) parent[key] = fresh;
  else return fresh; // a wrong type stays for the schema to report
  return fresh;
}

/** Flags win over the file: applies them onto the raw document before validation. */
function applyFlags(doc: Record<string, unknown>, f: ConfigFlags): void {
  const connection: Record<string, unknown> = {};
  if (f.wowzaUsername !== undefined) connection.username = f.wowzaUsername;
  if (f.wowzaPasswordFile !== undefined) connection.password_file = f.wowzaPasswordFile;
  if (f.wowzaAuth !== undefined) connection.auth = f.wowzaAuth;
  if (f.wowzaTimeout !== undefined) connection.timeout = f.wowzaTimeout;
  const tls: Record<string, unknown> = {};
  if (f.wowzaCaFile !== undefined) tls.ca_file = f.wowzaCaFile;
  if (f.wowzaInsecureSkipVerify !== undefined) tls.insecure_skip_verify = f.wowzaInsecureSkipVerify;

  // Without servers in the file (and none from target files or /probe modules), the flags describe the one default server.
  const elsewhere = (Array.isArray(doc.servers_files) && doc.servers_files.length > 0) || (isMapping(doc.modules) && Object.keys(doc.modules).length > 0);
  const urls = f.wowzaUrl && f.wowzaUrl.length > 0 ? f.wowzaUrl : doc.servers === undefined && !elsewhere ? [DEFAULT_URL] : undefined;
  const counts = f.wowzaConnectionCountsUrl ?? [];
  if (counts.length > 0 && counts.length !== (urls ?? (Array.isArray(doc.servers) ? doc.servers : [])).length) {
    throw new ConfigError(`--wowza.connectioncounts-url: give one per server (${counts.length} for ${(urls ?? (doc.servers as unknown[] | undefined) ?? []).length}), in the order of --wowza.url`);
  }
  if (urls) {
    doc.servers = urls.map((url, i) => ({ url, ...connection, ...(Object.keys(tls).length ? { tls } : {}), ...(counts[i] ? { connectioncounts_url: counts[i] } : {}) }));
  } else if (Array.isArray(doc.servers)) {
    counts.forEach((c, i) => {
      const s = (doc.servers as Array<Record<string, unknown>>)[i];
      if (s !== null && typeof s === 'object') s.connectioncounts_url = c;
    });
    for (const s of doc.servers as Array<Record<string, unknown>>) {
      if (s === null || typeof s !== 'object') continue;
      Object.assign(s, connection);
      if (Object.keys(tls).length) s.tls = { ...(typeof s.tls === 'object' && s.tls ? s.tls : {}), ...tls };
    }
  }
  if (f.shard !== undefined) {
    try {
      doc.shard = parseShard(f.shard);
    } catch (err) {
      throw new ConfigError(`--shard: ${(err as Error).message}`);
    }
  }
  if (f.listenAddress !== undefined && f.listenAddress.length > 0) obj(doc, 'web').listen_address = f.listenAddress.length === 1 ? f.listenAddress[0] : f.listenAddress;
  if (f.telemetryPath !== undefined) obj(doc, 'web').telemetry_path = f.telemetryPath;
  if (f.webSystemdSocket !== undefined) obj(doc, 'web').systemd_socket = f.webSystemdSocket;
  if (f.webConfigFile !== undefined) obj(doc, 'web').config_file = f.webConfigFile;
  if (f.webEnableLifecycle !== undefined) obj(doc, 'web').enable_lifecycle = f.webEnableLifecycle;
  if (f.webAllowedHosts !== undefined && f.webAllowedHosts.length > 0) obj(doc, 'web').allowed_hosts = f.webAllowedHosts;
  if (f.webMaxConnections !== undefined) obj(doc, 'web').max_connections = f.webMaxConnections;
  if (f.pollInterval !== undefined) obj(doc, 'poll').interval = f.pollInterval;
  if (f.pollConcurrency !== undefined) obj(doc, 'poll').concurrency = f.pollConcurrency;
  if (f.pollMaxRequestsPerSecond !== undefined) obj(doc, 'poll').max_requests_per_second = f.pollMaxRequestsPerSecond;
  if (f.logLevel !== undefined) obj(doc, 'log').level = f.logLevel;
  if (f.logFormat !== undefined) obj(doc, 'log').format = f.logFormat;
  if (f.logProbeLevel !== undefined) obj(doc, 'log').probe_level = f.logProbeLevel;
  if (f.videoUrl !== undefined) obj(doc, 'video').url = f.videoUrl;
  if (f.videoTokenFile !== undefined) obj(doc, 'video').token_file = f.videoTokenFile;
  for (const [name, on] of Object.entries(f.collectors ?? {})) {
    if (on === undefined) continue;
    const collectors = obj(doc, 'collectors');
    const current = collectors[name];
    collectors[name] = current !== null && typeof current === 'object' ? { ...current, enabled: on } : on;
  }
}

/** Keys a mapping at `path` accepts, for "did you mean" hints. */
function knownKeysAt(path: ReadonlyArray<PropertyKey>): string[] {
  let schema: z.ZodType = ConfigSchema;
  for (const p of path) {
    schema = unwrap(schema);
    const def = (schema as unknown as { def: Record<string, unknown> }).def;
    if (typeof p === 'number' && def.type === 'array') schema = def.element as z.ZodType;
    else if (def.type === 'object') schema = (def.shape as Record<string, z.ZodType>)[String(p)] ?? schema;
    else if (def.type === 'record') schema = def.valueType as z.ZodType;
  }
  const def = (unwrap(schema) as unknown as { def: Record<string, unknown> }).def;
  if (def.type === 'object') return Object.keys(def.shape as object);
  // A record keyed by an enum (collectors): its names are the known keys.
  const keys = def.type === 'record' ? (def.keyType as { def: { type: string; entries?: Record<string, string> } }).def : undefined;
  return keys?.type === 'enum' ? Object.values(keys.entries ?? {}) : [];
}

function unwrap(s: z.ZodType): z.ZodType {
  let cur = s as unknown as { def: { type: string; innerType?: z.ZodType; in?: z.ZodType } };
  for (let i = 0; i < 10; i++) {
    if (cur.def.innerType) cur = cur.def.innerType as never;
    else if (cur.def.type === 'pipe' && cur.def.in) cur = cur.def.in as never;
    else break;
  }
  return cur as unknown as z.ZodType;
}

export function defaultServerName(url: string): string {
  const u = new URL(url);
  // With the URL's path, if any: servers behind one reverse proxy under prefixes are told apart.
  return `${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}${basePath(u)}`;
}

/** Validates the merged document into a Config, or gives a `key: problem` line per bad key. */
function validate(doc: Record<string, unknown>): { config: Config; issues?: undefined } | { config?: undefined; issues: string[] } {
  const parsed = ConfigSchema.safeParse(doc);
  return parsed.success ? { config: parsed.data } : { issues: describeIssues(parsed.error, knownKeysAt) };
}

/** Validates the merged document (file, then flags) into a Config, or throws ConfigError naming each bad key. */
export function parseConfig(doc: Record<string, unknown>, source = 'config'): Config {
  const { config, issues } = validate(doc);
  if (issues) throw new ConfigError(`invalid ${source}:\n  ${issues.join('\n  ')}`);
  return config;
}

export function loadConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv = process.env, warn: Warn = () => {}): RuntimeConfig {
  const doc = flags.config ? readConfigFile(flags.config) : {};
  applyFlags(doc, flags);
  const config = parseConfig(doc, flags.config ? `config ${flags.config}` : 'flags');
  return resolveConfig(config, env, warn);
}

/**
 * `--config.check`: every problem of the config file and flags, and of the target files they match, one line each,
 * without starting anything or asking any server. When the schema fails, the files its keys name are still checked (readable or not), so a bad key and a
 * missing file show up in the same run.
 */
export function checkConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv = process.env, warn: Warn = () => {}): { problems: string[]; config?: Config } {
  const problems = new ConfigProblems();
  const doc = problems.attempt(() => {
    const d = flags.config ? readConfigFile(flags.config) : {};
    applyFlags(d, flags);
    return d;
  });
  if (!doc) return { problems: problems.lines };
  const { config, issues } = validate(doc);
  if (issues) {
    for (const line of issues) problems.add(line);
    for (const [field, path] of namedInputFiles(doc)) problems.attempt(() => checkReadable(path, field));
    return { problems: problems.lines };
  }
  checkServersFiles(resolveConfig(config, env, warn, problems), problems);
  return { problems: problems.lines, config };
}

/**
 * The target files `servers_files` matches now, read by serve's own reader: every problem of every file, each naming
 * its file and entry, and a module whose timeout cannot fit the poll deadline (once, at the first entry using it).
 */
function checkServersFiles(runtime: RuntimeConfig, problems: ConfigProblems): void {
  const modules = new Set(runtime.modules.keys());
  const reported = new Set<string>();
  for (const file of matchFiles(runtime.config.servers_files)) {
    const checked = checkTargetFile(file, modules);
    for (const line of checked.problems) problems.add(line);
    checked.groups.forEach((g, i) => {
      if (reported.has(g.module)) return;
      try {
        fileTarget(runtime, g.module, g.targets[0]!, g.labels);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        reported.add(g.module);
        problems.add(`${file}: entry ${i + 1} (module ${g.module}): ${err.message}`);
      }
    });
  }
}

/** Keys whose value is a file the exporter reads (secrets, CAs, web config), wherever they are in the document. */
const INPUT_FILE_KEYS = new Set(['password_file', 'bearer_token_file', 'secret_file', 'token_file', 'ca_file', 'config_file']);

/** `[key path, file]` for every input-file key of a raw (unvalidated) document. */
function namedInputFiles(node: unknown, at: Array<string | number> = []): Array<[string, string]> {
  if (Array.isArray(node)) return node.flatMap((item, i) => namedInputFiles(item, [...at, i]));
  if (!isMapping(node)) return [];
  return Object.entries(node).flatMap(([key, value]): Array<[string, string]> =>
    INPUT_FILE_KEYS.has(key) && typeof value === 'string' && value !== '' ? [[formatPath([...at, key]), value]] : namedInputFiles(value, [...at, key]),
  );
}

/**
 * Reads secret files, fills defaults that depend on other keys, and checks cross-field rules. Every problem is
 * gathered into `problems` when given; otherwise a ConfigError lists them all (nothing is half-started).
 */
export function resolveConfig(config: Config, env: NodeJS.ProcessEnv = process.env, warn: Warn = () => {}, gathered?: ConfigProblems): RuntimeConfig {
  const problems = gathered ?? new ConfigProblems();
  const ownInterval = (n: CollectorName) => {
    const t = config.collectors[n];
    return typeof t === 'object' ? t.interval : undefined;
  };
  const intervalOf = (n: CollectorName) =>
    ownInterval(n) ?? (n === 'video' ? config.video.interval : n === 'stream_target' ? Math.max(STREAM_TARGET_INTERVAL_MS, config.poll.interval) : config.poll.interval);
  const enabledOf = (n: CollectorName) => {
    const t = config.collectors[n];
    if (t === undefined) return DEFAULT_ENABLED[n];
    return typeof t === 'boolean' ? t : t.enabled;
  };
  const collectors = Object.fromEntries(
    COLLECTOR_NAMES.map((n) => [n, { enabled: enabledOf(n), intervalMs: intervalOf(n), own: ownInterval(n) !== undefined }]),
  ) as RuntimeConfig['collectors'];
  const fastest = fastestPoll(config, collectors);

  // No servers key: the default local server, unless the servers come from target files or /probe modules.
  const fromElsewhere = config.servers_files.length > 0 || Object.keys(config.modules).length > 0;
  const servers = config.servers ?? (fromElsewhere ? [] : [ConfigSchemaServerDefault()]);
  const names = new Set<string>();
  const logServers: WowzaTarget[] = [];
  const targets = servers.map((s, i) => {
    const name = s.name ?? defaultServerName(s.url);
    if (names.has(name)) problems.add(`servers[${i}].name: "${name}" is used twice; give each server a unique name`);
    names.add(name);
    const field = `servers[${i}]`;
    const timeoutMs = problems.attempt(() => requestTimeout(s, field, config, fastest)) ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const target = toTarget(s, name, field, timeoutMs, config, env, warn, problems);
    // Log reads run on their own schedule: the poll interval does not bound them.
    logServers.push({ ...target, timeoutMs: s.timeout ?? config.poll.timeout ?? DEFAULT_REQUEST_TIMEOUT_MS });
    return target;
  });

  const modules = new Map<string, ProbeModule>();
  for (const [name, m] of Object.entries(config.modules)) {
    problems.attempt(() => checkCaFile(m.tls.ca_file, `modules.${name}.tls.ca_file`));
    const password = m.password_file ? problems.attempt(() => readSecretFile(m.password_file!, `modules.${name}.password_file`, warn)) : env.WOWZA_PASSWORD;
    modules.set(name, { config: m, password, allowed: m.allowed_targets.map((p) => new RegExp(`^(?:${p})$`)) });
  }

  // The video collector is optional: it runs only when a token is configured.
  const videoToken = config.video.token_file
    ? problems.attempt(() => readVideoTokenFile(config.video.token_file!, warn))
    : env[VIDEO_TOKEN_ENV]
      ? resolveVideoToken({ env, warn })
      : undefined;
  if (!videoToken) collectors.video.enabled = false;

  // Read only for a receiver that runs: a secret for a disabled one is no file the user must provide.
  const webhookSecret =
    config.webhooks.enabled && config.webhooks.secret_file ? problems.attempt(() => readSecretFile(config.webhooks.secret_file!, 'webhooks.secret_file', warn)) : undefined;

  if (config.logs) {
    problems.attempt(() => checkFilePath(config.logs!.positions_file, 'logs.positions_file'));
    problems.attempt(() => checkFilePath(config.logs!.dead_letter_file, 'logs.dead_letter_file'));
    config.logs.sinks.forEach((s, i) => {
      const field = `logs.sinks[${i}]`;
      if (s.type === 'file') problems.attempt(() => checkFilePath(s.path, `${field}.path`));
      // The sinks read their secrets (and warn about their modes) when the exporter starts them; a missing one is
      // reported here with the others.
      if (s.type === 'loki' && s.password_file) problems.attempt(() => readSecretFile(s.password_file!, `${field}.password_file`));
      if ((s.type === 'loki' || s.type === 'http') && s.bearer_token_file) problems.attempt(() => readSecretFile(s.bearer_token_file!, `${field}.bearer_token_file`));
      if ((s.type === 'loki' || s.type === 'http') && s.tls?.ca_file) problems.attempt(() => checkCaFile(s.tls!.ca_file, `${field}.tls.ca_file`));
    });
  }

  if (!gathered) problems.throwIfAny();
  return { config, servers: targets, logServers, modules, videoToken, webhookSecret, collectors, fastest };
}

/**
 * The transport reads the CA file when it builds its connection pool, and fails there with a bare
 * ENOENT; checking it here makes a wrong path, or a file that is not PEM, a config error naming the key.
 */
function checkCaFile(path: string | undefined, field: string): void {
  if (path === undefined) return;
  const { text } = readRegularFile(path, field, CA_FILE_MAX_BYTES, 'a PEM CA file');
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError(`${field}: ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
}

/** The Wowza Video token from `video.token_file` (or `--video.token-file`), named by that key in errors. */
function readVideoTokenFile(path: string, warn: Warn): string {
  const token = readSecretFile(path, 'video.token_file', warn).trim();
  if (!isUsableToken(token)) throw new ConfigError('video.token_file: the token contains whitespace or control characters; expected the JWT access token alone');
  return token;
}

/** A file the exporter reads (used when the schema failed, and with it the checks of each file's content). */
function checkReadable(path: string, field: string): void {
  checkRegularFile(path, field, 'a file');
}

/**
 * A file the exporter writes later: a directory in its place, or a file where one of its directories should be,
 * would only fail at the first write. Missing directories are fine: they are created (mkdir -p) then.
 */
function checkFilePath(path: string, field: string): void {
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    // Not there yet: created on the first write, as are its missing directories, unless a file stands in their place.
    for (let dir = dirname(resolve(path)); ; dir = dirname(dir)) {
      let stats;
      try {
        stats = statSync(dir);
      } catch {
        if (dirname(dir) === dir) return;
        continue;
      }
      if (!stats.isDirectory()) throw new ConfigError(`${field}: cannot create the directory of ${path}: ${dir} is a file, not a directory`);
      return;
    }
  }
  if (isDirectory) throw new ConfigError(`${field}: ${path} is a directory; give the path of a file`);
}

function ConfigSchemaServerDefault(): ServerConfig {
  return ConfigSchema.shape.servers.parse([{ url: DEFAULT_URL }])![0]!;
}

/** The WSE collector that polls most often, whose poll deadline every request of a server must fit in. */
function fastestPoll(config: Config, collectors: RuntimeConfig['collectors']): { intervalMs: number; key: string } {
  let best = { intervalMs: config.poll.interval, key: 'poll.interval' };
  let any = false;
  for (const name of COLLECTOR_NAMES) {
    if (name === 'logs' || name === 'video' || !collectors[name].enabled) continue;
    const own = config.collectors[name];
    const key = typeof own === 'object' && own.interval !== undefined ? `collectors.${name}.interval` : 'poll.interval';
    if (!any || collectors[name].intervalMs < best.intervalMs) best = { intervalMs: collectors[name].intervalMs, key };
    any = true;
  }
  return best;
}

/**
 * A configured timeout (the server's, else `poll.timeout`) must end before the poll deadline of the fastest
 * collector, or every slow request would be cut by the poll instead; without one, the default follows the
 * interval, so any interval from 1 s up works on its own.
 */
function requestTimeout(s: { timeout?: number }, field: string, config: Config, fastest: { intervalMs: number; key: string }): number {
  const explicit = s.timeout ?? config.poll.timeout;
  if (explicit === undefined) return defaultRequestTimeoutMs(fastest.intervalMs);
  const deadline = pollDeadlineMs(fastest.intervalMs);
  if (explicit >= deadline) {
    const key = s.timeout !== undefined ? `${field}.timeout` : 'poll.timeout';
    throw new ConfigError(
      `${key}: the request timeout (${formatMs(explicit)}) must be shorter than the poll deadline of ${fastest.key} ` +
        `${formatMs(fastest.intervalMs)} (${formatMs(deadline)}, 90 % of it); shorten ${key}, lengthen ${fastest.key}, or leave the timeout unset to follow the interval`,
    );
  }
  return explicit;
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function toTarget(s: ServerConfig, name: string, field: string, timeoutMs: number, config: Config, env: NodeJS.ProcessEnv, warn: Warn, problems: ConfigProblems): WowzaTarget {
  problems.attempt(() => checkCaFile(s.tls.ca_file, `${field}.tls.ca_file`));
  const password = s.password_file ? problems.attempt(() => readSecretFile(s.password_file!, `${field}.password_file`, warn)) : env.WOWZA_PASSWORD;
  return {
    name,
    url: s.url,
    username: s.username,
    password,
    auth: s.auth,
    timeoutMs,
    maxResponseBytes: s.max_response_size,
    maxListItems: s.max_list_items,
    tls: { caFile: s.tls.ca_file, insecureSkipVerify: s.tls.insecure_skip_verify },
    serverName: s.server_name,
    connections: connectionsFor(config),
    ...(s.connectioncounts_url === 'off' ? {} : s.connectioncounts_url ? { connectionCountsUrl: s.connectioncounts_url } : { connectionCountsAuto: true }),
    ...(s.expected_streams?.length ? { expectedStreams: s.expected_streams } : {}),
    ...(s.log_time_zone ? { logTimeZone: s.log_time_zone } : {}),
  };
}

/** Every address `web.listen_address` names (one or a list). */
export function listenAddresses(config: Config): string[] {
  const a = config.web.listen_address;
  return Array.isArray(a) ? a : [a];
}

/** Sockets per server: as many as requests may be in flight, so none waits for a socket inside the client. */
export function connectionsFor(config: Config): number {
  return config.poll.concurrency === 'auto' ? config.poll.concurrency_max : config.poll.concurrency;
}

/** A probe target built from a module: the URL comes from the request, everything else from the module. */
export function moduleTarget(module: ProbeModule, url: string, timeoutMs: number, connections: number): WowzaTarget {
  const m = module.config;
  return {
    name: defaultServerName(url),
    url,
    username: m.username,
    password: module.password,
    auth: m.auth,
    timeoutMs: Math.min(m.timeout ?? timeoutMs, timeoutMs),
    maxResponseBytes: m.max_response_size,
    maxListItems: m.max_list_items,
    tls: { caFile: m.tls.ca_file, insecureSkipVerify: m.tls.insecure_skip_verify },
    serverName: m.server_name,
    connections,
  };
}
