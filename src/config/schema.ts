import { isIP } from 'node:net';
import { z } from 'zod';
import { ByteSize, Duration, Regex } from './field-types.js';
import { ExpectedStreamsSchema } from './expected-streams.js';
import { LogsConfigSchema } from './logs.js';
import { isKnownZone } from '../base/time-zones.js';
import { redactUrl } from '../base/redact.js';
import { parseListenAddress } from './listen-address.js';
import { checkPattern } from './servers-files.js';

/** An http(s) URL without user info; `example` shows the expected form, `credentials` where secrets go instead. */
function httpUrl(example: string, credentials: string) {
  return z.string().superRefine((v, ctx) => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      // Shown only without user info: a URL that fails to parse may still hold a password.
      const shown = redactUrl(v);
      ctx.addIssue({ code: 'custom', message: `not a URL${shown.includes('@') ? '' : `: "${shown}"`} (expected like ${example})` });
      return;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: `URL must be http or https, got ${u.protocol}` });
    if (u.username || u.password) ctx.addIssue({ code: 'custom', message: `credentials do not belong in the URL: ${credentials}` });
  });
}

export const AuthModeSchema = z.enum(['auto', 'basic', 'digest']);

export const TlsSchema = z.strictObject({
  /** PEM file with the CA (or the self-signed certificate) that signed the server's certificate. */
  ca_file: z.string().min(1).optional(),
  /** Accept any certificate. For test servers only. */
  insecure_skip_verify: z.boolean().default(false),
});

/** How to reach and authenticate against one WSE server. */
const Connection = {
  username: z.string().optional(),
  /** File holding the password (trailing newline ignored). Falls back to env WOWZA_PASSWORD. */
  password_file: z.string().min(1).optional(),
  auth: AuthModeSchema.default('auto'),
  /** Deadline for one API request, headers and body. */
  timeout: Duration.optional(),
  /** The `{serverName}` path segment of the API. */
  server_name: z.string().min(1).default('_defaultServer_'),
  tls: TlsSchema.default({ insecure_skip_verify: false }),
  /** Responses larger than this are refused while streaming. */
  max_response_size: ByteSize.default(32 * 1024 * 1024),
  /** Items one list of an answer may hold; the rest are left out, counted and logged once. */
  max_list_items: z.number().int().positive().default(100_000),
};

const ListenAddress = z.string().superRefine((v, ctx) => {
  try {
    parseListenAddress(v);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
  }
});

/** A host name or IP address, as a Host header names it (no scheme, port or path). */
const HostName = z.string().refine((v) => /^(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?$/.test(v) || isIP(v.replace(/^\[(.*)\]$/, '$1')) !== 0, {
  error: (i) => `not a host name or IP address: ${JSON.stringify(String(i.input).slice(0, 100))} (no scheme, port or path, e.g. exporter.example.com)`,
});

/** Paths the exporter serves itself: the metrics cannot move onto one of them. */
const RESERVED_PATHS = new Set(['/', '/-/healthy', '/-/ready', '/-/reload', '/probe', '/api/v1/status', '/favicon.ico']);

export const ServerSchema = z.strictObject({
  /** The `server` label; default `host:port` of the URL, followed by its path if it has one. */
  name: z.string().min(1).optional(),
  /** The REST API's address; a path is the API's base (an install behind a reverse proxy under a prefix). */
  url: httpUrl('http://127.0.0.1:8087', 'use username and password_file').superRefine((v, ctx) => {
    const u = URL.canParse(v) ? new URL(v) : undefined;
    if (u && (u.search || u.hash)) ctx.addIssue({ code: 'custom', message: 'must not carry a query or fragment: the REST API\'s paths are appended to the URL (a path is kept as the API\'s base)' });
  }),
  /**
   * The server's connectioncounts provider (admin port, 8086 by default): per-stream viewers for every stream in
   * one request, so the REST `stream` collector only reads bytes and uptime, every 60 s unless set otherwise.
   */
  // Unset: `<scheme>://<host>:8086/connectioncounts` is tried at start and every 10 minutes; `off` never.
  connectioncounts_url: z.union([z.literal('off'), httpUrl('http://127.0.0.1:8086/connectioncounts', 'the server\'s username and password_file are used')]).optional(),
  /** Streams that must always be live (`application/stream`): wowza_stream_expected, and an alert when one is not. */
  expected_streams: ExpectedStreamsSchema.optional(),
  /**
   * Zone of this server's log lines that have no `tz` column (error and stats logs), e.g. `Asia/Kolkata`: overrides
   * the zone the file's `#Start-Date` header names. Unset: the header's zone, else logs.time_zone.
   */
  log_time_zone: z.string().refine(isKnownZone, { message: 'unknown time zone: use a region like Asia/Kolkata, UTC, or an offset like +05:30' }).optional(),
  ...Connection,
});

export const ModuleSchema = z.strictObject({
  ...Connection,
  /**
   * Regular expressions (anchored) a /probe target URL must match before this module's credentials are
   * sent to it: a probe endpoint must not hand credentials to any URL a caller names. Without any, the module
   * serves only target files (servers_files), and /probe refuses it.
   */
  allowed_targets: z.array(Regex).default([]),
});

const NameFilter = z
  .strictObject({
    /** Only names matching this (anchored) regex are kept. */
    include: Regex.optional(),
    /** Names matching this (anchored) regex are dropped. */
    exclude: Regex.optional(),
  })
  .default({});

const CollectorToggle = z.union([z.boolean(), z.strictObject({ enabled: z.boolean().default(true), interval: Duration.optional() })], {
  error: (issue) => (issue.code === 'invalid_union' ? 'use true, false or {enabled: true|false, interval: 30s}' : undefined),
});

export const COLLECTOR_NAMES = ['machine', 'status', 'vhost', 'application', 'instance', 'stream', 'recorder', 'stream_target', 'connectioncounts', 'logs', 'video'] as const;
export type CollectorName = (typeof COLLECTOR_NAMES)[number];

export const ConfigSchema = z.strictObject({
  /** Absent: one server at http://127.0.0.1:8087, unless modules or servers_files say the servers come from elsewhere. */
  servers: z.array(ServerSchema).optional(),
  /** Globs (in the file name) of target files: lists of {targets, module, labels}, re-read when they change. */
  servers_files: z
    .array(
      z.string().min(1).superRefine((v, ctx) => {
        const problem = checkPattern(v);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
    )
    .default([]),
  /** How often target files are read again, for file systems that report no changes. */
  servers_files_refresh_interval: Duration.default(30_000),
  /**
   * Servers this replica polls at most (of this shard's, config first, then the target files' in order); the rest are
   * left out, counted in wowza_exporter_servers_over_limit and said, with --shard as the way to split them.
   */
  max_servers: z.number().int().positive().default(2000),
  /** This replica polls the servers whose name hashes (as Prometheus' hashmod) to `index` modulo `count`. */
  shard: z
    .strictObject({ index: z.number().int().min(0), count: z.number().int().min(1) })
    .superRefine((v, ctx) => {
      if (v.count >= 1 && v.index >= v.count) ctx.addIssue({ code: 'custom', message: 'shard.index must be below shard.count', path: ['index'] });
    })
    .optional(),
  web: z
    .strictObject({
      /** One address or several (every one answers), as node_exporter's repeatable --web.listen-address. */
      listen_address: z
        .union([ListenAddress, z.array(ListenAddress).min(1, 'list at least one address')], {
          // YAML reads `listen_address: 9935` as a number: say what to write instead of zod's "Invalid input".
          error: (issue) =>
            typeof issue.input === 'number'
              ? `${issue.input} is a number, not an address: write ":${issue.input}" (every address) or "127.0.0.1:${issue.input}", in quotes`
              : 'expected an address ("host:port" or ":port") or a list of them',
        })
        .default(':9935'),
      /** Where the metrics are served (node_exporter's --web.telemetry-path). */
      telemetry_path: z
        .string()
        .regex(/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/, 'a path such as /metrics: starts with / and holds no spaces, ? or #')
        .refine((p) => !RESERVED_PATHS.has(p), { error: (i) => `${String(i.input)} is one of the exporter's own paths (${[...RESERVED_PATHS].join(', ')})` })
        .default('/metrics'),
      /**
       * Listen on the sockets systemd passes (socket activation: LISTEN_FDS, LISTEN_PID) instead of listen_address,
       * as node_exporter's --web.systemd-socket.
       */
      systemd_socket: z.boolean().default(false),
      /** Prometheus exporter-toolkit web config (TLS, basic auth). */
      config_file: z.string().optional(),
      /**
       * `POST /-/reload`, like Prometheus' --web.enable-lifecycle: off by default (SIGHUP always reloads). When on,
       * a request a browser sends cross-site is refused.
       */
      enable_lifecycle: z.boolean().default(false),
      /**
       * With the lifecycle API on, a POST /-/reload is taken only when its Host header names the exporter: a listen
       * address, localhost (127.0.0.1, [::1]), or one of these names (DNS rebinding). Any port.
       */
      allowed_hosts: z.array(HostName).default([]),
      /**
       * Inbound connections at most, over all listen addresses. Beyond it the longest-idle connection is closed to
       * make room (health checks still get in). Default: half the open-file limit, from 16 to 1024.
       */
      max_connections: z.number().int().min(1).optional(),
    })
    .default({ listen_address: ':9935', telemetry_path: '/metrics', systemd_socket: false, enable_lifecycle: false, allowed_hosts: [] }),
  poll: z
    .strictObject({
      interval: Duration.default(15_000),
      /** Request deadline when a server sets none; default 5 s, or 80 % of the shortest collector interval below 6.25 s. */
      timeout: Duration.optional(),
      /** Parallel API requests per server: `auto` adapts to how fast the server answers; a number fixes it. */
      concurrency: z
        .union([z.literal('auto'), z.number().int().min(1).max(256)], {
          error: (issue) => (issue.code === 'invalid_union' ? 'use auto or a whole number from 1 to 256' : undefined),
        })
        .default('auto'),
      /** Upper bound of `auto`. */
      concurrency_max: z.number().int().min(1).max(256).default(64),
      /** Random delay added to each poll start, as a share of the interval. */
      jitter: z.number().min(0).max(0.5).default(0.1),
      /**
       * Requests a second each server may be asked for, on average (0: no limit). When the configured intervals would
       * ask more, the per-stream collector polls less often to fit; server-level collectors keep their intervals.
       */
      max_requests_per_second: z.number().min(0).default(50),
    })
    .default({ interval: 15_000, concurrency: 'auto', concurrency_max: 64, jitter: 0.1, max_requests_per_second: 50 }),
  collectors: z.partialRecord(z.enum(COLLECTOR_NAMES), CollectorToggle).default({}),
  discovery: z
    .strictObject({
      vhosts: NameFilter,
      applications: NameFilter,
      streams: NameFilter,
      renditions: z
        .strictObject({
          /** `label`: report under the base stream with a `rendition` label; `drop`: leave out; `stream`: as streams of their own. */
          mode: z.enum(['label', 'drop', 'stream']).default('label'),
          /** A stream `<base>_<suffix>` is a rendition when `<base>` exists and the suffix matches this. */
          suffix_pattern: Regex.default('^(?:\\d{3,4}p\\d*|\\d+k|source|audio|aac|mp3)$'),
        })
        .default({ mode: 'label', suffix_pattern: '^(?:\\d{3,4}p\\d*|\\d+k|source|audio|aac|mp3)$' }),
      /** Streams beyond this per server are dropped (counted in wowza_exporter_streams_dropped). */
      max_streams_per_server: z.number().int().min(1).default(5000),
      /**
       * Series of one server beyond this, over all its collectors, are left out (counted in
       * wowza_exporter_series_dropped): whatever a server sends, its share of a scrape is bounded.
       */
      max_series_per_server: z.number().int().min(1).default(100_000),
      /** Likewise for the bytes of its sample lines (estimated), so long label values cannot make a huge scrape either. */
      max_bytes_per_server: z.number().int().min(4096).default(8 * 1024 * 1024),
    })
    .default({
      vhosts: {},
      applications: {},
      streams: {},
      renditions: { mode: 'label', suffix_pattern: '^(?:\\d{3,4}p\\d*|\\d+k|source|audio|aac|mp3)$' },
      max_streams_per_server: 5000,
      max_series_per_server: 100_000,
      max_bytes_per_server: 8 * 1024 * 1024,
    }),
  /** Credentials and target allow-lists for /probe. */
  modules: z.record(z.string().min(1), ModuleSchema).default({}),
  video: z
    .strictObject({
      url: httpUrl('https://api.video.wowza.com/api/v1.11', 'the token goes in token_file').default('https://api.video.wowza.com/api/v1.11'),
      /** File with the Wowza Video API access token. Falls back to env WOWZA_VIDEO_TOKEN. */
      token_file: z.string().min(1).optional(),
      interval: Duration.default(60_000),
    })
    .default({ url: 'https://api.video.wowza.com/api/v1.11', interval: 60_000 }),
  /** Log followers and sinks; without this section no logs are shipped. */
  logs: LogsConfigSchema.optional(),
  /** Receiver for WSE webhook deliveries on the exporter's HTTP server. */
  webhooks: z
    .strictObject({
      enabled: z.boolean().default(false),
      path: z.string().regex(/^\/[\w\-/.]*$/, 'path must start with / and contain only URL-safe characters').default('/webhooks/wowza'),
      /** File with the secret the webhook target is configured with. Required unless insecure_allow_unauthenticated. */
      secret_file: z.string().min(1).optional(),
      /**
       * How events prove they come from the server: `jwt` (the target's `auth.type: jwt`, an HS256 JWT signed with the
       * secret, with a numeric `exp`) or `token` (the secret itself as a static bearer token, what `webhooks setup
       * --auth header` writes into the target's headers).
       */
      auth: z.enum(['jwt', 'token']).default('jwt'),
      /** Longest JWT lifetime taken, measured from now (`exp` - now), and `exp - iat` when `iat` is there. */
      max_token_lifetime: Duration.default(600_000),
      /** Take events without any token. Anyone who can reach the port, a web page in a browser included, can then post events. */
      insecure_allow_unauthenticated: z.boolean().default(false),
      /** Tolerance for `exp`, `nbf` and an `iat` ahead of the clock. */
      clock_skew: Duration.default(30_000),
      /** How many recent event ids are remembered to drop redeliveries. */
      dedupe_window: z.number().int().min(1).max(1_000_000).default(10_000),
    })
    .refine((w) => !w.enabled || w.secret_file !== undefined || w.insecure_allow_unauthenticated, {
      path: ['secret_file'],
      message: 'the webhook receiver needs a secret (the one the webhook target is configured with); to take events from anyone, set insecure_allow_unauthenticated: true',
    })
    .default({ enabled: false, path: '/webhooks/wowza', auth: 'jwt', max_token_lifetime: 600_000, insecure_allow_unauthenticated: false, clock_skew: 30_000, dedupe_window: 10_000 }),
  log: z
    .strictObject({
      level: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
      format: z.enum(['json', 'logfmt']).default('json'),
      // The level of the one line a failing /probe writes (blackbox_exporter's --log.prober): debug, so a fleet of
      // probed targets that are down does not fill the log; each failure is counted in wowza_exporter_probe_failures_total.
      probe_level: z.enum(['debug', 'info', 'warn', 'error']).default('debug'),
    })
    .default({ level: 'info', format: 'json', probe_level: 'debug' }),
}).superRefine((c, ctx) => {
  if (c.webhooks.enabled && c.webhooks.path === c.web.telemetry_path) {
    ctx.addIssue({ code: 'custom', path: ['webhooks', 'path'], message: `${c.webhooks.path} is also web.telemetry_path: give the webhook receiver another path` });
  }
});

export type ConfigInput = z.input<typeof ConfigSchema>;
export type Config = z.output<typeof ConfigSchema>;
export type ServerConfig = z.output<typeof ServerSchema>;
export type ModuleConfig = z.output<typeof ModuleSchema>;
