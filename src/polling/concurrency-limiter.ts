import type { Limit } from '../collectors/collector.js';
/**
 * How many API requests one server gets at once. With a fixed number it is a plain semaphore. With `auto` the
 * number adapts to the server, in the family of TCP Vegas and Netflix's concurrency-limits: answers about as fast
 * as the fastest seen for their endpoint say the server still had free workers, so more may go; answers that
 * waited well beyond that say requests queue inside the server, so fewer go. Timeouts, refused connections,
 * 5xx and 429 halve the limit at once (AIMD, as TCP answers a loss).
 *
 * The rule, once per round (as many answers as the limit, all to requests sent under the current limit):
 * - g = baseline / mean latency of the round, the baseline being the fastest answer seen lately. One baseline
 *   per server, as in Vegas: the limiter only sees the poll's small in-memory monitoring reads (log reads go
 *   around it), and one per endpoint would take its first, already queued, answers for the unloaded time.
 * - g >= 0.75: grow, doubling (slow start) up to where the last cut left it, then by an eighth (at least one);
 *   0.6 <= g < 0.75: hold; g < 0.6: limit * max(0.5, g / 0.7), and the slow-start threshold moves there; two
 *   rounds in a row with g >= 0.9 lift the threshold again (the cut was a passing fault, not the server's size).
 * - It grows only if at least half the limit was in use during the round, so a quiet minute cannot inflate it.
 * - The baseline forgets answers older than two windows, so a server that became slower for other reasons is
 *   re-learnt rather than read as congestion for ever.
 *
 * Against a server that serves N requests at once this settles between N and 2N in flight, where a request
 * waits about one service time in the server's queue at most; against a server with room to spare it doubles
 * to the configured maximum within a few round trips.
 */

export interface ConcurrencyLimiterOptions {
  /** A fixed limit; undefined for adaptive. */
  fixed?: number;
  /** Adaptive bounds and start. */
  min?: number;
  max?: number;
  initial?: number;
  /** How long a baseline answer is remembered (it lives between one and two windows). */
  baselineWindowMs?: number;
  now?: () => number;
  /** Told the whole-number limit whenever it changes. */
  onLimit?: (limit: number) => void;
}


/** The fastest answer of one endpoint over the current and the previous window. */
class WindowedMin {
  private current = Infinity;
  private previous = Infinity;
  private started: number;

  constructor(
    private readonly windowMs: number,
    now: number,
  ) {
    this.started = now;
  }

  add(value: number, now: number): number {
    if (now - this.started >= this.windowMs) {
      // A whole window without any answer forgets both.
      this.previous = now - this.started >= 2 * this.windowMs ? Infinity : this.current;
      this.current = Infinity;
      this.started = now;
    }
    if (value < this.current) this.current = value;
    return Math.min(this.current, this.previous);
  }

  /** The fastest answer remembered, without adding one (Infinity before any). */
  get value(): number {
    return Math.min(this.current, this.previous);
  }
}

/** Status codes and error kinds that say the server is overloaded or gone: cut the limit. */
function isDrop(code: string): boolean {
  if (code === 'timeout' || code === 'network') return true;
  const status = Number(code);
  return status === 429 || (status >= 500 && status <= 599);
}

/** Answers whose latency says something about the server's queue (a 401 challenge or a cancel does not). */
function isAnswer(code: string): boolean {
  const status = Number(code);
  return Number.isInteger(status) && status >= 200 && status < 500 && status !== 401;
}

export class ConcurrencyLimiter {
  readonly adaptive: boolean;
  private value: number;
  private readonly min: number;
  private readonly max: number;
  /** A lower maximum set from outside for a while (Digest servers: see setCeiling). */
  private ceiling = Infinity;
  /** Moving average of answer times (ms), undefined before the first. */
  private typical: number | undefined;
  private inflight = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly baseline: WindowedMin;
  private readonly windowMs: number;
  private readonly now: () => number;
  /** When the limit last changed: answers to requests sent before it describe the old limit. */
  private changedAt = -Infinity;
  /** Doubling stops here: the limit a cut last left (TCP's slow-start threshold). */
  private threshold = Infinity;
  /** Rounds in a row without queueing. */
  private clean = 0;
  private round: { rtts: number[]; peak: number; last: number } = { rtts: [], peak: 0, last: 0 };
  private reported = 0;

  constructor(private readonly o: ConcurrencyLimiterOptions) {
    this.adaptive = o.fixed === undefined;
    this.min = this.adaptive ? Math.max(1, o.min ?? 1) : o.fixed!;
    this.max = this.adaptive ? Math.max(this.min, o.max ?? 64) : o.fixed!;
    this.value = this.adaptive ? Math.min(this.max, Math.max(this.min, o.initial ?? 4)) : o.fixed!;
    this.windowMs = o.baselineWindowMs ?? 30_000;
    this.now = o.now ?? (() => performance.now());
    this.baseline = new WindowedMin(this.windowMs, this.now());
    this.report();
  }

  /** Requests allowed in flight now. */
  get limit(): number {
    return Math.floor(this.value);
  }

  /** A moving average of answer times, in ms (the last 20 or so weigh most); undefined before any. */
  get typicalMs(): number | undefined {
    return this.typical;
  }

  /** The fastest answer seen lately, in ms; undefined before any. */
  get fastestMs(): number | undefined {
    const v = this.baseline.value;
    return Number.isFinite(v) ? v : undefined;
  }

  /**
   * Caps the adaptive limit below its configured maximum until changed (Infinity lifts it). The limit does not grow
   * past the cap meanwhile, so lifting it starts from where the server was really measured. A fixed limit ignores it:
   * the user chose that number.
   */
  setCeiling(n: number): void {
    if (!this.adaptive) return;
    const ceiling = Math.max(this.min, Math.floor(n));
    if (ceiling === this.ceiling) return;
    this.ceiling = ceiling;
    if (this.value > ceiling) this.value = ceiling;
    this.newRound();
    this.report();
    this.drain();
  }

  /** Requests in flight now. */
  get active(): number {
    return this.inflight;
  }

  /** Requests waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  readonly run: Limit = async <T>(fn: () => Promise<T>): Promise<T> => {
    if (this.inflight >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.inflight++;
    if (this.inflight > this.round.peak) this.round.peak = this.inflight;
    try {
      return await fn();
    } finally {
      this.release();
    }
  };

  /** One HTTP exchange finished: `code` is its status or error kind (as the request counter labels it). */
  observe(_endpoint: string, code: string, seconds: number): void {
    if (!this.adaptive) return;
    const now = this.now();
    const rtt = Math.max(seconds * 1000, 0.01);
    const current = now - rtt >= this.changedAt;
    if (isDrop(code)) {
      if (current) this.cut(now, 0.5);
      return;
    }
    if (!isAnswer(code)) return;
    this.typical = this.typical === undefined ? rtt : this.typical + (rtt - this.typical) / 20;
    const base = this.baseline.add(rtt, now);
    if (!current) return;
    const r = this.round;
    // A round left half-full before a pause (the end of a poll) would mix then and now: start afresh.
    if (r.rtts.length > 0 && now - r.last > Math.max(1000, 4 * r.rtts[r.rtts.length - 1]!)) this.newRound();
    this.round.last = now;
    this.round.rtts.push(rtt);
    if (this.round.rtts.length < this.limit) return;
    const g = (base * this.round.rtts.length) / this.round.rtts.reduce((a, b) => a + b, 0);
    const busy = this.round.peak >= this.value / 2;
    // Rounds without any queueing after a cut say it was a passing fault (one endpoint's 500s, a blip):
    // after two in a row, doubling may resume.
    this.clean = g >= 0.9 ? this.clean + 1 : 0;
    if (this.clean >= 2) this.threshold = Infinity;
    if (g < 0.6) this.cut(now, Math.max(0.5, g / 0.7));
    else if (g >= 0.75 && busy) this.set(now, this.value < this.threshold ? Math.min(this.value * 2, this.threshold) : this.value + Math.max(1, this.value / 8));
    else this.newRound();
  }

  private cut(now: number, factor: number): void {
    this.set(now, this.value * factor);
    this.threshold = this.value;
    this.clean = 0;
  }

  private set(now: number, value: number): void {
    this.value = Math.min(this.max, this.ceiling, Math.max(this.min, value));
    this.changedAt = now;
    this.newRound();
    this.report();
    this.drain();
  }

  private newRound(): void {
    this.round = { rtts: [], peak: this.inflight, last: 0 };
  }

  private report(): void {
    if (this.limit !== this.reported) {
      this.reported = this.limit;
      this.o.onLimit?.(this.reported);
    }
  }

  private release(): void {
    this.inflight--;
    this.drain();
  }

  private drain(): void {
    while (this.inflight < this.limit && this.waiting.length > 0) {
      this.inflight++;
      this.waiting.shift()!();
    }
  }
}
