/**
 * The time the simulated values are computed at, in seconds since the simulator started. Live mode follows
 * the wall clock; frozen mode stands still so tests can compare exact values, and `tick` moves both.
 */
export class ValueClock {
  private offset = 0;
  private readonly startedAt = Date.now();

  constructor(readonly frozen: boolean) {}

  now(): number {
    return this.offset + (this.frozen ? 0 : (Date.now() - this.startedAt) / 1000);
  }

  tick(seconds: number): void {
    if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError(`tick needs a non-negative number of seconds, got ${seconds}`);
    this.offset += seconds;
  }
}
