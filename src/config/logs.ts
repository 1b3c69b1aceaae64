import { z } from 'zod';
import { Duration, Regex } from './field-types.js';
import { redactUrl } from '../base/redact.js';
import { isKnownZone } from '../base/time-zones.js';
import { DEFAULT_LOG_TYPES, resolveLogType, SERVER_FILTER_FLAGS, SEVERITIES } from '../wowza/log-vocabulary.js';

const SIZE_UNITS: Readonly<Record<string, number>> = { b: 1, kb: 1e3, kib: 1024, mb: 1e6, mib: 1024 ** 2, gb: 1e9, gib: 1024 ** 3 };

/** `1MiB`, `512KiB`, `10MB` or a number of bytes. */
const Bytes = z.union([z.string(), z.number().int().positive()]).transform((v, ctx) => {
  if (typeof v === 'number') return v;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(B|KB|KiB|MB|MiB|GB|GiB)?\s*$/i.exec(v);
  const bytes = m ? Math.round(Number(m[1]) * SIZE_UNITS[(m[2] ?? 'b').toLowerCase()]!) : 0;
  if (!m || bytes <= 0) {
    ctx.addIssue({ code: 'custom', message: `invalid size "${v}": use bytes or a unit like 512KiB, 1MiB` });
    return z.NEVER;
  }
  return bytes;
});

const HttpUrl = z.string().superRefine((v, ctx) => {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    const shown = redactUrl(v);
    ctx.addIssue({ code: 'custom', message: `not a URL${shown.includes('@') ? '' : `: "${shown}"`} (expected like http://127.0.0.1:3100)` });
    return;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: `URL must be http or https, got ${u.protocol}` });
  if (u.username || u.password) ctx.addIssue({ code: 'custom', message: 'credentials do not belong in the URL: use username/password_file or bearer_token_file' });
});

const SinkName = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'sink names use letters, digits, _ . - (at most 64)');

const SinkTls = z.strictObject({
  /** PEM file with the CA that signed the receiver's certificate. */
  ca_file: z.string().min(1).optional(),
  /** Accept any certificate. For test setups only. */
  insecure_skip_verify: z.boolean().default(false),
});

const FIXED_LOKI_LABELS = ['server', 'log_type', 'severity', 'service_name'];

const StdoutSink = z.strictObject({
  type: z.literal('stdout'),
  /** The `sink` label; default the type. Needed when two sinks have the same type. */
  name: SinkName.optional(),
});

const FileSink = z.strictObject({
  type: z.literal('file'),
  name: SinkName.optional(),
  /** NDJSON file appended to. */
  path: z.string().min(1),
  /** Rotated (to `path.1`, `path.2`, ...) before it grows past this. */
  max_bytes: Bytes.prefault('100MiB'),
  /** Rotated files kept. */
  max_files: z.number().int().min(0).max(100).default(5),
});

const LokiSink = z
  .strictObject({
    type: z.literal('loki'),
    name: SinkName.optional(),
    /** Loki base URL (`http://loki:3100`) or the full push URL (`.../loki/api/v1/push`). */
    url: HttpUrl,
    /** Sent as `X-Scope-OrgID` for multi-tenant Loki. */
    tenant_id: z.string().min(1).optional(),
    /** Basic auth user; the password comes from `password_file`. */
    username: z.string().min(1).optional(),
    password_file: z.string().min(1).optional(),
    /** File holding a bearer token (instead of basic auth). */
    bearer_token_file: z.string().min(1).optional(),
    /** Static labels added to every stream (keep them few and constant). */
    labels: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'label names use letters, digits and _ and do not start with a digit'), z.string())
      .default({}),
    /** The `service_name` stream label, which Grafana's Logs Drilldown groups logs by (Loki 3). */
    service_name: z.string().min(1).max(128).default('wowza'),
    /** `gzip` request bodies (Loki takes `Content-Encoding: gzip`), or `none`. */
    compression: z.enum(['gzip', 'none']).default('gzip'),
    /**
     * Record fields sent as structured metadata (Loki 3.0 and later; earlier versions refuse the push): fields too
     * varied to be labels, such as `x-stream-id` or `c-ip`, that queries can still filter on. Off by default.
     */
    structured_metadata: z.array(z.string().min(1).max(64)).max(32).default([]),
    /** Deadline of one push request. */
    timeout: Duration.prefault('10s'),
    tls: SinkTls.optional(),
  })
  .superRefine((s, ctx) => {
    if (s.username && !s.password_file) ctx.addIssue({ code: 'custom', path: ['password_file'], message: 'username needs password_file' });
    if (s.password_file && !s.username) ctx.addIssue({ code: 'custom', path: ['username'], message: 'password_file needs username' });
    if (s.username && s.bearer_token_file) ctx.addIssue({ code: 'custom', path: ['bearer_token_file'], message: 'use basic auth (username/password_file) or bearer_token_file, not both' });
    for (const l of Object.keys(s.labels)) {
      if (l === 'service_name') ctx.addIssue({ code: 'custom', path: ['labels', l], message: 'set it with service_name (default wowza), not under labels' });
      else if (FIXED_LOKI_LABELS.includes(l)) ctx.addIssue({ code: 'custom', path: ['labels', l], message: `"${l}" is set by the shipper and cannot be overridden` });
    }
  });

const HttpSink = z
  .strictObject({
    type: z.literal('http'),
    name: SinkName.optional(),
    /** Receives POSTs of JSON arrays of records. */
    url: HttpUrl,
    /** Extra request headers. Values are never logged; prefer bearer_token_file for credentials. */
    headers: z.record(z.string().regex(/^[A-Za-z0-9-]+$/, 'not a valid header name'), z.string()).default({}),
    /** File holding a token sent as `Authorization: Bearer ...`. */
    bearer_token_file: z.string().min(1).optional(),
    /** Deadline of one request. */
    timeout: Duration.prefault('10s'),
    tls: SinkTls.optional(),
  })
  .superRefine((s, ctx) => {
    const hasAuthHeader = Object.keys(s.headers).some((h) => h.toLowerCase() === 'authorization');
    if (hasAuthHeader && s.bearer_token_file) ctx.addIssue({ code: 'custom', path: ['bearer_token_file'], message: 'headers already set Authorization; drop one of them' });
  });

const Sink = z.discriminatedUnion('type', [StdoutSink, FileSink, LokiSink, HttpSink], {
  error: (issue) => (issue.code === 'invalid_union' ? 'unknown sink type: use stdout, file, loki or http' : undefined),
});

const Sinks = z
  .array(Sink)
  .min(1, 'configure at least one sink')
  .superRefine((sinks, ctx) => {
    const seen = new Map<string, number>();
    sinks.forEach((s, i) => {
      const name = s.name ?? s.type;
      const first = seen.get(name);
      if (first !== undefined) {
        ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `sink name "${name}" is already used by sinks[${first}]: give each sink a unique name` });
      } else seen.set(name, i);
    });
  })
  .transform((sinks) => sinks.map((s) => ({ ...s, name: s.name ?? s.type })));

const IncludeExclude = z.strictObject({
  /** Only records with one of these values pass. */
  include: z.array(z.string().min(1)).optional(),
  /** Records with one of these values are dropped. */
  exclude: z.array(z.string().min(1)).optional(),
});

// `"*"` and `["*"]` mean the same: every type the server lists.
const LogTypes = z
  .union([z.literal('*'), z.array(z.string().min(1)).min(1, 'list at least one log type, or use "*" for all')])
  .transform((v) => (v === '*' || v.includes('*') ? '*' : [...new Set(v.map(resolveLogType))]));

/** The `logs:` section: log followers, their filters, and where the lines go. */
export const LogsConfigSchema = z.strictObject({
  /** JSON file with the read position of every followed log; written atomically after sinks acknowledge. */
  positions_file: z.string().min(1).default('wowza-exporter-positions.json'),
  /** How often acknowledged positions are written to the positions file (and always at shutdown). */
  positions_sync_interval: Duration.prefault('1s'),
  /** Pause between polls of a log once caught up. */
  follow_interval: Duration.prefault('2s'),
  /** Lines asked for per request (the API's `lineCount`). */
  line_count: z.number().int().min(1).max(100_000).default(1000),
  /** Where a log without a saved position starts: `end` (only new lines) or `beginning` (the whole current file). */
  start_at: z.enum(['end', 'beginning']).default('end'),
  /** Log types to follow on every server: names as in `{S}/logs` (`access`, `error`, `stats` are short for `wowzastreamingengine_*`), or `*` for all. */
  log_types: LogTypes.prefault(DEFAULT_LOG_TYPES),
  /** Time zone of lines without a `tz` column (error and stats logs): `UTC`, an offset like `+02:00`, or a region like `Europe/Berlin`. */
  time_zone: z
    .string()
    .refine(isKnownZone, { message: 'unknown time zone: use UTC, an offset like +02:00, or a region like Europe/Berlin' })
    .default('UTC'),
  /** Filters Wowza applies before answering (less traffic). */
  server_filter: z
    .strictObject({
      /** Any of noDebug, noInfo, noWarn, noError, noHeader, noColumnHeadings. */
      flags: z.array(z.enum(SERVER_FILTER_FLAGS)).default([]),
      /** Only lines containing this text. */
      search: z.string().min(1).optional(),
      /** Only lines matching this (Java) regular expression; use it or `search`, not both. */
      regex_search: z.string().min(1).optional(),
    })
    .refine((f) => !(f.search && f.regex_search), { message: 'use search or regex_search, not both', path: ['regex_search'] })
    .prefault({}),
  /** Filters applied by the exporter after parsing; dropped lines still count in wowza_log_lines_total. */
  filters: z
    .strictObject({
      /** Drop records below this severity (debug < info < warn < error); records without one pass. */
      min_severity: z.string().toLowerCase().pipe(z.enum(SEVERITIES)).optional(),
      /** By `x-category` (server, vhost, application, session, stream, rtsp). */
      categories: IncludeExclude.optional(),
      /** By `x-event` (connect, play, publish, ...). */
      events: IncludeExclude.optional(),
      /** By `x-app` (application name, case-sensitive). */
      applications: IncludeExclude.optional(),
      /** Keep only records where every listed field matches its regular expression (searched, not anchored). */
      field_regex: z.record(z.string().min(1), Regex).default({}),
      /** Drop records where any listed field matches its regular expression. */
      exclude_field_regex: z.record(z.string().min(1), Regex).default({}),
    })
    .prefault({}),
  /** Blank credentials in URLs (`rtsp://user:pass@...`) and token-like query values before lines are shipped. */
  redact_secrets: z.boolean().default(true),
  /** Where lines go; all at once. A line counts as delivered when every sink has it. */
  sinks: Sinks.prefault([{ type: 'stdout' }]),
  /** A batch is sent when it reaches max_lines or max_bytes, or its oldest line waited max_wait. */
  batch: z
    .strictObject({
      max_lines: z.number().int().min(1).max(100_000).default(1000),
      max_bytes: Bytes.prefault('1MiB'),
      max_wait: Duration.prefault('1s'),
    })
    .prefault({}),
  /** Retries of failed sends (network errors, 429, 5xx): exponential backoff with jitter, Retry-After honoured. */
  retry: z
    .strictObject({
      min_backoff: Duration.prefault('500ms'),
      max_backoff: Duration.prefault('30s'),
      /** Retries before a batch is dead-lettered; unset retries for ever (followers pause meanwhile). */
      max_retries: z.number().int().min(0).optional(),
    })
    .prefault({})
    .refine((r) => r.min_backoff <= r.max_backoff, { message: 'min_backoff must not exceed max_backoff', path: ['min_backoff'] }),
  /**
   * Worker threads that parse log lines and write them as JSON while a backlog is read (pages of 200 lines
   * or more), at most the CPUs less one and none on one or two CPUs; 0 does all of it on the event loop. Threads
   * start on first use.
   */
  parse_threads: z.number().int().min(0).max(16).default(2),
  /** Lines each sink may hold (queued or in flight); when full, followers stop polling until there is room. */
  queue_lines: z.number().int().min(1).default(10_000),
  /**
   * Bytes of lines each sink may hold (queued or in flight: the lines and what is written for the sink); when full,
   * followers stop polling until there is room. A single line larger than this is still taken, alone.
   */
  max_queue_bytes: Bytes.prefault('64MiB'),
  /** NDJSON file for lines a sink refused for good (4xx other than 429) or gave up on. */
  dead_letter_file: z.string().min(1).default('wowza-exporter-dead-letter.ndjson'),
  /** At shutdown, how long sinks may take to deliver what is queued before the rest is left for the next start. */
  drain_timeout: Duration.prefault('10s'),
});

export type LogsConfigInput = z.input<typeof LogsConfigSchema>;
export type LogsConfig = z.output<typeof LogsConfigSchema>;
export type LogSinkConfig = LogsConfig['sinks'][number];
