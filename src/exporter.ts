import type { IncomingMessage, ServerResponse } from 'node:http';
import { wseCollectorsEnabled } from './collectors/registry.js';
import { Scheduler, timedPoll, type PollJobSpec } from './collectors/scheduler.js';
import { intervalFor, type RuntimeConfig } from './config/load.js';
import { probe, probeDeadlineMs, ProbeRequestError, resolveProbe } from './http/probe.js';
import { sendMetrics, sendText, startExporterServer, type RouteHandler } from './http/server.js';
import { basicAuthGuard, createServerFactory, loadWebConfig } from './http/web-config.js';
import type { Logger } from './logger.js';
import { createSelfMetrics, type SelfMetrics } from './metrics/self-metrics.js';
import { SnapshotStore } from './metrics/snapshot-store.js';
import { startLogShipping, type LogShipping } from './logs/log-shipping.js';
import { WowzaClient } from './wowza/client.js';
import { WowzaLogSource } from './wowza/log-source.js';
import { VideoClient } from './video/client.js';
import { collectVideoSchedules } from './video/schedules-collector.js';
import type { WebhookEvent } from './webhooks/event.js';
import { createWebhookReceiver } from './webhooks/receiver.js';

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

export interface Exporter {
  url: string;
  scheduler: Scheduler;
  self: SelfMetrics;
  store: SnapshotStore;
  /** Adds a route (webhook receiver, ...) before or after start. */
  routes: Map<string, RouteHandler>;
  /** The /metrics body. */
  scrape(): Promise<string>;
  close(): Promise<void>;
}

/** The Wowza Video schedules collector, when a token is configured. */
function videoJobs(runtime: RuntimeConfig, self: SelfMetrics): PollJobSpec[] {
  if (!runtime.collectors.video.enabled || !runtime.videoToken) return [];
  const server = new URL(runtime.config.video.url).host;
  const client = new VideoClient({
    url: runtime.config.video.url,
    token: runtime.videoToken,
    onRequest: (endpoint, code, seconds) => self.observeRequest(server, endpoint, code, seconds),
  });
  return [
    {
      server,
      collector: 'video',
      intervalMs: runtime.collectors.video.intervalMs,
      setsUp: false,
      poll: (signal) => timedPoll('video', () => collectVideoSchedules(client, new Date(), { signal })),
    },
  ];
}

/** Starts collectors and the HTTP server for a validated configuration. */
export interface ExporterExtras {
  selfMetrics?: SelfMetrics;
  /** Receives accepted webhook events (the log sinks, so events land beside the logs). */
  forwardEvent?: (server: string, event: WebhookEvent) => Promise<void> | void;
}

export async function startExporter(runtime: RuntimeConfig, logger: Logger, extra: ExporterExtras = {}): Promise<Exporter> {
  const self = extra.selfMetrics ?? createSelfMetrics();
  const store = new SnapshotStore();
  const collectors = wseCollectorsEnabled(runtime.collectors);
  const scheduler = new Scheduler({
    config: runtime.config,
    servers: runtime.servers,
    collectors,
    intervalOf: (c, target) => intervalFor(runtime, c.name, target),
    extraJobs: videoJobs(runtime, self),
    self,
    store,
    logger,
  });
  for (const s of runtime.servers) self.up.set({ server: s.name }, 0);

  // The exporter's own metrics are small and change at any time: rendered per scrape, after the Wowza part.
  const ownMetrics = async () => {
    const own = await self.registry.metrics();
    return own.endsWith('\n') || own === '' ? own : own + '\n';
  };
  const scrape = async () => {
    const own = await ownMetrics();
    return store.render() + own;
  };

  let shipping: LogShipping | undefined;
  let logClients: WowzaClient[] = [];
  const routes = new Map<string, RouteHandler>();
  routes.set('/metrics', async (req, res) => {
    const fresh = await ownMetrics();
    await sendMetrics(req, res, { cached: store.encoded(), fresh });
  });
  routes.set('/-/healthy', (_req, res) => sendText(res, 200, 'OK\n'));
  routes.set('/-/ready', (_req, res) =>
    scheduler.ready ? sendText(res, 200, 'ready\n') : sendText(res, 503, 'not ready: the first poll has not completed yet\n'),
  );
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
    const deadline = probeDeadlineMs(req.headers['x-prometheus-scrape-timeout-seconds'] as string | undefined);
    const body = await probe(runtime, resolved, collectors, deadline, logger.child({ component: 'probe' }), (endpoint, code, seconds) =>
      self.observeRequest(`probe:${resolved.moduleName}`, endpoint, code, seconds),
    );
    await sendMetrics(req, res, body);
  });

  const wh = runtime.config.webhooks;
  if (wh.enabled) {
    const names = new Set(runtime.servers.map((t) => t.name));
    routes.set(
      wh.path,
      createWebhookReceiver({
        secret: runtime.webhookSecret,
        clockSkewSeconds: wh.clock_skew / 1000,
        dedupeWindow: wh.dedupe_window,
        registry: self.registry,
        logger,
        // Only configured names become label values: a query string must not mint new series.
        resolveServer: (query, event) => {
          const asked = query.get('server') ?? event.source ?? '';
          if (names.has(asked)) return asked;
          return runtime.servers.length === 1 ? runtime.servers[0]!.name : 'unknown';
        },
        onEvent: async (server, event) => {
          const refresh = names.has(server) && (event.name.startsWith('stream.') || event.name.startsWith('app.'));
          await Promise.all([
            extra.forwardEvent?.(server, event),
            shipping?.publish(server, WEBHOOK_LOG_TYPE, eventRecord(event), event.timestamp),
            refresh ? scheduler.refresh(server, REFRESHED_BY_EVENTS) : undefined,
          ]);
        },
      }),
    );
  }

  const web = runtime.config.web.config_file ? await loadWebConfig(runtime.config.web.config_file, (msg, meta) => logger.warn(meta, msg)) : undefined;

  // Log shipping runs beside the collectors, each server's log endpoints through its own client. It starts
  // first: a bad sink (an unreadable secret file) must stop the start before anything listens or polls.
  if (runtime.config.logs && runtime.collectors.logs.enabled) {
    logClients = runtime.logServers.map((t) => new WowzaClient(t, { onRequest: (endpoint, code, seconds) => self.observeRequest(t.name, endpoint, code, seconds) }));
    shipping = await startLogShipping({
      sources: logClients.map((c) => new WowzaLogSource(c)),
      config: runtime.config.logs,
      registry: self.registry,
      logger,
    });
  }
  let http;
  try {
    http = await startExporterServer({
      listenAddress: runtime.config.web.listen_address,
      logger,
      routes,
      ...(web ? { createWith: createServerFactory(web, (msg, meta) => logger.warn(meta, msg)), guard: basicAuthGuard(web), tls: web.tls !== undefined } : {}),
      links: [
        { path: '/metrics', text: 'Metrics' },
        { path: '/probe?target=http://127.0.0.1:8087&module=default', text: 'Probe (needs a module)' },
        { path: '/-/healthy', text: 'Health' },
        { path: '/-/ready', text: 'Readiness' },
        ...(wh.enabled ? [{ path: wh.path, text: 'Webhook receiver (POST)' }] : []),
      ],
    });
  } catch (err) {
    await shipping?.stop();
    await Promise.all(logClients.map((c) => c.close()));
    throw err;
  }
  scheduler.start();

  logger.info({ url: http.url, servers: runtime.servers.map((s) => s.name), collectors: collectors.map((c) => c.name) }, 'exporter listening');

  return {
    url: http.url,
    scheduler,
    self,
    store,
    routes,
    scrape,
    async close() {
      // Order matters: stop polling, let sinks deliver and positions be saved, then stop answering.
      await scheduler.stop();
      await shipping?.stop();
      await Promise.all(logClients.map((c) => c.close()));
      await http.close();
    },
  };
}
