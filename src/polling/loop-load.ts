import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/**
 * How busy the exporter's own event loop is, and how much further apart polls are spaced because of it.
 *
 * The thread that polls also serves `/metrics` and health. Past what one core can do (a fleet of a thousand servers on
 * a shared machine), the loop's queue grows without end: every scrape waits behind seconds of poll work, and polls miss
 * their deadlines anyway. Spacing polls out keeps the loop below saturation, so scrapes and health stay quick and polls
 * still complete; the interval in force says it, as the request budget's stretch does.
 */
export class LoopLoad {
  /** Above this share of busy time (smoothed), polls are spaced further apart. */
  static readonly HIGH = 0.85;
  /** Below it, they come back towards the configured intervals. */
  static readonly LOW = 0.65;
  /** Spacing at most: past this the replica holds too many servers, which the log line says. */
  static readonly MAX_SPACING = 8;

  private last: EventLoopUtilization = performance.eventLoopUtilization();
  private smoothed = 0;
  private current = 1;
  private timer: NodeJS.Timeout | undefined;

  /** `onChange` hears when spacing starts (from 1) and when it is back to 1; `onSample`, the smoothed share each second. */
  constructor(
    private readonly onChange?: (spacing: number, utilization: number) => void,
    private readonly onSample?: (utilization: number) => void,
  ) {}

  /** Samples every second until stop(); the timer does not keep the process alive. */
  start(): void {
    this.timer ??= setInterval(() => this.sample(), 1000).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The factor by which intervals are stretched now: 1 as configured. */
  get spacing(): number {
    return this.current;
  }

  /** The loop's busy share, smoothed over the last few seconds (0-1). */
  get utilization(): number {
    return this.smoothed;
  }

  /** Takes one sample (the timer's step, public for tests with a utilization of their own). */
  sample(utilization?: number): void {
    let u = utilization;
    if (u === undefined) {
      const now = performance.eventLoopUtilization();
      u = performance.eventLoopUtilization(now, this.last).utilization;
      this.last = now;
    }
    // About three seconds of memory: one long scrape or garbage collection does not space the polls out.
    this.smoothed = this.smoothed * 0.7 + u * 0.3;
    const before = this.current;
    if (this.smoothed > LoopLoad.HIGH) this.current = Math.min(LoopLoad.MAX_SPACING, this.current * 1.15);
    else if (this.smoothed < LoopLoad.LOW && this.current > 1) this.current = Math.max(1, this.current * 0.95);
    if ((before === 1) !== (this.current === 1)) this.onChange?.(this.current, this.smoothed);
    this.onSample?.(this.smoothed);
  }
}
