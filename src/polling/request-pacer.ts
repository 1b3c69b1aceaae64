import { WowzaTimeoutError } from '../wowza/errors.js';
import type { ConcurrencyLimiter } from './concurrency-limiter.js';
import { pacedRate, type PacedRate } from './request-budget.js';

/**
 * A request the exporter's own limits kept from the server: never sent, its poll ended (deadline, server removed) while it waited;
 * or, with `cause`, held (for the budget or a concurrency slot) so long that the poll's deadline cut it before its own
 * timeout could run out (see heldBackFailure).
 */
export class BudgetWaitError extends Error {
  readonly kind = 'budget_wait';
  constructor(why = 'its poll deadline passed first', cause?: Error) {
    super(
      cause
        ? `request held back ${why} by the exporter's own limits (poll.max_requests_per_second, the concurrency limit): ${cause.message}`
        : `request not sent: it was waiting for its share of poll.max_requests_per_second and ${why}`,
      cause ? { cause } : undefined,
    );
  }
}

/**
 * What a failed request says about the server. One the exporter held back (for the budget or a concurrency slot), then
 * sent with less than its own timeout left before the poll's deadline, which cut it, was not given the time every
 * request is allowed: had it been sent when it was asked for, its timeout would have run out within the poll. Its
 * silence says nothing about the server (after an outage, every collector's first poll comes at once and waits), so it
 * is a budget wait, not a timeout that sets `wowza_up` to 0. A request sent on time still times out on its own first:
 * a server that does not answer is still down.
 */
export function heldBackFailure(err: unknown, held: { askedAt: number; sentAt: number }, now: number): unknown {
  if (!(err instanceof WowzaTimeoutError) || !err.cutByPollDeadline) return err;
  if (now - held.sentAt >= err.timeoutMs || now - held.askedAt < err.timeoutMs) return err;
  return new BudgetWaitError(`${Math.round(held.sentAt - held.askedAt)} ms`, err);
}

interface Waiter {
  start(): void;
  fail(err: Error): void;
  /** Its poll ended while it waited: skipped, and no token spent on it. */
  dropped: boolean;
  signal: AbortSignal | undefined;
}

/** The waiters of one poll's signal, and the one listener that drops them all when it aborts. */
interface Watched {
  waiters: Set<Waiter>;
  onAbort: () => void;
}

/** One collector's (or the discovery walk's) queue and its start tag in the fair queue. */
interface Lane {
  queue: Waiter[];
  head: number;
  tag: number;
}

/**
 * Every request of one server passes here before it takes a slot of the concurrency limiter: a token bucket at
 * `pacedRate(budget)`, so no 10 s window holds more than budget x 10 requests, from the first cycle on and whatever
 * the sizes a plan was made with. Requests queue per lane (collector) and lanes are served by start-time fair
 * queuing weighted by their planned shares (request-budget.ts): a one-request collector is not stuck behind a cycle
 * of thousands, and a stretched collector gets its share while another's cycle runs. A request is handed on only when
 * the limiter has a free slot, so tokens never pile up in the limiter's queue and reach the server in a burst.
 */
export class RequestPacer {
  private readonly lanes = new Map<string, Lane>();
  /**
   * One abort listener per poll signal, not per request: a cycle of thousands queued on one signal would otherwise
   * add thousands of listeners (EventTarget checks each new one against the list: quadratic, seconds at 50,000).
   */
  private readonly watched = new Map<AbortSignal, Watched>();
  private shares: ReadonlyMap<string, number> = new Map();
  private readonly rate: PacedRate | undefined;
  private tokens: number;
  private refilledAt: number;
  private virtualTime = 0;
  private waiting = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    budgetPerSecond: number,
    private readonly limiter: ConcurrencyLimiter,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.rate = budgetPerSecond > 0 ? pacedRate(budgetPerSecond) : undefined;
    this.tokens = this.rate?.burst ?? 0;
    this.refilledAt = now();
  }

  /** The lanes' weights: requests a second each is planned to get. */
  setShares(shares: ReadonlyMap<string, number>): void {
    this.shares = shares;
  }

  /** Requests waiting for the budget. */
  get queued(): number {
    return this.waiting;
  }

  /** Runs `fn` (one request) when the budget and a concurrency slot allow; refused once `signal` aborts before that. */
  run<T>(lane: string, signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    const held = { askedAt: this.now(), sentAt: 0 };
    // Timed where it starts, inside the limiter: a request may wait there for a slot too.
    const send = () => {
      held.sentAt = this.now();
      return fn();
    };
    const failure = (err: unknown) => heldBackFailure(err, held, this.now());
    if (!this.rate) return this.limiter.run(send).catch((err: unknown) => Promise.reject(failure(err)));
    if (this.closed) return Promise.reject(new BudgetWaitError('the server is no longer polled'));
    if (signal?.aborted) return Promise.reject(new BudgetWaitError());
    return new Promise<T>((resolve, reject) => {
      const l = this.laneOf(lane);
      const waiter: Waiter = {
        dropped: false,
        signal,
        start: () => {
          this.unwatch(waiter);
          this.limiter
            .run(send)
            .then(resolve, (err: unknown) => reject(failure(err)))
            .finally(() => this.pump());
        },
        fail: (err) => {
          this.unwatch(waiter);
          reject(err);
        },
      };
      if (signal) this.watch(signal, waiter);
      if (l.head === l.queue.length) l.tag = Math.max(l.tag, this.virtualTime);
      l.queue.push(waiter);
      this.waiting++;
      this.pump();
    });
  }

  private watch(signal: AbortSignal, waiter: Waiter): void {
    let entry = this.watched.get(signal);
    if (!entry) {
      const waiters = new Set<Waiter>();
      const onAbort = () => {
        this.watched.delete(signal);
        for (const w of waiters) {
          if (w.dropped) continue;
          w.dropped = true;
          this.waiting--;
          w.fail(new BudgetWaitError());
        }
      };
      entry = { waiters, onAbort };
      this.watched.set(signal, entry);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    entry.waiters.add(waiter);
  }

  private unwatch(waiter: Waiter): void {
    const signal = waiter.signal;
    const entry = signal && this.watched.get(signal);
    if (!entry) return;
    entry.waiters.delete(waiter);
    if (entry.waiters.size === 0) {
      signal.removeEventListener('abort', entry.onAbort);
      this.watched.delete(signal);
    }
  }

  /** Refuses every waiting request (the server was removed or the exporter stops). */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const l of this.lanes.values()) {
      for (let i = l.head; i < l.queue.length; i++) {
        const w = l.queue[i]!;
        if (!w.dropped) w.fail(new BudgetWaitError('the server is no longer polled'));
      }
      l.queue = [];
      l.head = 0;
    }
    this.waiting = 0;
  }

  private laneOf(name: string): Lane {
    let lane = this.lanes.get(name);
    if (!lane) this.lanes.set(name, (lane = { queue: [], head: 0, tag: this.virtualTime }));
    return lane;
  }

  private pump(): void {
    const rate = this.rate;
    if (!rate || this.closed) return;
    const now = this.now();
    this.tokens = Math.min(rate.burst, this.tokens + ((now - this.refilledAt) / 1000) * rate.perSecond);
    this.refilledAt = now;
    while (this.tokens >= 1 && this.limiter.active + this.limiter.queued < this.limiter.limit) {
      const next = this.next();
      if (!next) break;
      const [name, lane, waiter] = next;
      this.tokens -= 1;
      this.waiting--;
      this.virtualTime = lane.tag;
      // Lanes without a planned share (before the first walk) weigh one request a second.
      lane.tag += 1 / Math.max(this.shares.get(name) ?? 1, 1e-6);
      waiter.start();
    }
    if (this.waiting > 0 && this.tokens < 1 && !this.timer) {
      this.timer = setTimeout(
        () => {
          this.timer = undefined;
          this.pump();
        },
        Math.max(1, Math.ceil(((1 - this.tokens) / rate.perSecond) * 1000)),
      );
    }
  }

  /** The waiting request with the lowest start tag, taken off its lane's queue. */
  private next(): [string, Lane, Waiter] | undefined {
    let best: [string, Lane] | undefined;
    for (const [name, lane] of this.lanes) {
      while (lane.head < lane.queue.length && lane.queue[lane.head]!.dropped) lane.head++;
      if (lane.head === lane.queue.length) {
        if (lane.queue.length > 0) {
          lane.queue = [];
          lane.head = 0;
        }
        continue;
      }
      if (!best || lane.tag < best[1].tag) best = [name, lane];
    }
    if (!best) return undefined;
    const lane = best[1];
    const waiter = lane.queue[lane.head++]!;
    // Taken heads are dropped in chunks: a cycle of thousands must not shift its array once per request.
    if (lane.head > 1024 && lane.head * 2 > lane.queue.length) {
      lane.queue = lane.queue.slice(lane.head);
      lane.head = 0;
    }
    return [best[0], lane, waiter];
  }
}
