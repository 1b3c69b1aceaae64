import { silentLogger } from '../logger.js';
import { AuthGate, type AuthMode } from './auth.js';
import { RequestCounters } from './counters.js';
import { FaultInjector } from './faults.js';
import { listen } from './http-server.js';
import { LogGenerator } from './logs/log-generator.js';
import { LogStore } from './logs/log-store.js';
import { ServerLogs } from './logs/server-logs.js';
import { resolveOptions, SimulatorOptionError, type SimulatorOptions } from './options.js';
import { createRequestHandler } from './pipeline.js';
import { Router } from './router.js';
import { registerLogRoutes } from './routes/logs.js';
import { registerMonitoringRoutes } from './routes/monitoring.js';
import { between } from './seeded.js';
import { buildDefaultTopology, Topology } from './topology.js';
import { ValueClock } from './value-clock.js';
import { ValueModel } from './values.js';

/**
 * A loopback Wowza Streaming Engine REST API: the monitoring and log resources with the real server's
 * quirks (XML by default, Basic or expiring-nonce Digest, `appType: null`, 404 vs 200-with-zeros, log
 * files that roll), plus the levers tests need: injected faults, request counters, a topology to change,
 * the exact values served, log writing and rotation, a frozen value clock.
 */

export type { SimulatorOptions } from './options.js';
export { SimulatorOptionError } from './options.js';
export type { Fault, FaultInput, FaultName } from './faults.js';
export type { LogEntry } from './logs/server-logs.js';
export type { LogFileInfo } from './logs/log-store.js';
export type { StreamListing, TopologyListing, AppOptions, StreamOptions } from './topology.js';
export { DEFAULT_INSTANCE, DEFAULT_VHOST, PULLED_SOURCE_WITH_CREDENTIALS, SERVER_NAME } from './topology.js';
export { ACCESS_FIELDS, ERROR_FIELDS, LOG_TYPES } from './logs/log-format.js';

export type SimulatorCounters = Pick<
  RequestCounters,
  'total' | 'byRoute' | 'byStatus' | 'authChallenges' | 'staleChallenges' | 'faultsApplied' | 'route' | 'status' | 'reset'
>;
export type SimulatorFaults = Pick<FaultInjector, 'inject' | 'clear' | 'active'>;
export type SimulatorTopology = Pick<
  Topology,
  'addVHost' | 'removeVHost' | 'addApp' | 'stopApp' | 'removeApp' | 'addStream' | 'stopStream' | 'startStream' | 'removeStream' | 'scale' | 'list' | 'streams'
>;
export type SimulatorValues = Pick<
  ValueModel,
  'machine' | 'status' | 'vhostList' | 'vhost' | 'applicationList' | 'application' | 'instances' | 'instance' | 'stream'
>;
export type SimulatorLogs = Pick<ServerLogs, 'types' | 'append' | 'appendRaw' | 'generate' | 'rotate' | 'files' | 'bytes'>;

export interface Simulator {
  /** e.g. http://127.0.0.1:43121 */
  readonly url: string;
  readonly port: number;
  readonly auth: AuthMode;
  readonly username: string;
  readonly password: string;
  /** Requests total, by route template and by status; 401 challenges and stale ones; reset(). */
  readonly counters: SimulatorCounters;
  /** inject(route | '*', fault, { times }) / clear(). */
  readonly faults: SimulatorFaults;
  /** The vhosts, applications and streams; changes show in the next answer. */
  readonly topology: SimulatorTopology;
  /** The exact bodies the API would serve right now (numbers as numbers even with numbersAsStrings). */
  readonly values: SimulatorValues;
  /** append / appendRaw / generate / rotate / files / bytes. */
  readonly logs: SimulatorLogs;
  /** `GET /v2/...` for every route served. */
  readonly routes: string[];
  /** Credentials revoked mid-run: the old password gets 401 from now on. */
  setPassword(password: string): void;
  /** Moves the value clock `seconds` (default 1) forward; the only way values move when frozen. */
  tick(seconds?: number): void;
  /** Closes everything, hung requests and idle keep-alive sockets included. */
  close(): Promise<void>;
}

/** All resources the simulator serves. New ones (webhooks, configuration) register here. */
function registerRoutes(router: Router, deps: { values: ValueModel; topology: Topology; store: LogStore; numbersAsStrings: boolean }): void {
  registerMonitoringRoutes(router, { values: deps.values, topology: deps.topology, numbersAsStrings: deps.numbersAsStrings });
  registerLogRoutes(router, deps.store);
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const o = resolveOptions(opts);
  const logger = o.logger ?? silentLogger();
  const clock = new ValueClock(o.frozen);
  // The simulated server has been up for 3 to 30 days (to the millisecond: timeRunning is fractional).
  const serverStartedAt = -Math.round(between(3 * 86_400_000, 30 * 86_400_000, o.seed, 'server-uptime')) / 1000;
  const topology = new Topology(clock, o.seed, o.renditions);
  const values = new ValueModel(topology, clock, {
    seed: o.seed,
    serverVersion: o.serverVersion,
    licenseExpireDate: o.licenseExpireDate,
    maxConnections: o.maxConnections,
    maxIncomingStreams: o.maxIncomingStreams,
    serverStartedAt,
    epochMsAtZero: Date.now(),
  });
  buildDefaultTopology(topology, o, o.seed, serverStartedAt);

  const store = new LogStore({ software: o.serverVersion, keepRolled: o.logs.keepRolled, maxFileBytes: o.logs.maxFileBytes });
  const generator = new LogGenerator(o.seed, () =>
    topology
      .streams()
      .filter((s) => s.connected && s.renditionOf === undefined)
      .map((s) => ({ vhost: s.vhost, app: s.app, stream: s.stream })),
  );
  const logs = new ServerLogs(store, generator);
  logs.writeStartup(o.serverVersion);
  for (const type of logs.types) logs.generate(type, 20);

  const router = new Router();
  registerRoutes(router, { values, topology, store, numbersAsStrings: o.numbersAsStrings });

  const counters = new RequestCounters();
  const faults = new FaultInjector(() => router.keys());
  const credentials = { username: o.username, password: o.password };
  const auth = new AuthGate({ mode: o.auth, algorithms: o.digestAlgorithms, nonceTtlMs: o.nonceTtlMs, strictNonceCount: o.strictNonceCount }, () => credentials);
  const closing = new AbortController();
  const wowzaServer = /\d+(?:\.\d+)+/.exec(o.serverVersion)?.[0] ?? o.serverVersion;

  const listener = await listen(
    { host: o.host, port: o.port, tls: o.tls },
    createRequestHandler({
      router,
      auth,
      faults,
      counters,
      latencyMs: o.latencyMs,
      xmlOnly: o.xmlOnly,
      render: { wowzaServer, serverHeader: `WowzaStreamingEngine/${wowzaServer}` },
      signal: closing.signal,
      logger,
    }),
  );
  logs.start(o.logs.linesPerSecond);

  let closed: Promise<void> | undefined;
  return {
    url: listener.url,
    port: listener.port,
    auth: o.auth,
    get username() {
      return credentials.username;
    },
    get password() {
      return credentials.password;
    },
    counters,
    faults,
    topology,
    values,
    logs,
    routes: router.keys(),
    setPassword(password: string) {
      if (typeof password !== 'string') throw new SimulatorOptionError('setPassword needs a string');
      credentials.password = password;
    },
    tick(seconds = 1) {
      clock.tick(seconds);
    },
    close() {
      closed ??= (async () => {
        closing.abort();
        logs.stop();
        await listener.close();
      })();
      return closed;
    },
  };
}
