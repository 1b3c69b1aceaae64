import { readFileSync } from 'node:fs';
import type { Argv, CommandModule } from 'yargs';
import { ConfigError } from '../config/errors.js';
import { parseDuration } from '../config/duration.js';
import { createLogger, type LogFormat, type LogLevel } from '../base/logger.js';
import { SimulatorOptionError, startSimulator, type Simulator, type SimulatorOptions } from '@wowza-exporter/simulator';
import { onShutdown } from './lifecycle.js';

/** The flags of `wowza-exporter simulate`. */
export function withSimulateFlags<T>(y: Argv<T>) {
  return y
    .option('port', { type: 'number', default: 8087, describe: 'port to listen on (0 = any free port)', group: 'Simulator:' })
    .option('host', { type: 'string', default: '127.0.0.1', describe: 'address to listen on', group: 'Simulator:' })
    .option('vhosts', { type: 'number', default: 1, describe: 'virtual hosts', group: 'Simulator:' })
    .option('apps', { type: 'number', default: 3, describe: 'applications per vhost', group: 'Simulator:' })
    .option('streams', { type: 'number', default: 3, describe: 'streams per application', group: 'Simulator:' })
    .option('auth', { type: 'string', choices: ['basic', 'digest', 'none'], default: 'basic', describe: 'REST API authentication', group: 'Simulator:' })
    .option('admin-port', { type: 'number', default: 8086, describe: 'admin port of the HTTP providers (/connectioncounts); 0 = any free port', group: 'Simulator:' })
    .option('admin-auth', { type: 'string', choices: ['basic', 'digest', 'none'], default: 'digest', describe: 'admin port authentication (a default install: admin-digest)', group: 'Simulator:' })
    .option('digest-algorithm', {
      type: 'string',
      array: true,
      choices: ['MD5', 'SHA-256'],
      describe: 'digest challenge to offer, repeatable (default MD5)',
      group: 'Simulator:',
    })
    .option('username', { type: 'string', default: 'admin', describe: 'REST API user', group: 'Simulator:' })
    .option('password', { type: 'string', default: 'admin', describe: 'REST API password (a test tool: a flag is fine here)', group: 'Simulator:' })
    .option('seed', { type: 'number', default: 1, describe: 'seed of the simulated values', group: 'Simulator:' })
    .option('latency', { type: 'string', describe: 'delay added to every response, e.g. 20ms (a bare number is seconds)', group: 'Simulator:' })
    .option('capacity', { type: 'number', default: 0, describe: 'requests served at once, like N REST worker threads; the rest queue in order (0 = no limit)', group: 'Simulator:' })
    .option('server-version', { type: 'string', describe: 'serverVersion to report, e.g. "Wowza Streaming Engine 4.9.6 build20250601000000" (webhooks need 4.9.6+)', group: 'Simulator:' })
    .option('log-rate', { type: 'number', default: 5, describe: 'log lines written per second (0 = none)', group: 'Simulator:' })
    .option('tls-cert', { type: 'string', describe: 'PEM certificate: serve HTTPS (with --tls-key)', group: 'Simulator:' })
    .option('tls-key', { type: 'string', describe: 'PEM private key for --tls-cert', group: 'Simulator:' })
    .option('log.level', { type: 'string', choices: ['debug', 'info', 'warn', 'error'], default: 'info', describe: 'log level (debug logs every request)', group: 'General:' })
    .option('log.format', { type: 'string', choices: ['json', 'logfmt'], default: 'json', describe: 'log format', group: 'General:' });
}

function readPem(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError(`--${flag}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function count(flag: string, v: unknown): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new ConfigError(`--${flag} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return n;
}

/** Simulator options from parsed flags; ConfigError names the flag that is wrong. */
export function simulatorOptionsFromArgs(a: Record<string, unknown>): SimulatorOptions {
  const certPath = a['tls-cert'] as string | undefined;
  const keyPath = a['tls-key'] as string | undefined;
  if ((certPath === undefined) !== (keyPath === undefined)) throw new ConfigError('--tls-cert and --tls-key go together');
  let latencyMs: number | undefined;
  if (a.latency !== undefined) {
    try {
      latencyMs = parseDuration(String(a.latency));
    } catch (err) {
      throw new ConfigError(`--latency: ${(err as Error).message}`);
    }
  }
  const logRate = Number(a['log-rate'] ?? 5);
  if (!Number.isFinite(logRate) || logRate < 0) throw new ConfigError(`--log-rate must be a number >= 0, got ${JSON.stringify(a['log-rate'])}`);
  const port = count('port', a.port ?? 8087);
  if (port > 65535) throw new ConfigError(`--port must be at most 65535, got ${port}`);
  const adminPort = count('admin-port', a['admin-port'] ?? 8086);
  if (adminPort > 65535) throw new ConfigError(`--admin-port must be at most 65535, got ${adminPort}`);
  const seed = Number(a.seed ?? 1);
  if (!Number.isFinite(seed)) throw new ConfigError(`--seed must be a number, got ${JSON.stringify(a.seed)}`);
  const algorithms = a['digest-algorithm'] as Array<'MD5' | 'SHA-256'> | undefined;
  return {
    port,
    host: String(a.host ?? '127.0.0.1'),
    vhosts: count('vhosts', a.vhosts ?? 1),
    apps: count('apps', a.apps ?? 3),
    streams: count('streams', a.streams ?? 3),
    auth: (a.auth as 'basic' | 'digest' | 'none' | undefined) ?? 'basic',
    adminPort,
    adminAuth: (a['admin-auth'] as 'basic' | 'digest' | 'none' | undefined) ?? 'digest',
    digestAlgorithms: algorithms && algorithms.length > 0 ? [...new Set(algorithms)] : undefined,
    username: String(a.username ?? 'admin'),
    password: String(a.password ?? 'admin'),
    seed,
    latencyMs,
    capacity: count('capacity', a.capacity ?? 0),
    ...(a['server-version'] !== undefined ? { serverVersion: String(a['server-version']) } : {}),
    logs: { linesPerSecond: logRate },
    tls: certPath && keyPath ? { cert: readPem('tls-cert', certPath), key: readPem('tls-key', keyPath) } : undefined,
  };
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** What `simulate` prints once it listens: where, how to log in, and a curl line to paste. */
export function describeSimulator(sim: Simulator, opts: SimulatorOptions): string {
  const algorithms = opts.digestAlgorithms ?? ['MD5'];
  const auth =
    sim.auth === 'none'
      ? 'none'
      : `${sim.auth}${sim.auth === 'digest' ? ` (${algorithms.join(', ')})` : ''}, username ${JSON.stringify(sim.username)}, password ${JSON.stringify(sim.password)}`;
  const curlAuth = sim.auth === 'none' ? '' : `${sim.auth === 'digest' ? '--digest' : '--basic'} -u ${shellQuote(`${sim.username}:${sim.password}`)} `;
  const insecure = sim.url.startsWith('https:') ? '-k ' : '';
  return [
    `Wowza Streaming Engine simulator listening on ${sim.url}`,
    `  auth:     ${auth}`,
    `  admin:    ${sim.countsUrl} (auth ${sim.adminAuth})`,
    `  topology: ${opts.vhosts ?? 1} vhost(s) x ${opts.apps ?? 3} application(s) x ${opts.streams ?? 3} stream(s), seed ${opts.seed ?? 1}`,
    `  logs:     ${opts.logs?.linesPerSecond ?? 0} line(s)/s`,
    ...(opts.capacity ? [`  capacity: ${opts.capacity} request(s) at once, the rest queue (waits are reported when it stops)`] : []),
    `  try:      curl ${insecure}${curlAuth}-H 'Accept: application/json' ${sim.url}/v2/machine/monitoring/current`,
    '',
  ].join('\n');
}

/**
 * Starts a simulator and prints how to reach it (the `demo` command reuses this). Bad options reject with
 * ConfigError; a port that cannot be bound rejects with the reason.
 */
export async function runSimulator(opts: SimulatorOptions, out: NodeJS.WritableStream = process.stdout): Promise<Simulator> {
  let sim: Simulator;
  try {
    sim = await startSimulator(opts);
  } catch (err) {
    if (err instanceof SimulatorOptionError) throw new ConfigError(err.message);
    throw err;
  }
  out.write(describeSimulator(sim, opts));
  return sim;
}

export const simulateCommand: CommandModule = {
  command: 'simulate',
  describe: 'run the embedded Wowza Streaming Engine REST API simulator (a test tool)',
  builder: (y) =>
    withSimulateFlags(y)
      .usage('Usage: $0 simulate [options]\n\nRun the embedded Wowza Streaming Engine REST API simulator (a test tool).')
      .example('$0 simulate --port 8087 --admin-port 8086', 'a simulated server where a default install listens (user and password admin)')
      .example('$0 simulate --port 0 --admin-port 0 --server-version "Wowza Streaming Engine 4.9.6 build20250601000000"', 'on free ports, new enough to deliver webhooks'),
  handler: async (argv) => {
    const logger = createLogger({ level: argv['log.level'] as LogLevel, format: argv['log.format'] as LogFormat }).child({ component: 'simulator' });
    const opts = simulatorOptionsFromArgs(argv);
    const sim = await runSimulator({ ...opts, logger });
    onShutdown(logger, async () => {
      if (opts.capacity) logger.info({ capacity: opts.capacity, ...sim.workers.queueWaits() }, 'requests waited for a worker');
      await sim.close();
    });
  },
};
