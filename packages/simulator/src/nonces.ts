import { randomBytes } from 'node:crypto';

/**
 * Digest nonces as the real server makes them (`base64("<epoch-ms>:<hex>")`), with their lifetime and the
 * nonce counts already used. Bounded: nonces older than twice their lifetime are forgotten, and so are the
 * oldest ones past a cap, which only turns a very old nonce into a `stale` answer.
 */

export type NonceState = 'valid' | 'expired' | 'unknown';

interface NonceEntry {
  issuedAt: number;
  /** Requests it authenticated. */
  uses: number;
  lastNc: number;
  seen: Set<number>;
  /** Counts at or below this are refused: they fell out of `seen`. */
  floor: number;
}

const MAX_NONCES = 50_000;
const MAX_SEEN_PER_NONCE = 10_000;

export class NonceStore {
  private readonly entries = new Map<string, NonceEntry>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    /** Uses after which a nonce is retired (RFC 7616 allows retiring by count as well as by age); 0: no limit. */
    private readonly maxUses = 0,
  ) {}

  issue(): string {
    const issuedAt = this.now();
    this.prune(issuedAt);
    const nonce = Buffer.from(`${issuedAt}:${randomBytes(16).toString('hex')}`).toString('base64');
    this.entries.set(nonce, { issuedAt, uses: 0, lastNc: 0, seen: new Set(), floor: 0 });
    return nonce;
  }

  state(nonce: string): NonceState {
    const e = this.entries.get(nonce);
    if (!e) return 'unknown';
    return this.now() - e.issuedAt > this.ttlMs || (this.maxUses > 0 && e.uses >= this.maxUses) ? 'expired' : 'valid';
  }

  /**
   * Records a nonce count. Strict: it must exceed the highest seen so far (a server that insists on order).
   * Lenient: any count not used before (concurrent requests may arrive out of order). False = rejected.
   */
  useCount(nonce: string, nc: number, strict: boolean): boolean {
    const e = this.entries.get(nonce);
    if (!e) return false;
    if (strict ? nc <= e.lastNc : nc <= e.floor || e.seen.has(nc)) return false;
    e.seen.add(nc);
    e.uses++;
    e.lastNc = Math.max(e.lastNc, nc);
    if (e.seen.size > MAX_SEEN_PER_NONCE) {
      // Counts far below the highest cannot be told apart any more: refuse them from now on.
      e.floor = e.lastNc - MAX_SEEN_PER_NONCE / 2;
      for (const n of e.seen) if (n <= e.floor) e.seen.delete(n);
    }
    return true;
  }

  private prune(now: number): void {
    for (const [nonce, e] of this.entries) {
      if (now - e.issuedAt <= 2 * this.ttlMs && this.entries.size < MAX_NONCES) break;
      this.entries.delete(nonce);
    }
  }
}
