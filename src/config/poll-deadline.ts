/**
 * Timing shared by the scheduler and the config: a poll must end before the next one is due, and a
 * request inside it must give up before the poll does, so a hung server is reported as a timeout of
 * the request rather than as a cancelled poll.
 */

/** A poll is cut at 90 % of its interval, so a slow server cannot make polls pile up. */
export function pollDeadlineMs(intervalMs: number): number {
  return Math.max(100, Math.floor(intervalMs * 0.9));
}

/** The request timeout when none is configured. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;

/**
 * The request timeout for a server whose collectors poll every `shortestIntervalMs` at the fastest:
 * 5 s, or 80 % of that interval when it is short (a 1 s interval gets 800 ms), inside the 90 % poll deadline.
 */
export function defaultRequestTimeoutMs(shortestIntervalMs: number): number {
  return Math.max(50, Math.min(DEFAULT_REQUEST_TIMEOUT_MS, Math.floor(shortestIntervalMs * 0.8)));
}
