/**
 * End-to-end acknowledgement for one follower: each chunk of lines it hands on is tracked with the
 * position reading continues at after it. A position is committed only when its chunk and every chunk
 * before it were acknowledged by every sink, so a saved position never skips an undelivered line.
 */

export interface AckTicket {
  /** Acknowledges `parts` of the chunk (one per line per sink). */
  ack(parts?: number): void;
}

interface Pending<P> {
  position: P;
  remaining: number;
  /** When the chunk was read (epoch ms). */
  readAt: number;
}

export class AckTracker<P> {
  private readonly pending: Pending<P>[] = [];

  constructor(private readonly commit: (position: P) => void) {}

  /**
   * Tracks a chunk read at `readAt` that needs `parts` acknowledgements; with 0 it completes as soon as those
   * before it do.
   */
  track(position: P, parts: number, readAt = Date.now()): AckTicket {
    const last = this.pending[this.pending.length - 1];
    if (parts <= 0 && last) {
      // Nothing to wait for: this chunk completes exactly when the one before it does, so it can
      // take that one's place. Keeps memory flat while a stuck sink holds everything up.
      last.position = position;
      return { ack: () => undefined };
    }
    const entry: Pending<P> = { position, remaining: parts, readAt };
    this.pending.push(entry);
    if (parts <= 0) this.advance();
    return {
      ack: (n = 1) => {
        if (entry.remaining <= 0) return;
        entry.remaining -= n;
        if (entry.remaining <= 0) this.advance();
      },
    };
  }

  /** When the oldest chunk not yet acknowledged by every sink was read, if there is one. */
  get oldestReadAt(): number | undefined {
    return this.pending[0]?.readAt;
  }

  /** Chunks handed on but not yet committed. */
  get outstanding(): number {
    return this.pending.length;
  }

  private advance(): void {
    let last: Pending<P> | undefined;
    while (this.pending.length > 0 && this.pending[0]!.remaining <= 0) last = this.pending.shift();
    if (last) this.commit(last.position);
  }
}
