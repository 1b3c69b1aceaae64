import type { PollBase } from '../collectors/collector.js';
import { ObjectErrorLog, type ObjectOutcomes } from '../collectors/object-errors.js';
import { vocabularyCache } from '../collectors/label-vocabulary.js';
import { Discovery } from '../collectors/discovery.js';
import type { Collector, Limit } from '../collectors/collector.js';
import { Notices } from '../collectors/notices.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../base/logger.js';
import type { SelfMetrics } from '../metrics/self-metrics.js';
import { WowzaClient, type WowzaTarget } from '../wowza/client.js';
import { BudgetedDiscovery } from './budgeted-discovery.js';
import { ConcurrencyLimiter } from './concurrency-limiter.js';
import { digestConcurrency, type PacedCycle } from './digest-pacing.js';
import { budgetPlan, DISCOVERY, LOGS, logShare, type BudgetPlan, type ServerSize, type StretchedInterval } from './request-budget.js';
import { RequestPacer } from './request-pacer.js';
import { runCollector, type PollResult } from './poll-result.js';

/** The limiter `poll.concurrency` asks for: a fixed number, or `auto` up to `poll.concurrency_max`. */
export function limiterFor(config: Config, onLimit?: (limit: number) => void): ConcurrencyLimiter {
  const c = config.poll.concurrency;
  return new ConcurrencyLimiter(c === 'auto' ? { max: config.poll.concurrency_max, onLimit } : { fixed: c, onLimit });
}

/**
 * One server's session while it is polled: its connection pool, concurrency limiter, request pacer and discovery
 * cache, kept from one poll to the next.
 */
export class ServerSession {
  readonly client: WowzaClient;
  readonly limiter: ConcurrencyLimiter;
  /** Every request of this server passes it: poll.max_requests_per_second (request-pacer.ts). */
  readonly pacer: RequestPacer;
  readonly discovery: BudgetedDiscovery;
  /** Aborted when the server is no longer polled: ends the walk and the requests waiting for the budget. */
  private readonly closing = new AbortController();
  private readonly budget: number;
  private readonly configured: ReadonlyMap<string, number>;
  /** The plan in force and the topology it was made for. */
  private planned: { plan: BudgetPlan; for: object | undefined } | undefined;
  /** The walk's age is stretched, and that was said. */
  private walkStretched = false;
  private readonly objectErrors = new Map<string, ObjectErrorLog>();
  private readonly vocabularies = vocabularyCache();
  private readonly notices = new Notices();
  /** Endpoints whose lists were cut to max_list_items (said once each). */
  private readonly capped = new Set<string>();
  /** The stream cycle running under Digest pacing, and the last one that ended. */
  private paced: { concurrency: number; started: number } | undefined;
  private lastPaced: PacedCycle | undefined;

  constructor(
    readonly target: WowzaTarget,
    config: Config,
    private readonly discoveryMaxAgeMs: number,
    readonly log: Logger,
    private readonly self?: SelfMetrics,
    /** Per-stream viewers come from the connectioncounts collector. */
    private readonly viewersFromConnectionCounts = false,
    /** The configured interval of each collector polling this server (the budget plan's input). */
    configured: ReadonlyMap<string, number> = new Map(),
  ) {
    const server = target.name;
    this.budget = config.poll.max_requests_per_second;
    this.configured = configured;
    this.limiter = limiterFor(config, self ? (n) => self.concurrencyLimit.set({ server }, n) : undefined);
    this.pacer = new RequestPacer(this.budget, this.limiter);
    this.client = sessionClient(target, this.limiter, {
      onRequest: (endpoint, code, seconds) => self?.observeRequest(server, endpoint, code, seconds),
      onChallenge: (reason) => self?.authChallenges.inc({ server, reason }),
      onListCapped: (endpoint, dropped, max) => {
        self?.listItemsDropped.inc({ server, endpoint }, dropped);
        // Said once per endpoint: a list over the cap is over it at every poll.
        if (this.capped.has(endpoint)) return;
        this.capped.add(endpoint);
        log.warn({ endpoint, dropped, max }, 'an answer had a list longer than max_list_items: its first items are read, the rest left out (counted in wowza_exporter_list_items_dropped_total)');
      },
    });
    const walkLimit: Limit = (fn) => this.pacer.run(DISCOVERY, this.closing.signal, fn);
    const walkAge = () => this.plan().intervals.get(DISCOVERY)?.intervalMs ?? discoveryMaxAgeMs;
    this.discovery = new BudgetedDiscovery(this.client, walkLimit, config.discovery, walkAge, log, this.closing.signal);
  }

  /** Requests outside any collector's poll (paced like the rest). */
  get limit(): Limit {
    return (fn) => this.pacer.run('other', undefined, fn);
  }

  /**
   * The log follower's page reads of this server: requests to it like the polls', so within its budget, in a lane of
   * their own weighted by logShare (request-budget.ts). A read waiting when the server stops being polled is refused.
   */
  get logLimit(): Limit {
    return (fn) => this.pacer.run(LOGS, this.closing.signal, fn);
  }

  /** What discovery last found (zeros before it ran). */
  get size(): ServerSize {
    const known = this.discovery.known;
    if (!known) return { vhosts: 0, apps: 0, streams: 0 };
    return {
      vhosts: known.vhosts.length,
      apps: known.apps.length,
      streams: known.streams.length,
      targetApps: known.apps.filter((a) => a.app.streamTargetsEnabled === true).length,
      recorderLists: known.instances.filter((i) => i.instance.recorders === undefined).length,
    };
  }

  /**
   * The budget plan for what discovery last found (request-budget.ts), made again when a walk brings a new topology;
   * until the first walk, the configured intervals (the pacer holds the budget meanwhile). Gives the pacer its shares.
   */
  plan(): BudgetPlan {
    const known = this.discovery.known;
    if (this.planned && (this.planned.for === known || known === undefined)) return this.planned.plan;
    const plan = budgetPlan(this.budget, this.size, this.configured, this.discoveryMaxAgeMs);
    this.planned = { plan, for: known };
    this.pacer.setShares(new Map([...plan.shares, [LOGS, logShare(this.budget, plan.shares, known !== undefined)]]));
    this.sayWalk(plan.intervals.get(DISCOVERY));
    return plan;
  }

  /** The interval `collector` polls at now: configured, or stretched by the budget. */
  intervalFor(collector: string): StretchedInterval {
    return this.plan().intervals.get(collector) ?? { intervalMs: this.configured.get(collector) ?? 0 };
  }

  /** The discovery walk's age when the budget stretches it (undefined when it does not). */
  get walkStretch(): StretchedInterval | undefined {
    const walk = this.plan().intervals.get(DISCOVERY);
    return walk?.reason ? walk : undefined;
  }

  /** The walk is no job of the scheduler: its stretch is shown here, as the scheduler shows a collector's. */
  private sayWalk(walk: StretchedInterval | undefined): void {
    const server = this.target.name;
    if (walk?.reason) {
      this.self?.collectorInterval.set({ server, collector: DISCOVERY }, walk.intervalMs / 1000);
      if (!this.walkStretched) this.log.info({ server, collector: DISCOVERY, interval_seconds: walk.intervalMs / 1000, reason: walk.reason }, 'collector interval stretched to fit the request budget');
      this.walkStretched = true;
    } else if (this.walkStretched) {
      this.self?.collectorInterval.remove({ server, collector: DISCOVERY });
      this.log.info({ server, collector: DISCOVERY, interval_seconds: (walk?.intervalMs ?? 0) / 1000 }, 'collector interval back to the configured one');
      this.walkStretched = false;
    }
  }

  /**
   * Waits, without any poll's deadline, for a topology as young as the plan asks (a walk paced through the budget can
   * take minutes); a failed walk is left for the poll to meet and report.
   */
  async topologyReady(): Promise<void> {
    if (this.discovery.fresh) return;
    await this.discovery.get(this.closing.signal).then(
      () => undefined,
      () => undefined,
    );
  }

  /** Ends the walk and refuses the requests waiting for the budget (the server is removed or the exporter stops). */
  stopRequests(): void {
    this.closing.abort();
    this.pacer.close();
  }

  /** Before a stream cycle: on a Digest server, the concurrency that spends each nonce fully (digest-pacing.ts). */
  paceCycle(intervalMs: number): void {
    if (this.client.auth.activeScheme !== 'digest') {
      this.paced = undefined;
      return this.limiter.setCeiling(Infinity);
    }
    const { vhosts, apps, streams } = this.size;
    const answers = { fastestMs: this.limiter.fastestMs, typicalMs: this.limiter.typicalMs };
    const concurrency = digestConcurrency(3 + vhosts + apps + streams, answers, intervalMs, this.lastPaced);
    this.paced = Number.isFinite(concurrency) ? { concurrency, started: performance.now() } : undefined;
    this.limiter.setCeiling(concurrency);
  }

  /** After a stream cycle: how long it took at the concurrency it was paced to, for the next one. */
  cycleDone(): void {
    this.lastPaced = this.paced ? { concurrency: this.paced.concurrency, ms: performance.now() - this.paced.started } : undefined;
    this.paced = undefined;
  }

  context(collector: string, signal: AbortSignal, log: Logger): PollBase {
    const server = this.target.name;
    const vanished = () => this.self?.vanishedObjects.inc({ server, collector });
    return {
      client: this.client,
      server,
      // Each collector is a lane of the pacer, its waiting requests dropped when its poll's deadline passes.
      limit: (fn) => this.pacer.run(collector, signal, fn),
      signal,
      discovery: this.discovery,
      log,
      vanished,
      viewersFromConnectionCounts: this.viewersFromConnectionCounts,
      vocabulary: this.vocabularies,
      notices: this.notices,
    };
  }

  /** This poll's object outcomes for `collector`: failures counted in wowza_exporter_object_errors_total and logged on change. */
  objectsFor(collector: string, log: Logger): ObjectOutcomes {
    let errors = this.objectErrors.get(collector);
    if (!errors) {
      const server = this.target.name;
      errors = new ObjectErrorLog((reason) => this.self?.objectErrors.inc({ server, collector, reason }));
      this.objectErrors.set(collector, errors);
    }
    return errors.forPoll(log);
  }

  close(): Promise<void> {
    this.stopRequests();
    return this.client.close();
  }
}

interface ClientHooks {
  onRequest?: (endpoint: string, code: string, seconds: number) => void;
  onChallenge?: (reason: string) => void;
  onListCapped?: (endpoint: string, dropped: number, max: number) => void;
}

/** A session's client: every answer also teaches the session's limiter how fast the server is. */
function sessionClient(target: WowzaTarget, limiter: ConcurrencyLimiter, hooks: ClientHooks): WowzaClient {
  return new WowzaClient(target, {
    onRequest: (endpoint, code, seconds) => {
      hooks.onRequest?.(endpoint, code, seconds);
      limiter.observe(endpoint, code, seconds);
    },
    ...(hooks.onChallenge ? { onChallenge: hooks.onChallenge } : {}),
    ...(hooks.onListCapped ? { onListCapped: hooks.onListCapped } : {}),
  });
}

/**
 * A session for one poll outside the schedule (`/probe`, `doctor`): a client and limiter of its own and a plain
 * discovery walk, unpaced. Nothing of it outlives the poll, and none of its requests are counted in the exporter's
 * registry unless the caller's hooks count them (blackbox_exporter keeps a probe out of its own metrics too).
 */
export class OneOffSession {
  readonly limiter: ConcurrencyLimiter;
  readonly client: WowzaClient;
  readonly discovery: Discovery;

  constructor(
    readonly target: WowzaTarget,
    config: Config,
    o: ClientHooks & { discoveryMaxAgeMs: number; log: Logger },
  ) {
    this.limiter = limiterFor(config);
    this.client = sessionClient(target, this.limiter, o);
    this.discovery = new Discovery(this.client, this.limiter.run, config.discovery, o.discoveryMaxAgeMs, o.log);
  }

  /** Runs every collector that applies to the target, side by side, into fresh sets; never throws. */
  pollAll(collectors: readonly Collector[], signal: AbortSignal, log: Logger): Promise<PollResult[]> {
    const base: PollBase = { client: this.client, server: this.target.name, limit: this.limiter.run, signal, discovery: this.discovery, log, vanished: () => {}, vocabulary: vocabularyCache() };
    return Promise.all(collectors.filter((c) => c.appliesTo?.(this.target) ?? true).map((c) => runCollector(c, base)));
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
