/**
 * What the webhook receiver remembers (event ids, token ids), bounded in count and in time: an entry is forgotten
 * when it expires, and the oldest go first when there are more than `max`, so a flood of deliveries cannot grow it.
 */
export class BoundedMemory<V> {
  /** Insertion order is age order (a Map keeps it): the first entry is the oldest. */
  private readonly entries = new Map<string, { value: V; until: number }>();
  constructor(private readonly max: number) {}

  /** The value remembered for `key`, unless it expired by `nowMs`. */
  get(key: string, nowMs: number): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.until < nowMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  /** Remembers `value` for `key` until `untilMs` (epoch ms). */
  set(key: string, value: V, untilMs: number, nowMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, until: untilMs });
    // Expired entries at the old end go as new ones come, so a quiet receiver does not keep a busy hour's ids.
    for (const [k, e] of this.entries) {
      if (e.until >= nowMs) break;
      this.entries.delete(k);
    }
    // The oldest goes: it expires soonest, or already has. One deletion per insertion keeps a flood linear.
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}
