import type { Config } from '../config/schema.js';
import type { Logger } from '../base/logger.js';
import type { MetricSet } from '../metrics/metric-set.js';
import type { SelfMetrics } from '../metrics/self-metrics.js';
import type { SnapshotStore } from '../metrics/snapshot-store.js';
import type { WowzaTarget } from '../wowza/client.js';
import { adviceText, adviseFailure, FIX, foreignAnswer, NOT_REST_API, type Advice } from '../wowza/failure-advice.js';
import type { Collector } from '../collectors/collector.js';
import { errorReason, type ObjectSummary } from '../collectors/object-errors.js';
import { pollDeadlineMs } from '../config/poll-deadline.js';
import { EXPECTED_SET, expectedStreamsSet } from '../collectors/expected-streams.js';
import { RequestDeadline } from '../base/request-deadline.js';
import { BudgetWaitError } from './request-pacer.js';
import { DiscoveryWaitError } from './budgeted-discovery.js';
import { runCollector, type PollResult } from './poll-result.js';
import { ServerSession } from './server-session.js';
import { DISCOVERY, type StretchedInterval } from './request-budget.js';

/** One scheduled poll: a WSE collector of one server, or a source of its own (Wowza Video). */
export interface PollJobSpec {
  /** The `server` and `collector` labels of its self metrics. */
  server: string;
  collector: string;
  intervalMs: number;
  /** Whether its failures say anything about `wowza_up` of `server`. */
  setsUp: boolean;
  poll(signal: AbortSignal, log: Logger): Promise<PollResult>;
  /** Drops cached discovery before an out-of-schedule poll. */
  invalidate?(): void;
  /** The interval now, when it can differ from `intervalMs` (stretched to fit a request budget), and why. */
  intervalNow?(): StretchedInterval;
  /** Waited for before the poll's deadline starts (a discovery walk paced through the budget). */
  prepare?(): Promise<void>;
}

/** What the last poll of a job did, for the status page and `/api/v1/status`. */
export interface LastPoll {
  /** Epoch ms it ended. */
  at: number;
  seconds: number;
  ok: boolean;
  /** The error kind (`timeout`, `http`, `unparsable`...) when it failed. */
  reason?: string;
  /** The message as logged when it failed. */
  error?: string;
  /** Series it stored. */
  series: number;
  /** For collectors of one request per object: how many there were and how many failed. */
  objects?: ObjectSummary;
}

/** A job's interval in force and last poll, for the status page. */
export interface JobState {
  server: string;
  collector: string;
  intervalMs: number;
  intervalReason?: string;
  last?: LastPoll;
  running: boolean;
}

interface Job {
  spec: PollJobSpec;
  /** The interval is stretched by the request budget, and that was said. */
  stretched?: boolean;
  timer?: NodeJS.Timeout;
  /** The interval the pending timer was set with. */
  scheduledMs?: number;
  running?: Promise<void>;
  again: boolean;
  polled: boolean;
  stopped: boolean;
  last?: LastPoll;
  /** The reason of the failure last said at warn level (undefined once a poll succeeds again). */
  failureSaid?: string;
  /** The poll before was held back by the exporter (heldBackByExporter): a run of such polls is said once. */
  heldBack?: boolean;
}

/** Why every interval is longer while the exporter's event loop is saturated (loop-load.ts). */
const LOOP_SATURATED = "the exporter's event loop is saturated: every poll is spaced further apart (split the servers over replicas with --shard)";

/** The state key of a server that is up (a down one is keyed by why). */
const UP = 'up';

/** What the status page says of a collector whose values an outage took away (Scheduler.forgetValues). */
const OUT_BEFORE_ITS_END = { reason: 'server_down', error: 'its values are from before the server went down: they are not exported while it is down' } as const;

/**
 * A failure of the exporter's own pacing, not of the server: a request held back past the poll's deadline (a budget
 * wait), or the discovery walk the poll waited for not done by then.
 */
function heldBackByExporter(error: Error | undefined): boolean {
  return error instanceof BudgetWaitError || error instanceof DiscoveryWaitError;
}

/** A success that sent no request of its own: read from the discovery walk alone (the instance collector). */
function askedNothing(result: PollResult): boolean {
  return result.ok && result.answered === false;
}

interface Outcome {
  reached: boolean;
  rest: boolean;
  error?: Error;
  /**
   * A failure to reach the server that an answer after an outage set aside (recordOutcome): it no longer holds the
   * server down, and its collector polls again at once to say how it stands now.
   */
  setAside?: boolean;
  /** When it was recorded (performance.now()). */
  at: number;
}

export interface SchedulerOptions {
  config: Config;
  collectors: Collector[];
  /** How often a collector polls a server. */
  intervalOf: (collector: Collector, target: WowzaTarget) => number;
  self: SelfMetrics;
  store: SnapshotStore;
  logger: Logger;
  /** Sees every poll's result (the status page keeps a few facts of it). */
  onPoll?: (spec: PollJobSpec, result: PollResult) => void;
  /** Spaces every job's polls further apart while the exporter's own event loop is saturated (loop-load.ts). */
  loopLoad?: { readonly spacing: number };
}

/**
 * Owns timing: every (server, collector) polls on its own interval with jitter and a deadline below the
 * interval; a poll still running is never started twice. Results replace the collector's series whole.
 * Servers come and go at run time (target files, reloads): a server added starts polling at once; a server
 * removed stops, and its series go with it.
 */
export class Scheduler {
  private readonly runtimes = new Map<string, ServerSession>();
  /** Every job, in the order added (a Set: a fleet has tens of thousands, and servers come and go one at a time). */
  private readonly jobs = new Set<Job>();
  /** The jobs of each server. */
  private readonly jobsOf = new Map<string, Job[]>();
  /** Jobs that have not finished a poll yet, and the start-ups still adding servers: ready is when both are none. */
  private unpolled = 0;
  private held = 0;
  /** Latest outcome of each up-setting collector, per server. */
  private readonly reachedBy = new Map<string, Map<string, Outcome>>();
  /** Per server, the collectors that failed to reach it since it was last up: more than one is an outage, not an endpoint. */
  private readonly failedWhileDown = new Map<string, Set<string>>();
  /** Per server, when it last answered again after an outage (performance.now()). */
  private readonly recoveredAt = new Map<string, number>();
  /** Per server, when it was last said down (performance.now()). */
  private readonly downSince = new Map<string, number>();
  /** The state of each server last logged: `up`, or the kind and fix of why it is down. */
  private readonly stateSaid = new Map<string, string>();
  /** server, collector, field and reason of every drop already logged (bounded: the fields are the code's own names). */
  private readonly dropsSaid = new Set<string>();
  /** applicationsOf's answer per discovered topology (gone with it). */
  private readonly appsOf = new WeakMap<object, ReadonlySet<string>>();
  private started = false;
  private stopped = false;
  /** Aborted by stop(): polls in flight end now (a large document's parse included), not at their deadline. */
  private readonly stopping = new AbortController();
  private wasReady = false;
  private readyResolve!: () => void;
  /** Resolves once the scheduler is first `ready`. */
  readonly firstCycle = new Promise<void>((r) => (this.readyResolve = r));

  constructor(private readonly o: SchedulerOptions) {}

  /**
   * Takes over what `before` (the scheduler a reload replaces) last said of each server, and since when it is down: a
   * server down through a reload is not said down again at its first failure under the new schedule, and is said back
   * when it answers. Call before adding the servers.
   */
  inheritStates(before: Scheduler): this {
    for (const [server, said] of before.stateSaid) this.stateSaid.set(server, said);
    for (const [server, at] of before.downSince) this.downSince.set(server, at);
    return this;
  }

  /** True once every job there was at the start (and any added later) has finished a poll; it then stays true. */
  get ready(): boolean {
    if (!this.wasReady && this.started && this.unpolled === 0 && this.held === 0) {
      this.wasReady = true;
      this.readyResolve();
    }
    return this.wasReady;
  }

  /** The applications the last discovery of `server` found (any vhost), without asking the server. */
  applicationsOf(server: string): ReadonlySet<string> | undefined {
    const known = this.runtimes.get(server)?.discovery.known;
    if (!known) return undefined;
    // Asked once per webhook event: made once per walk, not per event.
    let apps = this.appsOf.get(known);
    if (!apps) this.appsOf.set(known, (apps = new Set(known.apps.map((a) => a.app.id))));
    return apps;
  }

  /** The server runtimes, by server name. */
  get servers(): ReadonlyMap<string, ServerSession> {
    return this.runtimes;
  }

  /** `wowza_up` of `server`: its latest polls reached the WSE REST API; undefined before any poll. */
  reached(server: string): boolean | undefined {
    return this.serverState(server)?.up;
  }

  /** Why `server` is down, with the next step (the same words as doctor's); undefined while it is up or not polled yet. */
  downReason(server: string): Advice | undefined {
    return this.serverState(server)?.advice;
  }

  /**
   * Up when the latest poll of every collector reached the server and at least one of them met an answer of the REST
   * API's shape: one object's 404 is Wowza's own, but a server where nothing answers as the API is not Wowza.
   */
  private serverState(server: string): { up: boolean; key: string; advice?: Advice } | undefined {
    const byCollector = this.reachedBy.get(server);
    if (!byCollector || byCollector.size === 0) return undefined;
    const t = this.runtimes.get(server)?.target;
    const ctx = { url: t?.url ?? '', username: t?.username, password: t?.password };
    const outcomes = [...byCollector.values()];
    const unreached = outcomes.find((o) => !o.reached && o.error && !o.setAside);
    if (unreached) {
      const err = unreached.error!;
      const advice = adviseFailure(err, ctx) ?? { cause: err.message, fix: FIX.unreachableHost };
      // Keyed by the kind of failure only: while a server is down its requests meet a reset on a pooled connection and
      // a refusal on a new one by turns, and that is one state (one line), not a change of cause each time.
      return { up: false, key: errorReason(err), advice };
    }
    if (outcomes.some((o) => o.rest)) return { up: true, key: UP };
    const foreign = (outcomes.find((o) => o.error && foreignAnswer(o.error)) ?? outcomes.find((o) => o.error))?.error;
    const advice = (foreign && adviseFailure(foreign, ctx)) || { cause: `${foreign ? `${foreign.message}: ` : ''}no answer had the shape of the REST API, ${NOT_REST_API}`, fix: FIX.notRestApi };
    return { up: false, key: `foreign\u0000${advice.fix}`, advice };
  }

  /** Every job's spec and last poll, for the status page; the interval is the one in force, with why it differs. */
  jobStates(): JobState[] {
    const spacing = this.o.loopLoad?.spacing ?? 1;
    const states: JobState[] = [...this.jobs].map((j) => {
      const now = j.spec.intervalNow?.();
      const reasons = [now?.reason, spacing > 1 ? LOOP_SATURATED : undefined].filter((r) => r !== undefined);
      return {
        server: j.spec.server,
        collector: j.spec.collector,
        intervalMs: (now?.intervalMs ?? j.spec.intervalMs) * spacing,
        ...(reasons.length > 0 ? { intervalReason: reasons.join('; ') } : {}),
        last: j.last,
        running: j.running !== undefined,
      };
    });
    // The discovery walk is no job, but when the budget stretches it, its interval is shown beside the collectors'.
    for (const [server, runtime] of this.runtimes) {
      const walk = runtime.walkStretch;
      if (walk) states.push({ server, collector: DISCOVERY, intervalMs: walk.intervalMs, intervalReason: walk.reason!, running: false });
    }
    return states;
  }

  /** Starts polling a server with every collector that applies to it (at once when the scheduler runs). */
  addServer(target: WowzaTarget): ServerSession {
    if (this.runtimes.has(target.name)) throw new Error(`server ${target.name} is already polled`);
    const o = this.o;
    const applying = o.collectors.filter((c) => c.appliesTo?.(target) ?? true);
    const intervals = applying.map((c) => o.intervalOf(c, target));
    const discoveryAge = Math.max(1, Math.min(...intervals, o.config.poll.interval) * 0.9);
    const counts = applying.some((c) => c.name === 'connectioncounts');
    const byName = new Map(applying.map((c, i) => [c.name as string, intervals[i]!]));
    const runtime = new ServerSession(target, o.config, discoveryAge, o.logger.child({ component: 'discovery', server: target.name }), o.self, counts, byName);
    this.runtimes.set(target.name, runtime);
    o.self.up.set({ server: target.name }, 0);
    if (target.expectedStreams?.length) void o.store.put(target.name, EXPECTED_SET, expectedStreamsSet(target.name, target.expectedStreams));
    for (const collector of applying) {
      // machine and status read no topology; every other collector reads the walk first.
      const walks = collector.name !== 'machine' && collector.name !== 'status';
      this.addJob({
        server: target.name,
        collector: collector.name,
        intervalMs: o.intervalOf(collector, target),
        setsUp: !collector.outsideRest,
        poll: async (signal, log) => {
          if (collector.name !== 'stream') return runCollector(collector, runtime.context(collector.name, signal, log), runtime.objectsFor(collector.name, log));
          runtime.paceCycle(runtime.intervalFor('stream').intervalMs);
          try {
            return await runCollector(collector, runtime.context(collector.name, signal, log), runtime.objectsFor(collector.name, log));
          } finally {
            runtime.cycleDone();
          }
        },
        invalidate: () => runtime.discovery.invalidate(),
        // Every collector's interval comes from the server's budget plan: the configured one while it fits.
        intervalNow: () => runtime.intervalFor(collector.name),
        ...(walks ? { prepare: () => runtime.topologyReady() } : {}),
      });
    }
    return runtime;
  }

  /** Stops polling a server: its jobs end (a running poll is waited for), its series and self metrics go. */
  async removeServer(name: string): Promise<void> {
    const runtime = this.runtimes.get(name);
    this.runtimes.delete(name);
    // Its polls may wait on the budget or a walk: they end now rather than when the budget would let them.
    runtime?.stopRequests();
    await this.stopJobs([...(this.jobsOf.get(name) ?? [])]);
    this.reachedBy.delete(name);
    this.failedWhileDown.delete(name);
    this.recoveredAt.delete(name);
    this.downSince.delete(name);
    this.stateSaid.delete(name);
    for (const said of this.dropsSaid) if (said.startsWith(`${name}\u0000`)) this.dropsSaid.delete(said);
    this.o.store.deleteServer(name);
    await runtime?.close();
  }

  /** A poll beside the WSE collectors (Wowza Video). */
  addJob(spec: PollJobSpec): void {
    const job: Job = { spec, again: false, polled: false, stopped: false };
    this.jobs.add(job);
    this.unpolled++;
    const mine = this.jobsOf.get(spec.server);
    if (mine) mine.push(job);
    else this.jobsOf.set(spec.server, [job]);
    if (this.started) void this.run(job);
  }

  /** Stops the jobs `which` selects and forgets them, once any running poll has ended. */
  removeJobs(which: (j: { spec: PollJobSpec }) => boolean): Promise<void> {
    return this.stopJobs([...this.jobs].filter(which));
  }

  /** Stops jobs, forgets them now and their series once their running polls have ended. */
  private async stopJobs(going: readonly Job[]): Promise<void> {
    for (const j of going) {
      j.stopped = true;
      if (j.timer) clearTimeout(j.timer);
      if (!j.polled) this.unpolled--;
      this.jobs.delete(j);
      const mine = this.jobsOf.get(j.spec.server);
      const at = mine?.indexOf(j) ?? -1;
      if (at >= 0) mine!.splice(at, 1);
      if (mine?.length === 0) this.jobsOf.delete(j.spec.server);
    }
    await Promise.allSettled(going.map((j) => j.running));
    for (const j of going) this.o.store.delete(j.spec.server, j.spec.collector);
  }

  /** Not ready until `adding` settles (servers still being added at start-up). */
  holdReady(adding: Promise<unknown>): void {
    this.held++;
    const done = () => {
      this.held--;
      void this.ready;
    };
    adding.then(done, done);
  }

  start(): void {
    this.started = true;
    for (const job of this.jobs) void this.run(job);
    void this.ready; // nothing to poll: ready at once
  }

  /** Polls the given collectors of one server now (a webhook saw a change); coalesces with a running poll. */
  async refresh(server: string, collectors: string[]): Promise<void> {
    const jobs = (this.jobsOf.get(server) ?? []).filter((j) => collectors.includes(j.spec.collector));
    jobs[0]?.spec.invalidate?.();
    await Promise.all(jobs.map((j) => this.pollNow(j)));
  }

  private async pollNow(job: Job): Promise<void> {
    if (job.running) {
      job.again = true;
      await job.running;
      if (job.running) await job.running;
      return;
    }
    await this.run(job, false);
  }

  private run(job: Job, reschedule = true): Promise<void> {
    if (this.stopped || job.stopped) return Promise.resolve();
    if (job.running) {
      // A timer that fires while the last poll still runs must keep the schedule going, or polling stops.
      if (reschedule) this.schedule(job);
      return job.running;
    }
    if (reschedule && job.timer) clearTimeout(job.timer);
    job.running = this.pollOnce(job).finally(() => {
      job.running = undefined;
      if (!job.polled && !job.stopped) this.unpolled--;
      job.polled = true;
      void this.ready;
      if (job.again && !this.stopped && !job.stopped) {
        job.again = false;
        void this.run(job, false);
      }
    });
    if (reschedule) this.schedule(job);
    return job.running;
  }

  private schedule(job: Job): void {
    if (this.stopped || job.stopped) return;
    const jitter = this.o.config.poll.jitter;
    const now = job.spec.intervalNow?.();
    const intervalMs = now?.intervalMs ?? job.spec.intervalMs;
    const spacing = this.o.loopLoad?.spacing ?? 1;
    this.o.self.collectorInterval.set({ server: job.spec.server, collector: job.spec.collector }, (intervalMs * spacing) / 1000);
    if (now?.reason && !job.stretched) {
      // Said when it starts stretching (or stops), not every cycle: the numbers move with the streams.
      job.stretched = true;
      this.o.logger.info({ server: job.spec.server, collector: job.spec.collector, interval_seconds: intervalMs / 1000, reason: now.reason }, 'collector interval stretched to fit the request budget');
    } else if (!now?.reason && job.stretched) {
      job.stretched = false;
      this.o.logger.info({ server: job.spec.server, collector: job.spec.collector, interval_seconds: intervalMs / 1000 }, 'collector interval back to the configured one');
    }
    const delay = intervalMs * spacing * (1 + (Math.random() * 2 - 1) * jitter);
    job.scheduledMs = intervalMs;
    job.timer = setTimeout(() => void this.run(job), delay);
  }

  /**
   * Whether the latest poll of every collector of `server` failed to reach it (network, TLS, timeout, authentication),
   * successes from before it was said down aside: the server is out, not one of its endpoints.
   */
  private unreachable(server: string): boolean {
    const outcomes = this.reachedBy.get(server);
    if (!outcomes || outcomes.size === 0) return false;
    // While the server is said down, a collector's success from before that is old news: a collector of a long
    // interval (stream targets, every 30 s) has not asked since, and held every other collector asking every interval.
    const said = this.stateSaid.get(server);
    const downSince = said !== undefined && said !== UP ? this.downSince.get(server) : undefined;
    // Only once two collectors have failed to reach it: one endpoint failing while the others have not asked since is
    // not the server out.
    let unreached = 0;
    let old = 0;
    for (const o of outcomes.values()) {
      if (o.reached && downSince !== undefined && o.at < downSince) {
        old++;
        continue;
      }
      if (o.reached || !o.error) return false;
      unreached++;
    }
    return unreached > 0 && (old === 0 || unreached >= 2);
  }

  /**
   * While its server cannot be reached at all, for the same reason, only the server's first job asks it; the others
   * wait for that one's answer (on which they all poll at once). A fleet's unreachable servers then cost one request each per interval, not one per
   * collector, and an outage is one line, not one per collector and object.
   */
  private waitsForProbe(job: Job): boolean {
    const { server } = job.spec;
    if (!this.unreachable(server)) return false;
    const prober = this.jobsOf.get(server)?.find((j) => j.spec.setsUp);
    if (prober === undefined || prober === job) return false;
    // Only while the cause is the one this collector met itself: when it changes (refused, then a certificate no longer
    // trusted), each collector asks once more, so what each says of its last poll stays true. One whose last answer is
    // from before the outage asks too, to meet it itself, unless its last poll was held back by the exporter's own
    // pacing (its requests queued behind a slow server's timeouts, or it waited for a walk that does): then it would ask
    // each interval and never meet it.
    const outcomes = this.reachedBy.get(server)!;
    const mine = outcomes.get(job.spec.collector)?.error;
    const probed = outcomes.get(prober.spec.collector)?.error;
    if (probed === undefined) return false;
    return mine === undefined ? job.heldBack === true && this.out(server) : errorReason(mine) === errorReason(probed);
  }

  private async pollOnce(job: Job): Promise<void> {
    if (this.waitsForProbe(job)) return;
    const { server, collector } = job.spec;
    const labels = { server, collector };
    const log = this.o.logger.child({ component: 'collector', collector, server });
    if (job.spec.prepare) {
      await job.spec.prepare();
      if (this.stopped || job.stopped) return;
      // The walk may have brought the sizes that stretch this collector: the next poll waits for the stretched interval.
      const now = job.spec.intervalNow?.();
      if (job.timer && now && now.intervalMs !== job.scheduledMs) {
        clearTimeout(job.timer);
        this.schedule(job);
      }
    }
    // The deadline of the interval in force: a stretched collector's cycle is paced over most of it.
    const deadline = new RequestDeadline(pollDeadlineMs(job.spec.intervalNow?.().intervalMs ?? job.spec.intervalMs), this.stopping.signal);
    let result: PollResult;
    const started = performance.now();
    try {
      result = await job.spec.poll(deadline.signal, log);
    } finally {
      deadline.release();
    }
    // A job stopped while it polled (its server was removed, the exporter stops) must not bring its series back.
    if (job.stopped || this.stopped) return;
    this.o.onPoll?.(job.spec, result);
    const { self, store } = this.o;
    self.collectorDuration.set(labels, result.seconds);
    const state = job.spec.setsUp ? this.recordOutcome(server, collector, result, started) : undefined;
    if (state) self.up.set({ server }, state.up ? 1 : 0);
    // A job that says nothing of wowza_up (connectioncounts, on the same host) is quiet too while its server is down.
    const serverDown = (state ?? this.serverState(server))?.up === false;
    const out = serverDown && job.spec.setsUp && this.out(server);
    // A poll begun before its server went away and ended after (a stream cycle whose first streams answered), or one
    // that asked nothing and read the discovery walk (instance): its values are from before the outage. While the
    // server is out it is not stored: no old values while wowza_up is 0.
    const fromBefore = out && result.ok && (askedNothing(result) || this.beganBeforeDown(server, started));
    const ok = result.ok && !fromBefore;
    self.collectorSuccess.set(labels, ok ? 1 : 0);
    result.sayObjects?.(serverDown);
    job.last = {
      at: Date.now(),
      seconds: result.seconds,
      ok,
      series: ok ? result.set.size : 0,
      ...(result.ok ? {} : { reason: errorReason(result.error!), error: result.error!.message }),
      ...(fromBefore ? OUT_BEFORE_ITS_END : {}),
      ...(result.objects ? { objects: result.objects } : {}),
    };
    // Every other collector's values are from before the outage too: gone now, not at each one's next turn (stream
    // targets poll every 30 s, and while the server is out only the first collector asks it).
    if (out) this.forgetValues(server, job);
    if (fromBefore) {
      store.delete(server, collector);
      log.debug({ seconds: result.seconds }, 'poll done, but its values are from before the server went down: not stored');
    } else if (result.ok) {
      this.countDrops(job.spec, result.set, log);
      await store.put(server, collector, result.set);
      self.lastPoll.set(labels, Date.now() / 1000);
      log.debug({ seconds: result.seconds, series: result.set.size }, 'poll done');
      if (job.failureSaid !== undefined) log.info({ seconds: result.seconds, series: result.set.size }, 'poll succeeds again');
      job.failureSaid = undefined;
      job.heldBack = false;
    } else {
      store.delete(server, collector);
      this.sayFailure(job, result.error!, result.seconds, serverDown, log);
    }
  }

  /** Whether a poll `started` (performance.now()) before `server` was last said down. */
  private beganBeforeDown(server: string, started: number): boolean {
    return started < (this.downSince.get(server) ?? -Infinity);
  }

  /**
   * Whether `server` is out (not one endpoint failing while the others answer): said down, every collector that asked
   * since failed to reach it, and more than one did.
   */
  private out(server: string): boolean {
    return (this.failedWhileDown.get(server)?.size ?? 0) >= 2 && this.unreachable(server);
  }

  /**
   * Removes the values of every wowza_up collector of an out server but `polled` (whose poll says its own), and, the
   * first time, the discovery walk: it is from before the outage too, and the instance collector reads nothing else.
   */
  private forgetValues(server: string, polled: Job): void {
    const jobs = this.jobsOf.get(server) ?? [];
    let forgot = false;
    for (const j of jobs) {
      if (j === polled || !j.spec.setsUp || j.last?.ok !== true) continue;
      this.o.store.delete(server, j.spec.collector);
      this.o.self.collectorSuccess.set({ server, collector: j.spec.collector }, 0);
      j.last = { ...j.last, ok: false, series: 0, ...OUT_BEFORE_ITS_END };
      forgot = true;
    }
    if (forgot) jobs[0]?.spec.invalidate?.();
  }

  /**
   * A failing poll is said once per change of its reason while its server is up; while the server is down, its line
   * (sayState) says it all, and each collector's failure goes to debug level.
   */
  private sayFailure(job: Job, error: Error, seconds: number, serverDown: boolean, log: Logger): void {
    const reason = errorReason(error);
    const fields = { reason, err: error.message, seconds };
    // Held back by the exporter's own pacing (a burst of polls on a busy machine, a slow walk): the server did nothing,
    // so no warning, and the failure said before it stands (a collector failing with http, held back once, then failing
    // with http again, is one warning). One info line for a run of such polls.
    const heldBefore = job.heldBack === true;
    job.heldBack = heldBackByExporter(error);
    if (job.heldBack) {
      if (heldBefore || serverDown) return log.debug(fields, 'poll failed');
      return log.info(fields, "poll not done: it waited past its deadline on the exporter's own pacing (the request budget, a concurrency slot or the discovery walk); said again after a poll that did not");
    }
    if (serverDown || job.failureSaid === reason) return log.debug(fields, 'poll failed');
    job.failureSaid = reason;
    const t = this.runtimes.get(job.spec.server)?.target;
    const advice = t ? adviseFailure(error, { url: t.url, username: t.username, password: t.password }) : undefined;
    log.warn({ ...fields, ...(advice ? { fix: advice.fix } : {}) }, 'poll failed');
  }

  /** One line when a server goes down (with cause and next step), another when its cause changes, one when it recovers. */
  private sayState(server: string, state: { up: boolean; key: string; advice?: Advice }): void {
    const before = this.stateSaid.get(server);
    if (before === state.key || (before === undefined && state.up)) {
      if (before === undefined) this.stateSaid.set(server, state.key);
      return;
    }
    this.stateSaid.set(server, state.key);
    const log = this.o.logger.child({ component: 'server', server });
    if (state.up) return log.info('server answers again (wowza_up 1)');
    if (before === undefined || before === UP) this.downSince.set(server, performance.now());
    // The collectors' lines are said again, at their next failure, once the server is back.
    for (const j of this.jobsOf.get(server) ?? []) j.failureSaid = undefined;
    const a = state.advice!;
    log.warn({ cause: a.cause, fix: a.fix }, `server down (wowza_up 0): ${adviceText(a)}`);
  }

  /**
   * Counts the values a poll left out in wowza_exporter_dropped_values_total, and says so once per server, collector,
   * field and reason: a server that sends a bad value sends it every cycle.
   */
  private countDrops(spec: PollJobSpec, set: MetricSet, log: Logger): void {
    for (const [field, values] of set.unknowns) {
      for (const [value, n] of values) {
        // Counted and said once per value: a state that persists is one unknown value, not one per poll.
        const said = `${spec.server}\u0000${spec.collector}\u0000${field}\u0000${value}`;
        if (this.dropsSaid.has(said)) continue;
        this.dropsSaid.add(said);
        this.o.self.unknownValues.inc({ server: spec.server, collector: spec.collector, field });
        log.warn({ field, value, objects: n }, 'a value the exporter does not know: kept as it came (counted in wowza_exporter_unknown_values_total; said once)');
      }
    }
    for (const [key, n] of set.drops) {
      const [field, reason] = key.split('\u0000') as [string, string];
      this.o.self.droppedValues.inc({ server: spec.server, collector: spec.collector, field, reason }, n);
      const said = `${spec.server}\u0000${spec.collector}\u0000${key}`;
      if (this.dropsSaid.has(said)) continue;
      this.dropsSaid.add(said);
      log.warn({ field, reason, values: n }, 'values left out of the metrics: the server sent what the exporter cannot use (counted in wowza_exporter_dropped_values_total; said once)');
    }
  }

  /**
   * Keeps the latest outcome of each collector of `server` and gives the server's state. Collectors finish in no
   * fixed order, so taking only the latest result would make `wowza_up` flap while one endpoint hangs; after an outage
   * the first answer brings it back (see below). `started` is when this poll began (performance.now()).
   */
  private recordOutcome(server: string, collector: string, result: PollResult, started: number) {
    let byCollector = this.reachedBy.get(server);
    if (!byCollector) this.reachedBy.set(server, (byCollector = new Map()));
    const wasUnreachable = this.unreachable(server);
    // The state last said is the state as of the outcomes so far: only recordOutcome changes them, and it says each.
    const said = this.stateSaid.get(server);
    const wasDown = said !== undefined && said !== UP;
    // A poll sent during the outage that ends after the server answered again is old news: set aside like the others.
    const stale = !result.reached && started < (this.recoveredAt.get(server) ?? -Infinity);
    // A poll the exporter's own pacing kept from the server (heldBackByExporter, and no answer from it) says nothing of
    // the server: the collector's outcome before stands (a walk's own failure is met by the next poll that asks for it).
    // Such polls neither take the server down, nor bring it back, nor make it look like something other than the REST
    // API, and while it is out they do not end the one-prober mode.
    // Nor does a poll that began before the server was said down and got answers: they may all have come before the
    // outage (a stream cycle that straddles it, its first streams answered, the rest refused). Taken as the server
    // answering again, it brought the server back in the middle of the outage, and down again at the next poll. Nor one
    // that asked nothing (instance, read from a walk of before): taken as reaching the server, it ended the one-prober
    // mode while the walk was young.
    const predatesDown = wasDown && result.reached && (askedNothing(result) || this.beganBeforeDown(server, started));
    const saysNothing = (heldBackByExporter(result.error) && result.answered !== true) || predatesDown;
    if (!saysNothing) byCollector.set(collector, { reached: result.reached, rest: result.rest ?? result.ok, at: performance.now(), ...(stale ? { setAside: true } : {}), ...(result.error ? { error: result.error } : {}) });
    let failedMeanwhile = this.failedWhileDown.get(server);
    if (!result.reached && !stale) {
      if (!failedMeanwhile) this.failedWhileDown.set(server, (failedMeanwhile = new Set()));
      failedMeanwhile.add(collector);
    }
    // The server answers again after an outage (a request of this poll got an answer while it was down, and more than
    // one collector had failed to reach it: the server, not one endpoint): wowza_up follows that answer. The failures of
    // the others are set aside rather than holding it at 0 until each polls at its own interval (the one with the
    // longest interval last), and they poll now, so every series is back within one poll. One endpoint failing while
    // the others answer is not an outage: the server stays down while it fails, steadily.
    const outage = wasUnreachable || (failedMeanwhile?.size ?? 0) >= 2;
    if (wasDown && result.reached && result.answered !== false && !predatesDown && outage && !this.recoveredWithin(server)) {
      this.recoveredAt.set(server, performance.now());
      for (const [other, o] of byCollector) if (other !== collector && !o.reached) o.setAside = true;
      const jobs = this.jobsOf.get(server) ?? [];
      // The walk failed during the outage: walked again, not read from its failure, by the collectors that poll now.
      jobs[0]?.spec.invalidate?.();
      for (const j of jobs) if (j.spec.collector !== collector) void this.run(j);
    }
    const state = this.serverState(server);
    if (!state) return undefined; // nothing but budget waits yet
    if (state.up) this.failedWhileDown.delete(server);
    this.sayState(server, state);
    return state;
  }

  /**
   * Whether `server` answered again after an outage less than its shortest collector interval ago: a server whose walk
   * fails while machine answers must not be asked again and again, as fast as the answers come back.
   */
  private recoveredWithin(server: string): boolean {
    const at = this.recoveredAt.get(server);
    if (at === undefined) return false;
    const shortest = Math.min(...(this.jobsOf.get(server) ?? []).map((j) => j.spec.intervalMs));
    return performance.now() - at < shortest;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    for (const j of this.jobs) if (j.timer) clearTimeout(j.timer);
    // Polls waiting on the budget or a paced walk end now, not when the budget would let them.
    for (const r of this.runtimes.values()) r.stopRequests();
    await Promise.allSettled([...this.jobs].map((j) => j.running));
    await Promise.all([...this.runtimes.values()].map((r) => r.close()));
  }
}
