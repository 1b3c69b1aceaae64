/**
 * The server's REST worker pool: at most `size` requests are served at once and the rest wait their turn in
 * arrival order, as with a pool of N handler threads. Waits are recorded so a test or benchmark can see how much
 * queueing a client caused. Size 0 means no limit (every request is served at once).
 */

export interface QueueWaits {
  /** Requests that went through the pool since the last reset. */
  count: number;
  /** Milliseconds spent waiting for a worker. */
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** The most recent waits kept for the percentiles; older ones only count. */
const KEPT = 200_000;

export class WorkerPool {
  private busy = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly waits = new Float64Array(KEPT);
  private recorded = 0;
  private sum = 0;

  constructor(readonly size: number) {}

  /**
   * Resolves with the function that hands the worker back once one is free, or undefined when `signal`
   * aborted first (the simulator is closing).
   */
  async acquire(signal: AbortSignal): Promise<(() => void) | undefined> {
    const arrived = performance.now();
    if (this.size > 0 && this.busy >= this.size) {
      const ok = await new Promise<boolean>((resolve) => {
        const turn = () => {
          signal.removeEventListener('abort', abandon);
          resolve(true);
        };
        const abandon = () => {
          const i = this.waiting.indexOf(turn);
          if (i >= 0) this.waiting.splice(i, 1);
          resolve(false);
        };
        this.waiting.push(turn);
        signal.addEventListener('abort', abandon, { once: true });
      });
      if (!ok) return undefined;
    } else {
      this.busy++;
    }
    this.record(performance.now() - arrived);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The worker goes straight to the next in line; `busy` only drops when nobody waits.
      if (next) next();
      else this.busy--;
    };
  }

  private record(ms: number): void {
    this.waits[this.recorded % KEPT] = ms;
    this.recorded++;
    this.sum += ms;
  }

  /** Requests waiting for a worker right now. */
  get queued(): number {
    return this.waiting.length;
  }

  queueWaits(): QueueWaits {
    const n = Math.min(this.recorded, KEPT);
    const sorted = Float64Array.from(this.waits.subarray(0, n)).sort();
    const at = (q: number) => (n === 0 ? 0 : sorted[Math.min(n - 1, Math.ceil(q * n) - 1)]!);
    return {
      count: this.recorded,
      meanMs: this.recorded === 0 ? 0 : this.sum / this.recorded,
      p50Ms: at(0.5),
      p95Ms: at(0.95),
      p99Ms: at(0.99),
      maxMs: n === 0 ? 0 : sorted[n - 1]!,
    };
  }

  resetWaits(): void {
    this.recorded = 0;
    this.sum = 0;
  }
}
