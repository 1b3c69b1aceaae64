/**
 * Deterministic randomness. Values are a pure function of the seed and a name (a stream's path, a log
 * line number), so an object keeps its character when the topology around it changes.
 */

/** 32-bit hash of the seed and the parts (FNV-1a, then a murmur3 finaliser to spread the bits). */
export function hash32(seed: number, ...parts: Array<string | number>): number {
  let h = (0x811c9dc5 ^ (seed >>> 0)) >>> 0;
  for (const part of parts) {
    const s = String(part);
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    h ^= 0x1f; // separator, so ('ab','c') and ('a','bc') differ
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/** A number in [0, 1) from the seed and the parts. */
export function unit(seed: number, ...parts: Array<string | number>): number {
  return hash32(seed, ...parts) / 0x1_0000_0000;
}

/** A number in [min, max) from the seed and the parts. */
export function between(min: number, max: number, seed: number, ...parts: Array<string | number>): number {
  return min + (max - min) * unit(seed, ...parts);
}

/** A sequential generator (mulberry32) for streams of choices, such as generated log lines. */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = hash32(seed, 'sequence');
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 0x1_0000_0000;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** One of the items, chosen with the given weights. */
  weighted<T>(items: ReadonlyArray<readonly [T, number]>): T {
    const total = items.reduce((s, [, w]) => s + w, 0);
    let r = this.next() * total;
    for (const [item, w] of items) {
      r -= w;
      if (r < 0) return item;
    }
    return items[items.length - 1]![0];
  }
}
