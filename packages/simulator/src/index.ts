import { setMaxListeners } from 'node:events';
import { silentLogger } from './logger.js';
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
import { registerConnectionCountsRoute } from './routes/connection-counts.js';
import { registerLogRoutes } from './routes/logs.js';
import { registerMonitoringRoutes } from './routes/monitoring.js';
import { registerServerConfigRoutes } from './routes/server-config.js';
import { registerWebhookRoutes } from './routes/webhooks.js';
import { between } from './seeded.js';
import { LISTENER_CLASS, ServerConfig } from './server-config.js';
import { atLeast, WEBHOOKS_SINCE } from './server-version.js';
import { buildDefaultTopology, SERVER_NAME, Topology } from './topology.js';
import { ValueClock } from './value-clock.js';
import { ValueModel } from './values.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { WebhookConfig } from './webhooks/webhook-config.js';
import { WorkerPool, type QueueWaits } from './worker-pool.js';

/**
 * A loopback Wowza Streaming Engine REST API: the monitoring and log resources with the real server's
 * quirks (XML by default, Basic or expiring-nonce Digest, `appType: null`, 404 vs 200-with-zeros, log
 * files that roll), plus the levers tests need: injected faults, request counters, a topology to change,
 * the exact values served, log writing and rotation, a frozen value clock.
 */

export type { SimulatorOptions } from './options.js';
export { SimulatorOptionError } from './options.js';
export type { Fault, FaultInput, FaultName } from './faults.js';
export type { QueueWaits } from './worker-pool.js';
export type { LogEntry } from './logs/server-logs.js';
export type { LogFileInfo } from './logs/log-store.js';
export type { StreamListing, TopologyListing, AppOptions, StreamOptions } from './topology.js';
export { DEFAULT_INSTANCE, DEFAULT_VHOST, PULLED_SOURCE_WITH_CREDENTIALS, SERVER_NAME } from './topology.js';
export type { TopologyEvent } from './topology.js';
export type { WebhookDeliveryAttempt, WebhookEventContext, WebhookEventInput, WebhookOutcome, WebhookPayload } from './webhooks/dispatcher.js';
export { WebhookEventError } from './webhooks/dispatcher.js';
export { ACCESS_FIELDS, ERROR_FIELDS, LOG_TYPES, formatRecord, headerLines, makeHeader } from './logs/log-format.js';
export type { Logger } from './logger.js';
export { LISTENER_CLASS } from './server-config.js';
// Parts that tests and the benchmarks drive on their own.
export { AuthGate } from './auth.js';
export { WorkerPool } from './worker-pool.js';
export { LogStore } from './logs/log-store.js';
export { LogGenerator } from './logs/log-generator.js';
export { criteriaMatch, parseCriteria } from './webhooks/criteria.js';

export type SimulatorCounters = Pick<
  RequestCounters,
  'total' | 'byRoute' | 'byStatus' | 'authChallenges' | 'staleChallenges' | 'faultsApplied' | 'route' | 'status' | 'reset'
>;
export type SimulatorFaults = Pick<FaultInjector, 'inject' | 'clear' | 'active'>;
export type SimulatorTopology = Pick<
  Topology,
  'addVHost' | 'removeVHost' | 'addApp' | 'stopApp' | 'removeApp' | 'addStream' | 'stopStream' | 'startStream' | 'removeStream' | 'stopRecording' | 'setTargetStatus' | 'scale' | 'list' | 'streams'
>;
export type SimulatorValues = Pick<
  ValueModel,
  'machine' | 'status' | 'vhostList' | 'vhost' | 'applicationList' | 'application' | 'instances' | 'instance' | 'stream' | 'streamRecorders'
>;
export type SimulatorLogs = Pick<ServerLogs, 'types' | 'append' | 'appendRaw' | 'generate' | 'rotate' | 'files' | 'bytes'>;
export type SimulatorWebhooks = Pick<WebhookDispatcher, 'supported' | 'source' | 'fire' | 'deliveries' | 'settled'>;

export interface Simulator {
  /** e.g. http://127.0.0.1:43121 */
  readonly url: string;
  readonly port: number;
  readonly auth: AuthMode;
  /** The admin port (8086 on a real server), e.g. http://127.0.0.1:43122: its HTTP providers, on their own auth. */
  readonly adminUrl: string;
  readonly adminAuth: AuthMode;
  /** `<adminUrl>/connectioncounts`, the connectioncounts provider. */
  readonly countsUrl: string;
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
  /**
   * Webhook events (4.9.6+): fire(event), and the ones topology changes send by themselves
   * (stream.started / stream.stopped / app.started / app.shutdown); deliveries records every attempt,
   * settled() waits for those under way.
   */
  readonly webhooks: SimulatorWebhooks;
  /** `GET /v2/...` for every route served. */
  readonly routes: string[];
  /** With a `capacity`: how long requests waited for a worker (since the last reset), and requests waiting now. */
  readonly workers: { queueWaits(): QueueWaits; resetWaits(): void; readonly queued: number; readonly size: number };
  /** Credentials revoked mid-run: the old password gets 401 from now on. */
  setPassword(password: string): void;
  /** Moves the value clock `seconds` (default 1) forward; the only way values move when frozen. */
  tick(seconds?: number): void;
  /** Closes everything, hung requests and idle keep-alive sockets included. */
  close(): Promise<void>;
}

/** All resources the simulator serves. */
function registerRoutes(
  router: Router,
  deps: { values: ValueModel; topology: Topology; store: LogStore; numbersAsStrings: boolean; serverConfig: ServerConfig; webhooks: WebhookConfig | undefined },
): void {
  registerMonitoringRoutes(router, { values: deps.values, topology: deps.topology, numbersAsStrings: deps.numbersAsStrings });
  registerLogRoutes(router, deps.store);
  registerServerConfigRoutes(router, deps.serverConfig);
  // Before 4.9.6 the webhook resources do not exist: the router's 404, as on an old server.
  if (deps.webhooks) registerWebhookRoutes(router, deps.webhooks);
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

  const store = new LogStore({ software: o.serverVersion, keepRolled: o.logs.keepRolled, maxFileBytes: o.logs.maxFileBytes, ...(o.logs.clock ? { now: o.logs.clock } : {}) });
  const generator = new LogGenerator(o.seed, () =>
    topology
      .streams()
      .filter((s) => s.connected && s.renditionOf === undefined)
      .map((s) => ({ vhost: s.vhost, app: s.app, stream: s.stream })),
  );
  const logs = new ServerLogs(store, generator);
  logs.writeStartup(o.serverVersion);
  for (const type of logs.types) logs.generate(type, 20);

  const serverConfig = new ServerConfig();
  const webhookConfig = new WebhookConfig(SERVER_NAME);
  const webhooksSupported = atLeast(o.serverVersion, WEBHOOKS_SINCE);
  const router = new Router();
  registerRoutes(router, {
    values,
    topology,
    store,
    numbersAsStrings: o.numbersAsStrings,
    serverConfig,
    webhooks: webhooksSupported ? webhookConfig : undefined,
  });

  // The admin port serves the HTTP providers only, as on a real server.
  const adminRouter = new Router();
  registerConnectionCountsRoute(adminRouter, values, topology);

  const counters = new RequestCounters();
  const workers = new WorkerPool(o.capacity);
  const faults = new FaultInjector(() => [...router.keys(), ...adminRouter.keys()]);
  const credentials = { username: o.username, password: o.password };
  const gate = (mode: AuthMode) =>
    new AuthGate({ mode, algorithms: o.digestAlgorithms, nonceTtlMs: o.nonceTtlMs, nonceMaxUses: o.nonceMaxUses, strictNonceCount: o.strictNonceCount }, () => credentials);
  const auth = gate(o.auth);
  const closing = new AbortController();
  // Every request waiting out its latency listens for closing: hundreds at once is normal, not a leak.
  setMaxListeners(0, closing.signal);
  const wowzaServer = /\d+(?:\.\d+)+/.exec(o.serverVersion)?.[0] ?? o.serverVersion;
  const webhooks = new WebhookDispatcher({
    config: webhookConfig,
    supported: webhooksSupported,
    listenerInstalled: () => serverConfig.hasListener(LISTENER_CLASS),
    timeoutMs: o.webhookTimeoutMs,
    logger,
    userAgent: `WowzaStreamingEngine/${wowzaServer}`,
  });
  // Registered after the starting layout was built: a server announces changes, not its boot state.
  const stopObserving = topology.observe((e) => {
    void webhooks.fire({ name: e.name, context: { vhost: e.vhost, app: e.app, appInstance: e.instance, stream: e.stream } });
  });

  const handlerFor = (r: Router, a: AuthGate) =>
    createRequestHandler({
      router: r,
      auth: a,
      faults,
      counters,
      latencyMs: o.latencyMs,
      workers,
      xmlOnly: o.xmlOnly,
      render: { wowzaServer, serverHeader: `WowzaStreamingEngine/${wowzaServer}` },
      signal: closing.signal,
      logger,
    });
  const listener = await listen({ host: o.host, port: o.port, tls: o.tls }, handlerFor(router, auth));
  const admin = await listen({ host: o.host, port: o.adminPort, tls: o.tls }, handlerFor(adminRouter, gate(o.adminAuth))).catch(async (err: unknown) => {
    await listener.close();
    throw err;
  });
  logs.start(o.logs.linesPerSecond);

  let closed: Promise<void> | undefined;
  return {
    url: listener.url,
    port: listener.port,
    auth: o.auth,
    adminUrl: admin.url,
    adminAuth: o.adminAuth,
    countsUrl: `${admin.url}/connectioncounts`,
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
    webhooks,
    routes: router.keys(),
    workers,
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
        stopObserving();
        await Promise.all([webhooks.close(), listener.close(), admin.close()]);
      })();
      return closed;
    },
  };
}
