import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Collector } from '../collectors/collector.js';
import type { Scheduler } from '../polling/scheduler.js';
import type { RefreshThrottle } from '../polling/refresh-throttle.js';
import type { RuntimeConfig } from '../config/load.js';
import { crossSiteReason } from '../http/cross-site.js';
import { probe, probeDeadlineMs, ProbeRequestError, resolveProbe } from '../http/probe.js';
import { sendMetrics, sendText, wantsGzip, type RouteHandler } from '../http/server.js';
import { buildStatus, type StatusFacts } from '../status/status-api.js';
import type { Logger } from '../base/logger.js';
import type { SelfMetrics } from '../metrics/self-metrics.js';
import type { SnapshotStore } from '../metrics/snapshot-store.js';
import type { WebhookEvent } from '../webhooks/event.js';
import type { CompilerTrigger } from './compiler-trigger.js';
import type { LogHost } from './log-host.js';
import type { ServerSet } from './server-set.js';

/** The outcome of a reload, as `POST /-/reload` answers it. */
export type ReloadOutcome = { ok: true } | { ok: false; message: string };

/** What the routes read from the running exporter: getters, because a reload replaces the scheduler. */
export interface RouteContext {
  /** The configuration the exporter started with: `web.*` and `webhooks.*` are read at start only. */
  initial: RuntimeConfig;
  runtime: () => RuntimeConfig;
  scheduler: () => Scheduler;
  collectors: () => Collector[];
  servers: ServerSet;
  logs: LogHost;
  self: SelfMetrics;
  store: SnapshotStore;
  facts: StatusFacts;
  compilers: CompilerTrigger;
  /** Re-polls what a webhook event names, coalesced. */
  refreshes: RefreshThrottle;
  logger: Logger;
  startedAt: number;
  /** The exporter's own series, rendered per scrape. */
  ownMetrics: () => Promise<string>;
  /** Reads the configuration again (the serve command knows where from). */
  reloadConfig?: () => Promise<ReloadOutcome>;
  /** Receives accepted webhook events besides the log sinks. */
  forwardEvent?: (server: string, event: WebhookEvent) => Promise<void> | void;
}

/** Every HTTP route of `serve`, and the links its landing page shows. */
export async function buildRoutes(ctx: RouteContext): Promise<{ routes: Map<string, RouteHandler>; links: { path: string; text: string }[] }> {
  const { initial, logger } = ctx;
  const routes = new Map<string, RouteHandler>();
  // Like every web.* setting, read at start.
  const telemetryPath = initial.config.web.telemetry_path;
  routes.set(telemetryPath, async (req, res) => {
    const fresh = await ctx.ownMetrics();
    await sendMetrics(req, res, { cached: await ctx.store.encodedInSlices(wantsGzip(req)), fresh });
  });
  routes.set('/-/healthy', (_req, res) => sendText(res, 200, 'OK\n'));
  routes.set('/-/ready', (_req, res) =>
    ctx.scheduler().ready ? sendText(res, 200, 'ready\n') : sendText(res, 503, 'not ready: the first poll has not completed yet\n'),
  );
  routes.set('/-/reload', (req, res) => reloadRoute(ctx, req, res));
  routes.set('/probe', (req, res, url) => probeRoute(ctx, req, res, url));

  let lastEvent: { name: string; server: string; at: number } | undefined;
  const wh = initial.config.webhooks;
  if (wh.enabled) {
    if (initial.webhookSecret === undefined) {
      logger.warn({ component: 'webhooks', path: wh.path }, 'the webhook receiver takes events WITHOUT authentication (webhooks.insecure_allow_unauthenticated): anyone who reaches this port can post them');
    }
    const { createWebhookReceiver } = await import('../webhooks/receiver.js');
    const polled = ctx.servers.polled;
    routes.set(
      wh.path,
      createWebhookReceiver({
        secret: initial.webhookSecret,
        auth: wh.auth,
        maxTokenLifetimeSeconds: wh.max_token_lifetime / 1000,
        knownApplications: (server) => ctx.scheduler().applicationsOf(server),
        clockSkewSeconds: wh.clock_skew / 1000,
        dedupeWindow: wh.dedupe_window,
        registry: ctx.self.registry,
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
          await Promise.all([ctx.forwardEvent?.(server, event), ctx.logs.publishEvent(server, event), refresh ? ctx.refreshes.request(server) : undefined]);
        },
      }),
    );
  }

  const status = () => {
    const runtime = ctx.runtime();
    const scheduler = ctx.scheduler();
    const logs = ctx.logs.status();
    return buildStatus({
      startedAt: ctx.startedAt,
      ready: scheduler.ready,
      shard: runtime.config.shard,
      servers: ctx.servers.targets(),
      reached: (server) => scheduler.reached(server),
      downReason: (server) => scheduler.downReason(server),
      jobs: scheduler.jobStates(),
      facts: ctx.facts,
      registry: ctx.self.registry,
      ...(logs ? { logs } : {}),
      ...(runtime.config.webhooks.enabled ? { webhooks: { auth: runtime.webhookSecret === undefined ? ('none' as const) : runtime.config.webhooks.auth, lastEvent } } : {}),
    });
  };
  const links = [
    { path: telemetryPath, text: 'Metrics' },
    { path: '/api/v1/status', text: 'Status (JSON)' },
    { path: '/-/healthy', text: 'Health' },
    { path: '/-/ready', text: 'Readiness' },
    // No /probe link: a probe needs a target the module's allowed_targets lets through, which no link can know
    // (one made up answered 400). docs/fleets-and-probe.md says how to call it.
    ...(wh.enabled ? [{ path: wh.path, text: 'Webhook receiver (POST)' }] : []),
  ];
  // The page's renderer is loaded by the first request for it.
  routes.set('/', async (_req, res) => (await import('../status/status-page.js')).sendStatusPage(res, links));
  routes.set('/favicon.ico', async (_req, res) => (await import('../status/status-page.js')).sendFavicon(res));
  routes.set('/api/v1/status', async (_req, res) => {
    const body = JSON.stringify(await status(), null, 2) + '\n';
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
    res.end(body);
  });
  return { routes, links };
}

async function reloadRoute(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  req.resume();
  // Like every web.* setting, read at start: a reload cannot turn itself on.
  if (!ctx.initial.config.web.enable_lifecycle) {
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
    ctx.logger.warn({ component: 'http', reason: crossSite }, 'refused a reload a browser sent from another site');
    sendText(res, 403, `refused: ${crossSite}\n`);
    return;
  }
  if (!ctx.reloadConfig) {
    sendText(res, 500, 'this exporter was not started from a configuration it can read again\n');
    return;
  }
  const outcome = await ctx.reloadConfig();
  if (outcome.ok) sendText(res, 200, 'configuration reloaded\n');
  else sendText(res, 500, `configuration refused, the previous one stays in use:\n${outcome.message}\n`);
}

async function probeRoute(ctx: RouteContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const runtime = ctx.runtime();
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
  let answer: Awaited<ReturnType<typeof probe>>;
  try {
    answer = await probe(runtime, resolved, ctx.collectors(), deadline, ctx.logger.child({ component: 'probe' }), gone.signal, runtime.config.log.probe_level);
  } finally {
    res.off('close', onClose);
  }
  ctx.self.probes.inc({ module: resolved.moduleName });
  if (answer.failure !== undefined) ctx.self.probeFailures.inc({ module: resolved.moduleName, reason: answer.failure });
  if (gone.signal.aborted) return;
  ctx.compilers.probed(answer.series);
  await sendMetrics(req, res, answer.body);
}
