import type { Argv } from 'yargs';
import { ConfigError } from '../config/errors.js';
import { COLLECTOR_NAMES, type CollectorName } from '../config/schema.js';
import type { ConfigFlags } from '../config/load.js';

/**
 * `--config` and the `--wowza.*` connection flags shared by serve, logs, webhooks and doctor. Each command adds only
 * the other groups it reads, so that its `--help` lists no flag it would ignore.
 */
export function withWowzaFlags<T>(y: Argv<T>) {
  return y
    // Prometheus, Alertmanager and blackbox_exporter spell it --config.file, and their users type that.
    .option('config', { type: 'string', alias: 'config.file', describe: 'YAML config file (flags override it)', group: 'General:' })
    .option('wowza.url', { type: 'string', array: true, describe: 'WSE REST API base URL, repeatable (default http://127.0.0.1:8087)', group: 'Wowza:' })
    .option('wowza.username', { type: 'string', describe: 'REST API user', group: 'Wowza:' })
    .option('wowza.password-file', { type: 'string', describe: 'file with the password (or env WOWZA_PASSWORD)', group: 'Wowza:' })
    .option('wowza.auth', { type: 'string', choices: ['auto', 'basic', 'digest'], describe: 'authentication scheme (default auto: what the server asks for)', group: 'Wowza:' })
    .option('wowza.timeout', { type: 'string', describe: 'deadline per API request (default: poll.timeout, else 5s or 80 % of the shortest collector interval, whichever is less)', group: 'Wowza:' })
    .option('wowza.insecure-skip-verify', { type: 'boolean', describe: 'accept any TLS certificate (test servers only)', group: 'Wowza:' })
    .option('wowza.ca-file', { type: 'string', describe: 'PEM CA file for a server with a private or self-signed certificate', group: 'Wowza:' })
    .option('wowza.connectioncounts-url', {
      type: 'string',
      array: true,
      describe: 'the server\'s connectioncounts provider, e.g. http://wowza:8086/connectioncounts: all viewer counts in one request (one per --wowza.url); default: <host>:8086 is tried; off: never',
      group: 'Wowza:',
    });
}

/** How often and how hard servers are polled, and which collectors run: serve's, and doctor's cost estimate. */
export function withPollFlags<T>(y: Argv<T>) {
  let out = y
    .option('poll.interval', { type: 'string', describe: 'how often collectors poll (default 15s)', group: 'Polling:' })
    .option('poll.max-requests-per-second', { type: 'number', describe: 'average requests a second per server (default 50, 0: no limit): stream polls stretch to fit', group: 'Polling:' })
    .option('poll.concurrency', { type: 'string', describe: 'parallel API requests per server: auto (default: adapts to the server, up to poll.concurrency_max) or a number', group: 'Polling:' });
  for (const name of COLLECTOR_NAMES) {
    out = out.option(`collector.${name}`, { type: 'boolean', describe: `enable the ${name} collector (--no-collector.${name} to disable)`, group: 'Collectors:' });
  }
  return out;
}

/** The flags of `serve`: the connection, polling, the exporter's own log, its web server, sharding and Wowza Video. */
export function withServeFlags<T>(y: Argv<T>) {
  return withPollFlags(withWowzaFlags(y))
    .option('log.level', { type: 'string', choices: ['debug', 'info', 'warn', 'error'], describe: 'log level (default info)', group: 'General:' })
    .option('log.format', { type: 'string', choices: ['json', 'logfmt'], describe: 'log format (default json)', group: 'General:' })
    .option('log.probe-level', { type: 'string', choices: ['debug', 'info', 'warn', 'error'], describe: 'level of the one line a failing /probe logs (default debug; failures are counted in wowza_exporter_probe_failures_total)', group: 'General:' })
    .option('web.listen-address', { type: 'string', array: true, describe: 'address for /metrics and /probe, repeatable: every one answers (default :9935)', group: 'Web:' })
    .option('web.telemetry-path', { type: 'string', describe: 'path of the metrics (default /metrics)', group: 'Web:' })
    .option('web.systemd-socket', { type: 'boolean', describe: 'listen on the sockets systemd passes (socket activation) instead of --web.listen-address', group: 'Web:' })
    .option('web.config.file', { type: 'string', describe: 'exporter-toolkit web config (TLS, basic auth)', group: 'Web:' })
    .option('web.enable-lifecycle', { type: 'boolean', describe: 'serve POST /-/reload (off: only SIGHUP reloads)', group: 'Web:' })
    .option('web.allowed-hosts', {
      type: 'string',
      array: true,
      describe: 'with --web.enable-lifecycle, host names (besides the listen addresses and localhost) a POST /-/reload may be addressed to, repeatable or comma-separated',
      group: 'Web:',
    })
    .option('web.max-connections', { type: 'number', describe: 'inbound connections at most; beyond, the longest-idle one is closed (default: half the open-file limit, 16-1024)', group: 'Web:' })
    .option('shard', { type: 'string', describe: 'i/N: poll only the servers whose name hashes (as Prometheus hashmod) to i of N replicas', group: 'Polling:' })
    .option('video.url', { type: 'string', describe: 'Wowza Video API base URL', group: 'Wowza Video:' })
    .option('video.token-file', { type: 'string', describe: 'file with the Wowza Video API token (or env WOWZA_VIDEO_TOKEN)', group: 'Wowza Video:' });
}

type Args = Record<string, unknown>;

/** `auto` stays a word; a number becomes one (anything else is left for the config schema to report). */
function concurrencyFlag(v: unknown): number | 'auto' | undefined {
  if (v === undefined) return undefined;
  const text = String(v).trim();
  return text === 'auto' ? 'auto' : /^\d+$/.test(text) ? Number(text) : (text as 'auto');
}
const str = (a: Args, k: string) => (a[k] === undefined ? undefined : String(a[k]));

/** One config file: `--config a --config.file b` (the same flag) would otherwise read as the file "a,b". */
function configFile(a: Args): string | undefined {
  if (Array.isArray(a.config)) throw new ConfigError(`--config (or --config.file): given ${a.config.length} times; give one file`);
  return str(a, 'config');
}

export function configFlagsFrom(a: Args): ConfigFlags {
  const collectors: Partial<Record<CollectorName, boolean>> = {};
  for (const name of COLLECTOR_NAMES) {
    const v = a[`collector.${name}`];
    if (typeof v === 'boolean') collectors[name] = v;
  }
  const urls = a['wowza.url'] as string[] | undefined;
  return {
    config: configFile(a),
    wowzaUrl: urls?.flatMap((u) => String(u).split(',')).filter((u) => u !== ''),
    wowzaUsername: str(a, 'wowza.username'),
    wowzaPasswordFile: str(a, 'wowza.password-file'),
    wowzaAuth: str(a, 'wowza.auth'),
    wowzaTimeout: str(a, 'wowza.timeout'),
    wowzaInsecureSkipVerify: a['wowza.insecure-skip-verify'] as boolean | undefined,
    wowzaCaFile: str(a, 'wowza.ca-file'),
    wowzaConnectionCountsUrl: (a['wowza.connectioncounts-url'] as string[] | undefined)?.map(String),
    listenAddress: (a['web.listen-address'] as unknown[] | undefined)?.map(String),
    telemetryPath: str(a, 'web.telemetry-path'),
    webSystemdSocket: a['web.systemd-socket'] as boolean | undefined,
    webConfigFile: str(a, 'web.config.file'),
    webEnableLifecycle: a['web.enable-lifecycle'] as boolean | undefined,
    webAllowedHosts: (a['web.allowed-hosts'] as unknown[] | undefined)?.flatMap((h) => String(h).split(',')).map((h) => h.trim()).filter((h) => h !== ''),
    webMaxConnections: a['web.max-connections'] as number | undefined,
    pollInterval: str(a, 'poll.interval'),
    pollConcurrency: concurrencyFlag(a['poll.concurrency']),
    pollMaxRequestsPerSecond: a['poll.max-requests-per-second'] as number | undefined,
    shard: str(a, 'shard'),
    logLevel: str(a, 'log.level'),
    logFormat: str(a, 'log.format'),
    logProbeLevel: str(a, 'log.probe-level'),
    collectors,
    videoUrl: str(a, 'video.url'),
    videoTokenFile: str(a, 'video.token-file'),
  };
}
