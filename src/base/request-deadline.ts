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
    follow(caller, this.onAbort);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The request is over: nothing of it stays registered. */
  release(): void {
    clearTimeout(this.timer);
    if (this.onAbort && this.caller) followers.get(this.caller)?.delete(this.onAbort);
  }
}

/**
 * What to call when a caller's signal aborts, per signal. A signal's own listener list costs a walk of every listener
 * to add one: the scheduler's stop signal, followed by every poll in flight (nine per server, thousands in a fleet),
 * made each poll's start cost as much as all the others. One listener per signal, and a Set, cost the same at any size.
 */
const followers = new WeakMap<AbortSignal, Set<() => void>>();

function follow(signal: AbortSignal, onAbort: () => void): void {
  let set = followers.get(signal);
  if (!set) {
    const fresh = new Set<() => void>();
    followers.set(signal, (set = fresh));
    signal.addEventListener(
      'abort',
      () => {
        for (const f of [...fresh]) f();
        fresh.clear();
      },
      { once: true },
    );
  }
  set.add(onAbort);
}
