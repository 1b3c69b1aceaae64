import { setMaxListeners } from 'node:events';

/**
 * The abort signal of one outgoing request: aborted when its own deadline passes or when the caller's signal
 * aborts, whichever comes first, and released (timer cleared, listener removed) as soon as the request is
 * done. `AbortSignal.timeout()` + `AbortSignal.any()` per request did the same but kept every timer until it
 * fired and registered each request with the caller's signal: thousands of objects per poll outliving their
 * request (bench/RESULTS.md, issue 16).
 */
export class RequestDeadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort: (() => void) | undefined;
  /** Whether the request's own deadline passed (rather than the caller giving up). */
  timedOut = false;

  constructor(
    timeoutMs: number,
    private readonly caller?: AbortSignal,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'));
    }, timeoutMs);
    if (!caller) return;
    if (caller.aborted) {
      this.controller.abort(caller.reason);
      return;
    }
    this.onAbort = () => this.controller.abort(caller.reason);
    // Every request in flight listens to the caller's signal (a poll's, with tens at once); each removes its
    // listener when done, so the count is bounded by the requests in flight, not a leak.
    setMaxListeners(0, caller);
    caller.addEventListener('abort', this.onAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The request is over: nothing of it stays registered. */
  release(): void {
    clearTimeout(this.timer);
    if (this.onAbort) this.caller?.removeEventListener('abort', this.onAbort);
  }
}
