import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Collector } from './collectors/collector.js';
import { wseCollectorsEnabled } from './collectors/registry.js';
import { Scheduler, timedPoll, type PollJobSpec, type PollResult } from './collectors/scheduler.js';
import { ObjectErrorLog } from './collectors/object-errors.js';
import { RefreshThrottle } from './collectors/refresh-throttle.js';
import { detectConnectionCounts } from './collectors/connection-counts-detect.js';
import { crossSiteReason } from './http/cross-site.js';
import { connectionCapMetrics, defaultMaxConnections } from './http/connection-cap.js';
import { ConfigError } from './config/errors.js';
import { fileTarget, intervalFor, listenAddresses, type RuntimeConfig } from './config/load.js';
import { ServersFiles } from './config/servers-files.js';
import { inShard } from './config/shard.js';
import { defaultRequestTimeoutMs, pollDeadlineMs } from './collectors/poll-deadline.js';
import { probe, probeDeadlineMs, ProbeRequestError, resolveProbe } from './http/probe.js';
import { sendMetrics, sendText, startExporterServer, type RouteHandler } from './http/server.js';
import { systemdSockets } from './http/systemd-socket.js';
import { buildStatus, StatusFacts } from './http/status.js';
import { BUILD } from './build-info.js';
import type { Logger } from './logger.js';
import { createSelfMetrics, forgetServer, type SelfMetrics } from './metrics/self-metrics.js';
import { addServerLabels, formatServerLabels } from './metrics/server-labels.js';
import { SnapshotStore } from './metrics/snapshot-store.js';
import { SeriesCap } from './metrics/series-cap.js';
import type { LogShipping } from './logs/log-shipping.js';
import { WowzaClient, type WowzaTarget } from './wowza/client.js';
import { OPTIMISE_FROM_POLLS, OPTIMISE_FROM_SERIES, optimiseJavaScript } from './v8-flags.js';
import type { WebhookEvent } from './webhooks/event.js';

/** The `log_type` webhook events carry in the sinks (and Loki), beside the server's own logs. */
const WEBHOOK_LOG_TYPE = 'webhook';

/** A webhook event flattened into a log record (the sinks carry flat records). */
function eventRecord(e: WebhookEvent): Record<string, string | number | null> {
  const c = e.context;
  return {
    timestamp: new Date(e.timestamp).toISOString(),
    'x-event': e.name,
    'event-id': e.id,
    source: e.source ?? null,
    'x-vhost': c.vhost ?? null,
    'x-app': c.app ?? null,
    'x-appinst': c.appInstance ?? null,
    'x-sname': c.stream ?? null,
    state: c.state ?? null,
    data: e.data === undefined ? null : JSON.stringify(e.data),
  };
}

/** Collectors whose view a stream or application event changes. */
const REFRESHED_BY_EVENTS = ['application', 'instance', 'stream'];
/** How often a server's default connectioncounts provider is asked again while it does not answer. */
const CONNECTION_COUNTS_RETRY_MS = 10 * 60_000;

/** A server this exporter polls: how the collectors reach it, and how the log followers do. */
interface PolledServer {
  target: WowzaTarget;
  logTarget: WowzaTarget;
  /** Everything that, when it changes, means the server must be polled anew. */
  settings: string;
}

/** The outcome of a reload, as `POST /-/reload` answers it. */
export type ReloadOutcome = { ok: true } | { ok: false; message: string };

export interface Exporter {
  url: string;
  readonly scheduler: Scheduler;
  self: SelfMetrics;
  store: SnapshotStore;
  /** Adds a route (webhook receiver, ...) before or after start. */
  routes: Map<string, RouteHandler>;
  /** The servers polled now, by name. */
  servers(): ReadonlyMap<string, WowzaTarget>;
  /** The /metrics body. */
  scrape(): Promise<string>;
  /** Applies a new configuration; what did not change keeps running as it was. */
  reload(next: RuntimeConfig): Promise<void>;
  close(): Promise<void>;
}

/**
 * The Wowza Video schedules collector, when a token is configured. Its code is loaded only then, like the log
 * pipeline, the webhook receiver, the web config's TLS and bcrypt, and the status page: a metrics-only `serve` does
 * not carry what it does not run (issue 27; test/e2e/serve-footprint.test.ts lists what it loads).
 */
async function videoJobs(runtime: RuntimeConfig, self: SelfMetrics, logger: Logger): Promise<PollJobSpec[]> {
  if (!runtime.collectors.video.enabled || !runtime.videoToken) return [];
  const [{ VideoClient }, { VideoSchedulesCollector }] = await Promise.all([import('./video/client.js'), import('./video/schedules-collector.js')]);
  const server = new URL(runtime.config.video.url).host;
  const intervalMs = runtime.collectors.video.intervalMs;
  const client = new VideoClient({
    url: runtime.config.video.url,
    token: runtime.videoToken,
    // Like the Wowza requests, within the poll deadline when the interval is short.
    timeoutMs: Math.min(10_000, defaultRequestTimeoutMs(intervalMs), pollDeadlineMs(intervalMs)),
    onRequest: (endpoint, code, seconds) => self.observeRequest(server, endpoint, code, seconds),
  });
  const objectErrors = new ObjectErrorLog((reason) => self.objectErrors.inc({ server, collector: 'video', reason }));
  const schedules = new VideoSchedulesCollector(client, { logger: logger.child({ collector: 'video' }), unknownValues: self.videoUnknownValues, objectErrors });
  return [
    {
      server,
      collector: 'video',
      intervalMs,
      setsUp: false,
      poll: async (signal) => {
        const result = await timedPoll('video', () => schedules.collect(new Date(), { signal }));
        return schedules.lastObjects ? { ...result, objects: schedules.lastObjects } : result;
      },
    },
  ];
}

/** Starts collectors and the HTTP server for a validated configuration. */
export interface ExporterExtras {
  selfMetrics?: SelfMetrics;
  /** Receives accepted webhook events (the log sinks, so events land beside the logs). */
  forwardEvent?: (server: string, event: WebhookEvent) => Promise<void> | void;
  /** Reads the configuration again for `POST /-/reload` (the serve command knows where from). */
  reloadConfig?: () => Promise<ReloadOutcome>;
}

/** What, when it changes, makes every server be polled anew (its scheduling and discovery). */
const pollSettings = (rt: RuntimeConfig) => JSON.stringify({ poll: rt.config.poll, discovery: rt.config.discovery, collectors: rt.collectors });
/** What, when it changes, restarts log shipping. */
const logSettings = (rt: RuntimeConfig) => JSON.stringify({ logs: rt.config.logs, enabled: rt.collectors.logs.enabled });
const videoSettings = (rt: RuntimeConfig) => JSON.stringify({ video: rt.config.video, enabled: rt.collectors.video.enabled, token: rt.videoToken });

/** Health checks: answered without basic auth. */
const HEALTH_PATHS: ReadonlySet<string> = new Set(['/-/healthy', '/-/ready']);

export async function startExporter(initial: RuntimeConfig, logger: Logger, extra: ExporterExtras = {}): Promise<Exporter> {
  // Said once at start: which build is running is the first question about any log.
  logger.info({ version: BUILD.version, revision: BUILD.revision, node: process.version }, `wowza-exporter ${BUILD.version} (revision ${BUILD.revision}) starting`);
  const self = extra.selfMetrics ?? createSelfMetrics();
  let runtime = initial;
  const store = new SnapshotStore(
    new SeriesCap({ max: () => runtime.config.discovery.max_series_per_server, onDropped: (server, n) => self.seriesDropped.set({ server }, n), log: logger.child({ component: 'series-cap' }) }),
  );
  let collectors: Collector[] = wseCollectorsEnabled(runtime.collectors);
  const facts = new StatusFacts();
  const startedAt = Date.now();
  /**
   * V8's compilers, held off at start (src/v8-flags.ts), turn on once there is work for them. Counted from the series
   * of each (server, collector) at its last good poll; a removed server's count stays, which can only turn them on
   * a little early.
   */
  let compilersOn = false;
  const seriesPolled = new Map<string, number>();
  const compilersFor = (reason: string, series?: number) => {
    if (compilersOn) return;
    compilersOn = true;
    seriesPolled.clear();
    // An engineering note, not an operator's concern.
    if (optimiseJavaScript()) logger.debug({ reason, ...(series === undefined ? {} : { series }) }, 'JavaScript compilers (Sparkplug, TurboFan) on: the exporter has work for them');
  };
  /** When the last polls ended, for the rate: many servers or short intervals are work too. */
  const pollsEnded: number[] = [];
  const notePoll = (spec: PollJobSpec, result: PollResult) => {
    if (compilersOn) return;
    const now = Date.now();
    pollsEnded.push(now);
    while (pollsEnded[0]! < now - OPTIMISE_FROM_POLLS.windowMs) pollsEnded.shift();
    if (pollsEnded.length >= OPTIMISE_FROM_POLLS.polls) return compilersFor('poll rate');
    if (!result.ok) return;
    seriesPolled.set(`${spec.server}\u0000${spec.collector}`, result.set.size);
    let series = 0;
    for (const n of seriesPolled.values()) series += n;
    if (series >= OPTIMISE_FROM_SERIES) compilersFor('polls', series);
  };
  let lastEvent: { name: string; server: string; at: number } | undefined;
  const newScheduler = () =>
    new Scheduler({
      config: runtime.config,
      collectors,
      intervalOf: (c, target) => intervalFor(runtime, c.name, target),
      self,
      store,
      logger,
      onPoll: (spec, result) => {
        facts.record(spec, result);
        notePoll(spec, result);
      },
    });
  let scheduler = newScheduler();
  // Webhook events re-poll what they name, at most once a second per server (coalesced).
  const refreshes = new RefreshThrottle((server) => scheduler.refresh(server, REFRESHED_BY_EVENTS));
  for (const job of await videoJobs(runtime, self, logger)) scheduler.addJob(job);
  self.reloadSuccessful.set(1);
  self.reloadSuccessTime.set(Date.now() / 1000);

  const polled = new Map<string, PolledServer>();
  /** Formatted labels of the servers that have any, for the exporter's own series. */
  const labelsByServer = new Map<string, string>();
  const logClients = new Map<string, WowzaClient>();
  let shipping: LogShipping | undefined;
  /** The log source's class, loaded with the log pipeline. */
  let LogSource: typeof import('./wowza/log-source.js').WowzaLogSource | undefined;
  let files: ServersFiles | undefined;
  const skipped = new Set<string>();
  /**
   * Servers without connectioncounts_url: their default provider's URL once it answered, null while it does not.
   * Tried when the server is added and every 10 minutes after, quietly: one info line when it changes.
   */
  const detectedCounts = new Map<string, string | null>();

  // The exporter's own metrics are small and change at any time: rendered per scrape, after the Wowza part.
  const ownMetrics = async () => {
    const own = addServerLabels(await self.registry.metrics(), labelsByServer);
    return own.endsWith('\n') || own === '' ? own : own + '\n';
  };
  const scrape = async () => {
    const own = await ownMetrics();
    return store.render() + own;
  };

  /** The servers the configuration and the target files name, this shard's only, the first of each name. */
  const desired = (): Map<string, Omit<PolledServer, 'settings'>> => {
    const out = new Map<string, Omit<PolledServer, 'settings'>>();
    const take = (name: string, entry: Omit<PolledServer, 'settings'>, from: string) => {
      if (!inShard(name, runtime.config.shard)) return;
      if (out.has(name)) {
        const key = `${name}\u0000${from}`;
        if (!skipped.has(key)) logger.warn({ server: name, from }, 'a server of this name is listed already: this one is left out');
        skipped.add(key);
        return;
      }
      out.set(name, entry);
    };
    runtime.servers.forEach((t, i) => {
      const found = t.connectionCountsAuto ? detectedCounts.get(t.name) : undefined;
      take(t.name, { target: found ? { ...t, connectionCountsUrl: found } : t, logTarget: runtime.logServers[i]! }, 'servers');
    });
    for (const g of files?.groups() ?? []) {
      for (const url of g.targets) {
        try {
          const { target, logTarget } = fileTarget(runtime, g.module, url, g.labels, g.expectedStreams);
          take(target.name, { target, logTarget }, g.file);
        } catch (err) {
          if (!(err instanceof ConfigError)) throw err;
          self.serversFileErrors.inc({ file: g.file });
          logger.warn({ file: g.file, target: url, err: err.message }, 'cannot poll a target of a target file');
        }
      }
    }
    return out;
  };

  const startLogsOf = (name: string, logTarget: WowzaTarget) => {
    if (!shipping || !LogSource) return;
    const client = new WowzaClient(logTarget, {
      onRequest: (endpoint, code, seconds) => self.observeRequest(name, endpoint, code, seconds),
      onChallenge: (reason) => self.authChallenges.inc({ server: name, reason }),
    });
    logClients.set(name, client);
    shipping.addSource(new LogSource(client));
  };
  const stopLogsOf = async (name: string) => {
    await shipping?.removeSource(name);
    await logClients.get(name)?.close();
    logClients.delete(name);
  };

  const addServer = (name: string, s: PolledServer) => {
    polled.set(name, s);
    const labels = s.target.labels ? formatServerLabels(s.target.labels) : '';
    store.setServerLabels(name, labels);
    if (labels) labelsByServer.set(name, labels);
    scheduler.addServer(s.target);
    startLogsOf(name, s.logTarget);
  };
  const removeServer = async (name: string) => {
    refreshes.forget(name);
    polled.delete(name);
    labelsByServer.delete(name);
    facts.forget(name);
    await scheduler.removeServer(name);
    await stopLogsOf(name);
    await forgetServer(self.registry, name);
  };

  /** Brings the polled servers in line with `desired()`; changes are applied one at a time, in order. */
  let applying: Promise<void> = Promise.resolve();
  const applyServers = () => {
    applying = applying.then(async () => {
      // A server seen for the first time: its default connectioncounts provider is asked once before it is polled.
      const unknown = [...desired().values()].filter((w) => looksForCounts(w.target) && !detectedCounts.has(w.target.name));
      await Promise.all(unknown.map(async (w) => noteCounts(w.target.name, await detectConnectionCounts(w.target))));
      const want = desired();
      for (const name of [...polled.keys()]) {
        const w = want.get(name);
        if (!w || JSON.stringify(w) !== polled.get(name)!.settings) {
          if (!w) detectedCounts.delete(name);
          await removeServer(name);
          logger.info({ server: name }, w ? 'server settings changed: polling it anew' : 'server removed: no longer polled');
        }
      }
      for (const [name, w] of want) {
        if (polled.has(name)) continue;
        addServer(name, { ...w, settings: JSON.stringify(w) });
        logger.info({ server: name, url: w.target.url }, 'server added: polling it');
      }
      self.servers.set(polled.size);
    });
    return applying;
  };

  /** A server whose default provider is looked for: none when the collector is off (nothing goes to :8086 then). */
  const looksForCounts = (t: WowzaTarget) => t.connectionCountsAuto === true && runtime.collectors.connectioncounts.enabled;
  const noteCounts = (name: string, url: string | undefined) => {
    const before = detectedCounts.get(name);
    detectedCounts.set(name, url ?? null);
    if (url && before !== url) logger.info({ server: name, connectioncounts_url: url }, 'connectioncounts provider found: per-stream viewers come from it in one request (set connectioncounts_url: off to keep to REST)');
    else if (!url && before === undefined) logger.debug({ server: name }, 'no connectioncounts provider at the default address: viewers come from REST, asked again every 10 minutes');
  };
  // Every 10 minutes, servers whose provider did not answer are asked again; one that answers is polled anew with it.
  const countsRetry = setInterval(() => {
    void (async () => {
      const waiting = runtime.servers.filter((t) => looksForCounts(t) && detectedCounts.get(t.name) === null);
      const found = await Promise.all(waiting.map(async (t) => [t.name, await detectConnectionCounts(t)] as const));
      let changed = false;
      for (const [name, url] of found) {
        if (!url) continue;
        noteCounts(name, url);
        changed = true;
      }
      if (changed) await applyServers();
    })().catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'looking for connectioncounts providers failed'));
  }, CONNECTION_COUNTS_RETRY_MS);
  countsRetry.unref();

  const startFiles = () => {
    if (runtime.config.servers_files.length === 0) return;
    files = new ServersFiles({
      patterns: runtime.config.servers_files,
      refreshMs: runtime.config.servers_files_refresh_interval,
      modules: new Set(runtime.modules.keys()),
      logger: logger.child({ component: 'servers_files' }),
      onError: (file) => self.serversFileErrors.inc({ file }),
      onChange: () => void applyServers(),
    });
    files.scan();
    files.start();
  };

  const startShipping = async () => {
    if (!runtime.config.logs || !runtime.collectors.logs.enabled) return;
    const [{ startLogShipping }, { WowzaLogSource }] = await Promise.all([import('./logs/log-shipping.js'), import('./wowza/log-source.js')]);
    LogSource = WowzaLogSource;
    compilersFor('logs');
    shipping = await startLogShipping({ sources: [], config: runtime.config.logs, registry: self.registry, logger });
    for (const [name, s] of polled) startLogsOf(name, s.logTarget);
  };
  const stopShipping = async () => {
    await shipping?.stop();
    shipping = undefined;
    await Promise.all([...logClients.values()].map((c) => c.close()));
    logClients.clear();
  };

  const routes = new Map<string, RouteHandler>();
  // Like every web.* setting, read at start.
  const telemetryPath = initial.config.web.telemetry_path;
  routes.set(telemetryPath, async (req, res) => {
    const fresh = await ownMetrics();
    await sendMetrics(req, res, { cached: store.encoded(), fresh });
  });
  routes.set('/-/healthy', (_req, res) => sendText(res, 200, 'OK\n'));
  routes.set('/-/ready', (_req, res) =>
    scheduler.ready ? sendText(res, 200, 'ready\n') : sendText(res, 503, 'not ready: the first poll has not completed yet\n'),
  );
  routes.set('/-/reload', async (req, res) => {
    req.resume();
    // Like every web.* setting, read at start: a reload cannot turn itself on.
    if (!initial.config.web.enable_lifecycle) {
      sendText(res, 403, 'lifecycle APIs are not enabled: start with --web.enable-lifecycle (web.enable_lifecycle: true), or send SIGHUP\n');
      return;
    }
    if (req.method !== 'POST' && req.method !== 'PUT') {
      res.writeHead(405, { allow: 'POST, PUT', 'content-type': 'text/plain; charset=utf-8' });
      res.end('use POST to reload the configuration\n');
      return;
    }
    const crossSite = crossSiteReason(req);
    if (crossSite) {
      logger.warn({ component: 'http', reason: crossSite }, 'refused a reload a browser sent from another site');
      sendText(res, 403, `refused: ${crossSite}\n`);
      return;
    }
    if (!extra.reloadConfig) {
      sendText(res, 500, 'this exporter was not started from a configuration it can read again\n');
      return;
    }
    const outcome = await extra.reloadConfig();
    if (outcome.ok) sendText(res, 200, 'configuration reloaded\n');
    else sendText(res, 500, `configuration refused, the previous one stays in use:\n${outcome.message}\n`);
  });
  routes.set('/probe', async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    let resolved;
    try {
      resolved = resolveProbe(runtime, url.searchParams);
    } catch (err) {
      if (err instanceof ProbeRequestError) {
        sendText(res, 400, `${err.message}\n`);
        return;
      }
      throw err;
    }
    const deadline = probeDeadlineMs(req.headers['x-prometheus-scrape-timeout-seconds'] as string | undefined, resolved.module.config.timeout ?? undefined);
    // A caller that hangs up takes its probe with it: no request of it stays open to the server.
    const gone = new AbortController();
    const onClose = () => {
      if (!res.writableEnded) gone.abort();
    };
    res.on('close', onClose);
    let answer: { body: string; series: number };
    try {
      answer = await probe(
        runtime,
        resolved,
        collectors,
        deadline,
        logger.child({ component: 'probe' }),
        gone.signal,
      );
    } finally {
      res.off('close', onClose);
    }
    if (gone.signal.aborted) return;
    if (answer.series >= OPTIMISE_FROM_SERIES) compilersFor('probe', answer.series);
    await sendMetrics(req, res, answer.body);
  });

  const wh = runtime.config.webhooks;
  if (wh.enabled) {
    if (runtime.webhookSecret === undefined) {
      logger.warn({ component: 'webhooks', path: wh.path }, 'the webhook receiver takes events WITHOUT authentication (webhooks.insecure_allow_unauthenticated): anyone who reaches this port can post them');
    }
    const { createWebhookReceiver } = await import('./webhooks/receiver.js');
    routes.set(
      wh.path,
      createWebhookReceiver({
        secret: runtime.webhookSecret,
        auth: wh.auth,
        maxTokenLifetimeSeconds: wh.max_token_lifetime / 1000,
        knownApplications: (server) => scheduler.applicationsOf(server),
        clockSkewSeconds: wh.clock_skew / 1000,
        dedupeWindow: wh.dedupe_window,
        registry: self.registry,
        logger,
        // Only polled names become label values: a query string must not mint new series.
        resolveServer: (query, event) => {
          const asked = query.get('server') ?? event.source ?? '';
          if (polled.has(asked)) return asked;
          return polled.size === 1 ? [...polled.keys()][0]! : 'unknown';
        },
        onEvent: async (server, event) => {
          lastEvent = { name: event.name, server, at: Date.now() };
          const refresh = polled.has(server) && (event.name.startsWith('stream.') || event.name.startsWith('app.'));
          await Promise.all([
            extra.forwardEvent?.(server, event),
            shipping?.publish(server, WEBHOOK_LOG_TYPE, eventRecord(event), event.timestamp),
            refresh ? refreshes.request(server) : undefined,
          ]);
        },
      }),
    );
  }

  const status = () =>
    buildStatus({
      startedAt,
      ready: scheduler.ready,
      shard: runtime.config.shard,
      servers: new Map([...polled].map(([name, s]) => [name, s.target])),
      reached: (server) => scheduler.reached(server),
      downReason: (server) => scheduler.downReason(server),
      jobs: scheduler.jobStates(),
      facts,
      registry: self.registry,
      ...(shipping ? { logs: { followers: shipping.followers(), sinkNames: shipping.sinkNames } } : {}),
      ...(runtime.config.webhooks.enabled ? { webhooks: { auth: runtime.webhookSecret === undefined ? ('none' as const) : runtime.config.webhooks.auth, lastEvent } } : {}),
    });
  const links = [
    { path: telemetryPath, text: 'Metrics' },
    { path: '/api/v1/status', text: 'Status (JSON)' },
    { path: '/-/healthy', text: 'Health' },
    { path: '/-/ready', text: 'Readiness' },
    { path: '/probe?target=http://127.0.0.1:8087&module=default', text: 'Probe (needs a module)' },
    ...(wh.enabled ? [{ path: wh.path, text: 'Webhook receiver (POST)' }] : []),
  ];
  // The page's renderer is loaded by the first request for it.
  routes.set('/', async (_req, res) => (await import('./http/status-page.js')).sendStatusPage(res, links));
  routes.set('/favicon.ico', async (_req, res) => (await import('./http/status-page.js')).sendFavicon(res));
  routes.set('/api/v1/status', async (_req, res) => {
    const body = JSON.stringify(await status(), null, 2) + '\n';
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
    res.end(body);
  });

  const webConfig = runtime.config.web.config_file ? await import('./http/web-config.js') : undefined;
  const web = webConfig ? await webConfig.loadWebConfig(runtime.config.web.config_file!, (msg, meta) => logger.warn(meta, msg)) : undefined;

  // Log shipping starts first: a bad sink (an unreadable secret file) must stop the start before anything
  // listens or polls.
  await startShipping();
  let http;
  const maxConnections = runtime.config.web.max_connections ?? defaultMaxConnections();
  try {
    http = await startExporterServer({
      listen: runtime.config.web.systemd_socket ? systemdSockets().map((fd) => ({ fd })) : listenAddresses(runtime.config).map((address) => ({ address })),
      logger,
      routes,
      ...(web && webConfig ? { createWith: webConfig.createServerFactory(web, (msg, meta) => logger.warn(meta, msg)), guard: webConfig.basicAuthGuard(web), tls: web.tls !== undefined } : {}),
      // Kubelet and load-balancer probes carry no credentials: with basic auth on, a guarded health check would restart
      // the pod in a loop. They say "OK" or "ready" and nothing else; TLS and client certificates still apply.
      open: HEALTH_PATHS,
      links,
      // DNS rebinding: with the lifecycle API on, a state-changing /-/ request must name the exporter in its Host.
      ...(runtime.config.web.enable_lifecycle ? { lifecycleHosts: runtime.config.web.allowed_hosts } : {}),
      maxConnections,
      onConnectionShed: connectionCapMetrics(self.registry, maxConnections),
    });
  } catch (err) {
    await stopShipping();
    throw err;
  }
  startFiles();
  await applyServers();
  scheduler.start();

  logger.info({ url: http.url, servers: [...polled.keys()], shard: runtime.config.shard, collectors: collectors.map((c) => c.name) }, 'exporter listening');

  /** Applies a new configuration: only what changed is restarted. */
  const reload = async (next: RuntimeConfig) => {
    const before = runtime;
    for (const key of ['web', 'webhooks'] as const) {
      if (JSON.stringify(before.config[key]) !== JSON.stringify(next.config[key]) || (key === 'webhooks' && before.webhookSecret !== next.webhookSecret)) {
        logger.warn({ setting: key }, `the ${key} settings take effect at the next restart; the rest of the configuration is applied now`);
      }
    }
    runtime = next;
    if (before.config.log.level !== next.config.log.level) logger.level = next.config.log.level;
    await applying;
    if (pollSettings(before) !== pollSettings(next)) {
      // Every server is polled anew under the new schedule; their log followers keep going.
      logger.info('poll settings changed: every server is polled anew');
      const old = scheduler;
      const gone = collectors.filter((c) => !wseCollectorsEnabled(next.collectors).some((n) => n.name === c.name)).map((c) => c.name);
      collectors = wseCollectorsEnabled(next.collectors);
      scheduler = newScheduler();
      await old.stop();
      for (const [name, s] of polled) {
        store.deleteServer(name);
        store.setServerLabels(name, labelsByServer.get(name) ?? '');
        for (const collector of gone) for (const m of [self.collectorSuccess, self.collectorDuration, self.lastPoll]) m.remove({ server: name, collector });
        scheduler.addServer(s.target);
      }
      for (const job of await videoJobs(next, self, logger)) scheduler.addJob(job);
      scheduler.start();
    } else if (videoSettings(before) !== videoSettings(next)) {
      await scheduler.removeJobs((j) => j.spec.collector === 'video');
      for (const job of await videoJobs(next, self, logger)) scheduler.addJob(job);
    }
    if (logSettings(before) !== logSettings(next)) {
      logger.info('log shipping settings changed: restarting it (positions are kept)');
      await stopShipping();
      await startShipping();
    }
    if (JSON.stringify([before.config.servers_files, before.config.servers_files_refresh_interval, [...before.modules.keys()]]) !== JSON.stringify([next.config.servers_files, next.config.servers_files_refresh_interval, [...next.modules.keys()]])) {
      files?.stop();
      files = undefined;
      startFiles();
    }
    await applyServers();
  };

  return {
    url: http.url,
    get scheduler() {
      return scheduler;
    },
    self,
    store,
    routes,
    servers: () => new Map([...polled].map(([name, s]) => [name, s.target])),
    scrape,
    reload,
    async close() {
      // Order matters: stop polling, let sinks deliver and positions be saved, then stop answering.
      files?.stop();
      refreshes.stop();
      clearInterval(countsRetry);
      await applying;
      await scheduler.stop();
      await stopShipping();
      await http.close();
    },
  };
}
