/** Collectors whose view a stream or application event changes: what an event re-polls. */
export const REFRESHED_BY_EVENTS = ['application', 'instance', 'stream'];

/**
 * Event-triggered re-polls of one server, at most one start per `minGapMs` and coalesced: a burst of webhook events
 * costs a re-poll now and one when the gap has passed, not one per event. Whoever sends events cannot turn them
 * into load on the Wowza server.
 */
export class RefreshThrottle {
  private readonly servers = new Map<string, { lastAt: number; timer?: NodeJS.Timeout }>();

  constructor(
    private readonly refresh: (server: string) => Promise<void>,
    private readonly minGapMs = 1000,
  ) {}

  request(server: string): void {
    let s = this.servers.get(server);
    if (!s) this.servers.set(server, (s = { lastAt: -Infinity }));
    if (s.timer) return; // a re-poll is due already: it covers this event too
    const wait = s.lastAt + this.minGapMs - Date.now();
    if (wait <= 0) {
      this.start(server, s);
      return;
    }
    const state = s;
    state.timer = setTimeout(() => {
      state.timer = undefined;
      this.start(server, state);
    }, wait);
    state.timer.unref();
  }

  /** Drops a server that is no longer polled, with its pending re-poll. */
  forget(server: string): void {
    clearTimeout(this.servers.get(server)?.timer);
    this.servers.delete(server);
  }

  stop(): void {
    for (const s of this.servers.values()) clearTimeout(s.timer);
    this.servers.clear();
  }

  private start(server: string, s: { lastAt: number }): void {
    s.lastAt = Date.now();
    // The scheduler logs a failed poll itself; a re-poll adds nothing to say.
    this.refresh(server).catch(() => undefined);
  }
}
