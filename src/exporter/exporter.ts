/**
 * The composition root of `serve`: builds the pieces, starts them in order, applies a reload plan, closes in order.
 * Beside it in src/exporter/: the server set, every route, the log pipeline's lifecycle, the reload decision.
 */
import type { Collector } from '../collectors/collector.js';
import { wseCollectorsEnabled } from '../collectors/registry.js';
import { Scheduler } from '../polling/scheduler.js';
import { REFRESHED_BY_EVENTS, RefreshThrottle } from '../polling/refresh-throttle.js';
import { intervalFor, type RuntimeConfig } from '../config/load.js';
import type { RouteHandler } from '../http/server.js';
import { StatusFacts } from '../status/status-api.js';
import { BUILD } from '../base/build-info.js';
import type { Logger } from '../base/logger.js';
import { createSelfMetrics, forgetServer, type SelfMetrics } from '../metrics/self-metrics.js';
import { renderSelfMetrics } from '../metrics/server-labels.js';
import { SnapshotStore } from '../metrics/snapshot-store.js';
import { SeriesCap } from '../metrics/series-cap.js';
import { videoPollJobs } from '../video/poll-job.js';
import type { WowzaTarget } from '../wowza/client.js';
import type { WebhookEvent } from '../webhooks/event.js';
import { LoopLoad } from '../polling/loop-load.js';
import { runInSlices } from '../base/time-slices.js';
import { CompilerTrigger } from './compiler-trigger.js';
import { ConnectionCountsFinder } from './connection-counts-finder.js';
import { listen, loadWebSettings } from './listen.js';
import { LogHost } from './log-host.js';
import { planReload } from './reload-plan.js';
import { buildRoutes, type ReloadOutcome } from './routes.js';
import { ServerSet } from './server-set.js';

export type { ReloadOutcome } from './routes.js';

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

export interface ExporterExtras {
  selfMetrics?: SelfMetrics;
  /** Receives accepted webhook events (the log sinks, so events land beside the logs). */
  forwardEvent?: (server: string, event: WebhookEvent) => Promise<void> | void;
  /** Reads the configuration again for `POST /-/reload` (the serve command knows where from). */
  reloadConfig?: () => Promise<ReloadOutcome>;
}

/** The store of every server's rendered sets, bounded per server in series and bytes by the discovery settings in force. */
function snapshotStore(self: SelfMetrics, runtime: () => RuntimeConfig, logger: Logger): SnapshotStore {
  const cap = new SeriesCap({
    max: () => runtime().config.discovery.max_series_per_server,
    maxBytes: () => runtime().config.discovery.max_bytes_per_server,
    onDropped: (server, n) => self.seriesDropped.set({ server }, n),
    onShortened: (server, collector, label, n) => self.labelValuesShortened.set({ server, collector, label }, n),
    log: logger.child({ component: 'series-cap' }),
  });
  return new SnapshotStore(cap);
}

/**
 * The exporter's own series at a scrape. Those of each server are stored with its sets, rendered again only when they
 * changed since the last scrape; the rest are few and rendered now, after the Wowza part.
 */
async function renderOwnMetrics(self: SelfMetrics, store: SnapshotStore, servers: ServerSet): Promise<string> {
  // Every name with own series: the WSE servers and the Wowza Video job's. A removed server writes nowhere from its
  // removal on (forgetServer; ServerMetrics drops its late writes until it is added again), and its set is read at
  // its turn, so one removed meanwhile puts nothing back.
  // In slices: at a fleet every server changed since the last scrape, hundreds of milliseconds of rendering.
  const changed = self.perServer.takeChanged();
  await runInSlices(
    (function* () {
      for (const name of changed) {
        store.putOwn(name, self.perServer.setOf(name));
        yield;
      }
    })(),
  );
  return renderSelfMetrics(self.registry, servers.labels);
}

/**
 * Watches the event loop's load (polls are spaced out while it is saturated), saying when that starts and ends; a busy
 * loop turns V8's compilers on.
 */
function watchLoopLoad(logger: Logger, compilers: CompilerTrigger): LoopLoad {
  const loopLoad = new LoopLoad(
    (spacing, utilization) => {
      const busy = { event_loop_utilization: Number(utilization.toFixed(2)) };
      if (spacing > 1) logger.warn(busy, 'the exporter\'s event loop is saturated: polls are spaced further apart than configured until it is not (wowza_exporter_collector_interval_seconds); more servers than one replica can poll here, split them with --shard');
      else logger.info(busy, 'polls are back at their configured intervals: the exporter\'s event loop has room again');
    },
    (utilization) => compilers.loopBusy(utilization),
  );
  loopLoad.start();
  return loopLoad;
}

/** Starts collectors and the HTTP server for a validated configuration. */
export async function startExporter(initial: RuntimeConfig, logger: Logger, extra: ExporterExtras = {}): Promise<Exporter> {
  // Said once at start: which build is running is the first question about any log.
  logger.info({ version: BUILD.version, revision: BUILD.revision, node: process.version }, `wowza-exporter ${BUILD.version} (revision ${BUILD.revision}) starting`);
  const startedAt = Date.now();
  const self = extra.selfMetrics ?? createSelfMetrics();
  let runtime = initial;
  const store = snapshotStore(self, () => runtime, logger);
  let collectors: Collector[] = wseCollectorsEnabled(runtime.collectors);
  const facts = new StatusFacts();
  const compilers = new CompilerTrigger(logger);
  const loopLoad = watchLoopLoad(logger, compilers);
  const newScheduler = () =>
    new Scheduler({
      config: runtime.config,
      collectors,
      intervalOf: (c, target) => intervalFor(runtime, c.name, target),
      self, store, logger, loopLoad,
      onPoll: (spec, result) => {
        facts.record(spec, result);
        compilers.polled(spec.server, spec.collector, result.ok ? result.set.size : undefined);
      },
    });
  let scheduler = newScheduler();
  // Webhook events re-poll what they name, at most once a second per server (coalesced).
  const refreshes = new RefreshThrottle((server) => scheduler.refresh(server, REFRESHED_BY_EVENTS));
  for (const job of await videoPollJobs(runtime, self, logger)) scheduler.addJob(job);
  self.reloadSuccessful.set(1);
  self.reloadSuccessTime.set(Date.now() / 1000);

  // Log reads are requests to the server like the polls: within its budget (the session of the scheduler in use).
  const logs = new LogHost({ self, logger, onStart: () => compilers.turnOnFor('logs'), budgetOf: (name) => scheduler.servers.get(name)?.logLimit });
  const finder = new ConnectionCountsFinder(logger, () => runtime.collectors.connectioncounts.enabled);
  const servers = new ServerSet({
    runtime: () => runtime,
    finder,
    logger,
    onFileError: (file) => self.serversFileErrors.inc({ file }),
    added: (name, s) => {
      self.perServer.revive(name);
      store.setServerLabels(name, servers.labels.get(name) ?? '');
      scheduler.addServer(s.target);
      logs.follow(name, s.logTarget);
    },
    removed: async (name) => {
      refreshes.forget(name);
      facts.forget(name);
      await scheduler.removeServer(name);
      await logs.unfollow(name);
      await forgetServer(self, name);
      // A scrape while it was being removed may have stored its own series again.
      store.deleteServer(name);
    },
    applied: (count, overLimit) => {
      self.servers.set(count);
      self.serversOverLimit.set(overLimit);
    },
  });
  finder.startRetries(() => runtime.servers, () => servers.apply());

  const ownMetrics = () => renderOwnMetrics(self, store, servers);
  const { routes, links } = await buildRoutes({
    initial, servers, logs, self, store, facts, compilers, refreshes, logger, ownMetrics, startedAt,
    runtime: () => runtime, scheduler: () => scheduler, collectors: () => collectors,
    ...(extra.reloadConfig ? { reloadConfig: extra.reloadConfig } : {}),
    ...(extra.forwardEvent ? { forwardEvent: extra.forwardEvent } : {}),
  });

  const web = await loadWebSettings(runtime, logger);
  // Log shipping starts first: a bad sink (an unreadable secret file) must stop the start before anything
  // listens or polls.
  await logs.start(runtime, servers.logTargets());
  let http;
  try {
    http = await listen(runtime, { web, routes, links, registry: self.registry, logger });
  } catch (err) {
    await logs.stop();
    throw err;
  }
  // Polling starts first and servers join it as they are added: a fleet's target file is added in steps (server-set.ts),
  // and the exporter is ready once all of them are in and polled once.
  const filesRead = servers.startFiles();
  scheduler.holdReady(Promise.all([servers.apply(), filesRead.then(() => servers.apply())]));
  scheduler.start();

  logger.info({ url: http.url, shard: runtime.config.shard, collectors: collectors.map((c) => c.name) }, 'exporter listening');

  /** Applies a new configuration: only what changed is restarted. */
  const reload = async (next: RuntimeConfig) => {
    const plan = planReload(runtime, next, (rt) => wseCollectorsEnabled(rt.collectors).map((c) => c.name));
    for (const key of plan.restartNeeded) logger.warn({ setting: key }, `the ${key} settings take effect at the next restart; the rest of the configuration is applied now`);
    runtime = next;
    if (plan.logLevel) logger.level = plan.logLevel;
    await servers.settled();
    if (plan.repollAll) {
      // Every server is polled anew (one said down stays said down); their log followers keep going.
      logger.info('poll settings changed: every server is polled anew');
      const old = scheduler;
      collectors = wseCollectorsEnabled(next.collectors);
      scheduler = newScheduler().inheritStates(old);
      await old.stop();
      for (const [name, s] of servers.polled) {
        store.deleteServer(name);
        store.setServerLabels(name, servers.labels.get(name) ?? '');
        self.perServer.touch(name);
        for (const collector of plan.collectorsGone) for (const m of [self.collectorSuccess, self.collectorDuration, self.lastPoll]) m.remove({ server: name, collector });
        scheduler.addServer(s.target);
      }
      for (const job of await videoPollJobs(next, self, logger)) scheduler.addJob(job);
      scheduler.start();
    } else if (plan.restartVideo) {
      await scheduler.removeJobs((j) => j.spec.collector === 'video');
      for (const job of await videoPollJobs(next, self, logger)) scheduler.addJob(job);
    }
    if (plan.restartLogs) {
      logger.info('log shipping settings changed: restarting it (positions are kept)');
      await logs.stop();
      await logs.start(next, servers.logTargets());
    }
    if (plan.restartServersFiles) {
      servers.stopFiles();
      await servers.startFiles();
    }
    await servers.apply();
  };

  return {
    url: http.url,
    get scheduler() {
      return scheduler;
    },
    self,
    store,
    routes,
    servers: () => servers.targets(),
    // The exporter's own series are read first, as /metrics does.
    scrape: async () => { const own = await ownMetrics(); return store.render() + own; },
    reload,
    async close() {
      // Order matters: stop polling, let sinks deliver and positions be saved, then stop answering.
      servers.stopWatching();
      refreshes.stop();
      finder.stop();
      loopLoad.stop();
      await servers.settled();
      await scheduler.stop();
      await logs.stop();
      await http.close();
    },
  };
}
