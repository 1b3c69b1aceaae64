import type { Logger } from '../base/logger.js';
import { FLEET_FROM_POLLS, liftYoungGenerationCap, OPTIMISE_FROM_LOOP_BUSY, OPTIMISE_FROM_POLLS, OPTIMISE_FROM_SERIES, optimiseJavaScript } from '../base/v8-flags.js';

/**
 * Turns V8's compilers on, once, when there is work for them: they are held off at start (src/base/v8-flags.ts).
 * Counted from the series of each (server, collector) at its last good poll, from the rate at which polls end
 * (many servers or short intervals are work too), and from the event loop's load, which a heavy poll shows while it
 * runs (the series are counted only once it ends). A removed server's count stays, which can only turn them on a
 * little early. At a fleet's rate of polls it also lets V8's young generation grow (FLEET_FROM_POLLS).
 */
export class CompilerTrigger {
  #on = false;
  #fleet = false;
  readonly #seriesPolled = new Map<string, number>();
  readonly #pollsEnded: number[] = [];

  constructor(private readonly logger: Logger) {}

  /** Work arrived that is worth compiled code (log shipping, a large probe). */
  turnOnFor(reason: string, series?: number): void {
    if (this.#on) return;
    this.#on = true;
    this.#seriesPolled.clear();
    // An engineering note, not an operator's concern.
    if (optimiseJavaScript()) this.logger.debug({ reason, ...(series === undefined ? {} : { series }) }, 'JavaScript compilers (Sparkplug, TurboFan) on: the exporter has work for them');
  }

  /** A probe answered this many series. */
  probed(series: number): void {
    if (series >= OPTIMISE_FROM_SERIES) this.turnOnFor('probe', series);
  }

  /** The event loop's busy share, smoothed (each second). */
  loopBusy(utilization: number): void {
    if (!this.#on && utilization >= OPTIMISE_FROM_LOOP_BUSY) this.turnOnFor('busy event loop');
  }

  /** A poll ended: `series` is its size when it succeeded. */
  polled(server: string, collector: string, series: number | undefined, now = Date.now()): void {
    if (this.#on && this.#fleet) return;
    const ended = this.#pollsEnded;
    ended.push(now);
    while (ended[0]! < now - Math.max(OPTIMISE_FROM_POLLS.windowMs, FLEET_FROM_POLLS.windowMs)) ended.shift();
    if (!this.#fleet && ended.length >= FLEET_FROM_POLLS.polls) {
      this.#fleet = true;
      this.#pollsEnded.length = 0;
      if (liftYoungGenerationCap()) this.logger.debug({ pollsPerSecond: FLEET_FROM_POLLS.polls / (FLEET_FROM_POLLS.windowMs / 1000) }, "V8's young generation grows as V8 grows it: the exporter polls a fleet");
    }
    if (this.#on) return;
    if (ended.length >= OPTIMISE_FROM_POLLS.polls) return this.turnOnFor('poll rate');
    if (series === undefined) return;
    this.#seriesPolled.set(`${server}\u0000${collector}`, series);
    let total = 0;
    for (const n of this.#seriesPolled.values()) total += n;
    if (total >= OPTIMISE_FROM_SERIES) this.turnOnFor('polls', total);
  }
}
