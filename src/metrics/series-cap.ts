import type { Logger } from '../logger.js';
import { MetricSet, type Family, type Sample } from './metric-set.js';

export interface SeriesCapOptions {
  /** The series one server may have across all its sets; read at every poll, so a reload changes it. */
  max: () => number;
  /** Told how many series a server's sets leave out now, whenever that may have changed. */
  onDropped?: (server: string, dropped: number) => void;
  log?: Logger;
}

interface Held {
  /** Series the collector's last poll produced. */
  wanted: number;
  /** Series of it stored. */
  kept: number;
}

/**
 * A ceiling on the series of one server, over every collector's set together: whatever a server sends, its share of
 * a scrape is bounded. Room is shared out smallest set first (max-min fair), so the server's few own series (machine,
 * status) stay whole and the largest sets (streams) give way; the sets stored never add up to more than the cap.
 * What is left out is counted (`onDropped`, the wowza_exporter_series_dropped gauge) and said when it starts and ends.
 */
export class SeriesCap {
  private readonly servers = new Map<string, Map<string, Held>>();
  private readonly over = new Set<string>();

  constructor(private readonly o: SeriesCapOptions) {}

  /** The part of `set` that fits, recorded as what `server`'s `collector` now holds. */
  fit(server: string, collector: string, set: MetricSet): MetricSet {
    let held = this.servers.get(server);
    if (!held) this.servers.set(server, (held = new Map()));
    const max = this.o.max();
    const wanted = set.size;
    held.set(collector, { wanted, kept: 0 });
    let othersKept = 0;
    for (const [name, h] of held) if (name !== collector) othersKept += h.kept;
    const room = Math.max(0, Math.min(fairShare(max, [...held.values()].map((h) => h.wanted), wanted), max - othersKept));
    const kept = Math.min(wanted, room);
    held.set(collector, { wanted, kept });
    this.report(server, max);
    return kept === wanted ? set : firstSeries(set, kept);
  }

  /** `server`'s `collector` holds nothing now (its poll failed, or it stopped). */
  forget(server: string, collector: string): void {
    if (this.servers.get(server)?.delete(collector)) this.report(server, this.o.max());
  }

  /** The server is no longer polled: nothing of it is counted (its self metrics go with it). */
  forgetServer(server: string): void {
    this.servers.delete(server);
    this.over.delete(server);
  }

  private report(server: string, max: number): void {
    let dropped = 0;
    for (const h of this.servers.get(server)?.values() ?? []) dropped += h.wanted - h.kept;
    this.o.onDropped?.(server, dropped);
    if (dropped > 0 && !this.over.has(server)) {
      this.over.add(server);
      this.o.log?.warn({ server, dropped, cap: max }, 'series cap reached: series of this server left out of metrics (counted in wowza_exporter_series_dropped; raise discovery.max_series_per_server or filter objects)');
    } else if (dropped === 0 && this.over.delete(server)) {
      this.o.log?.info({ server, cap: max }, 'series of this server back under the cap');
    }
  }
}

/**
 * What a set of `mine` series gets when `max` is shared out between sets of the sizes `wanted` (mine among them):
 * every set smaller than an even share gets all it wants, the rest split what is left evenly.
 */
export function fairShare(max: number, wanted: readonly number[], mine: number): number {
  let room = max;
  let left = wanted.length;
  for (const w of [...wanted].sort((a, b) => a - b)) {
    const even = Math.floor(room / left);
    if (w > even) return Math.min(mine, even);
    room -= w;
    left--;
  }
  return mine;
}

/**
 * The first `n` series of a set: whole families in the order the collector made them (the same order every poll),
 * and of the family at the edge, its samples in label order, so the same series stay from one poll to the next.
 */
function firstSeries(set: MetricSet, n: number): MetricSet {
  const out = new MetricSet();
  let room = n;
  for (const [name, family] of set.families) {
    if (room <= 0) break;
    let samples: Sample[] = family.samples;
    if (samples.length > room) {
      samples = samples
        .map((s) => ({ s, k: Object.values(s.labels).join('\u0000') }))
        .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))
        .slice(0, room)
        .map((x) => x.s);
    }
    out.families.set(name, { def: family.def, samples } satisfies Family);
    room -= samples.length;
  }
  for (const [k, v] of set.drops) out.drops.set(k, v);
  for (const [k, v] of set.notes) out.notes.set(k, v);
  for (const [k, v] of set.unknowns) out.unknowns.set(k, v);
  return out;
}
