import type { Logger } from '../base/logger.js';

/** Conditions remembered per server; beyond this many the memory starts over (at worst a condition is said again). */
const MAX_REMEMBERED = 1000;

/**
 * Says a condition an object reports about itself (a recorder's error string) when it appears or changes, and once
 * when it clears: not on every poll while it lasts. One per server, kept with its runtime.
 */
export class Notices {
  private readonly current = new Map<string, string>();

  /** `message` undefined or empty: the condition is not (or no longer) there. */
  set(log: Logger, object: string, message: string | undefined, what: string, level: 'warn' | 'info' = 'warn'): void {
    const before = this.current.get(object);
    if (!message) {
      if (before !== undefined && this.current.delete(object)) log.info({ object }, `${what} cleared`);
      return;
    }
    if (before === message) return;
    if (this.current.size >= MAX_REMEMBERED) this.current.clear();
    this.current.set(object, message);
    log[level]({ object, message }, what);
  }
}
