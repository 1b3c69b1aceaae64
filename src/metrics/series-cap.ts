import type { Logger } from '../base/logger.js';
import { MAX_LABEL_BYTES, overBytes, SHORTENED_SUFFIX, shortenLabelValue } from './label-bounds.js';
import { MetricSet, type Family, type Labels, type Sample } from './metric-set.js';

/**
 * The default of discovery.max_bytes_per_server: a server's share of /metrics, estimated from its sample lines. 8 MiB
 * holds 100,000 series (the series cap) of about 80 bytes each, far more than real servers, and keeps a scrape of one
 * hostile server under 10 MB.
 */
export const DEFAULT_MAX_BYTES_PER_SERVER = 8 * 1024 * 1024;

export interface SeriesCapOptions {
  /** The series one server may have across all its sets; read at every poll, so a reload changes it. */
  max: () => number;
  /** The bytes of sample lines one server may have across all its sets (DEFAULT_MAX_BYTES_PER_SERVER when not given). */
  maxBytes?: () => number;
  /** Told how many series a server's sets leave out now (by either cap), whenever that may have changed. */
  onDropped?: (server: string, dropped: number) => void;
  /** Told how many distinct values of `label` a poll of `server`'s `collector` had shortened (label-bounds.ts). */
  onShortened?: (server: string, collector: string, label: string, values: number) => void;
  log?: Logger;
}

interface Held {
  /** Series the collector's last poll produced. */
  wanted: number;
  /** Series of it stored. */
  kept: number;
  /** Estimated bytes of the series it produced, and of those stored. */
  wantedBytes: number;
  keptBytes: number;
  /** Which cap left some of it out at its last fit. */
  byCount: boolean;
  byBytes: boolean;
}

/**
 * A ceiling on the series of one server, over every collector's set together: whatever a server sends, its share of
 * a scrape is bounded. Room is shared out smallest set first (max-min fair), so the server's few own series (machine,
 * status) stay whole and the largest sets (streams) give way; the sets stored never add up to more than the cap.
 * What is left out is counted (`onDropped`, the wowza_exporter_series_dropped gauge) and said when it starts and ends.
 */
export class SeriesCap {
  private readonly servers = new Map<string, Map<string, Held>>();
  /** Servers over the series cap, and over the byte cap, now: each said when it starts and when it stops. */
  private readonly over = new Set<string>();
  private readonly overBytes = new Set<string>();
  /** `server\0collector\0label` whose values were shortened, said once each. */
  private readonly shortenedSaid = new Set<string>();

  constructor(private readonly o: SeriesCapOptions) {}

  /**
   * The part of `set` that fits, its label values over MAX_LABEL_BYTES shortened, recorded as what `server`'s
   * `collector` now holds.
   */
  fit(server: string, collector: string, set: MetricSet): MetricSet {
    const wanted = set.size;
    const short = this.shorten(server, collector, set);
    let held = this.servers.get(server);
    if (!held) this.servers.set(server, (held = new Map()));
    const max = this.o.max();
    const maxBytes = this.maxBytes();
    const wantedBytes = setBytes(short);
    held.set(collector, { wanted, kept: 0, wantedBytes, keptBytes: 0, byCount: false, byBytes: false });
    let othersKept = 0;
    let othersBytes = 0;
    for (const [name, h] of held) {
      if (name === collector) continue;
      othersKept += h.kept;
      othersBytes += h.keptBytes;
    }
    const all = [...held.values()];
    const room = Math.max(0, Math.min(fairShare(max, all.map((h) => h.wanted), wanted), max - othersKept));
    const roomBytes = Math.max(0, Math.min(fairShare(maxBytes, all.map((h) => h.wantedBytes), wantedBytes), maxBytes - othersBytes));
    const byCount = short.size > room;
    const byBytes = wantedBytes > roomBytes;
    const out = byCount || byBytes ? firstSeries(short, room, roomBytes) : { set: short, bytes: wantedBytes };
    held.set(collector, { wanted, kept: out.set.size, wantedBytes, keptBytes: out.bytes, byCount, byBytes });
    this.report(server);
    return out.set;
  }

  /** `server`'s `collector` holds nothing now (its poll failed, or it stopped). */
  forget(server: string, collector: string): void {
    if (this.servers.get(server)?.delete(collector)) this.report(server);
  }

  /** The server is no longer polled: nothing of it is counted (its self metrics go with it). */
  forgetServer(server: string): void {
    this.servers.delete(server);
    this.over.delete(server);
    this.overBytes.delete(server);
    const prefix = `${server}\u0000`;
    for (const key of this.shortenedSaid) if (key.startsWith(prefix)) this.shortenedSaid.delete(key);
  }

  private maxBytes(): number {
    return this.o.maxBytes?.() ?? DEFAULT_MAX_BYTES_PER_SERVER;
  }

  /** `set` with its long label values shortened (the set itself when none is); each label's count told and said once. */
  private shorten(server: string, collector: string, set: MetricSet): MetricSet {
    const result = shortenLabels(set);
    if (result.set === set) return set;
    for (const [label, values] of result.shortened) {
      this.o.onShortened?.(server, collector, label, values);
      const key = `${server}\u0000${collector}\u0000${label}`;
      if (this.shortenedSaid.has(key)) continue;
      this.shortenedSaid.add(key);
      this.o.log?.warn(
        { server, collector, label, values, max_bytes: MAX_LABEL_BYTES },
        'label values over the length cap shortened: a prefix, ~ and a hash of the whole value (said once per server, collector and label)',
      );
    }
    const clash = `${server}\u0000${collector}\u0000\u0000collision`;
    if (result.collided > 0 && !this.shortenedSaid.has(clash)) {
      this.shortenedSaid.add(clash);
      this.o.log?.warn({ server, collector, series: result.collided }, 'series left out: a shortened label value met another value of the same label (counted in wowza_exporter_series_dropped; said once)');
    }
    return result.set;
  }

  private report(server: string): void {
    let dropped = 0;
    let bytes = 0;
    let byCount = false;
    let byBytes = false;
    for (const h of this.servers.get(server)?.values() ?? []) {
      dropped += h.wanted - h.kept;
      bytes += h.wantedBytes;
      byCount ||= h.byCount;
      byBytes ||= h.byBytes;
    }
    this.o.onDropped?.(server, dropped);
    const max = this.o.max();
    if (byCount && !this.over.has(server)) {
      this.over.add(server);
      this.o.log?.warn({ server, dropped, cap: max }, 'series cap reached: series of this server left out of metrics (counted in wowza_exporter_series_dropped; raise discovery.max_series_per_server or filter objects)');
    } else if (!byCount && this.over.delete(server)) {
      this.o.log?.info({ server, cap: max }, 'series of this server back under the cap');
    }
    const maxBytes = this.maxBytes();
    if (byBytes && !this.overBytes.has(server)) {
      this.overBytes.add(server);
      this.o.log?.warn(
        { server, dropped, bytes, cap_bytes: maxBytes },
        'byte cap reached: series of this server left out of metrics (counted in wowza_exporter_series_dropped; raise discovery.max_bytes_per_server or filter objects)',
      );
    } else if (!byBytes && this.overBytes.delete(server)) {
      this.o.log?.info({ server, bytes, cap_bytes: maxBytes }, 'series of this server back under the byte cap');
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
 * The first series of a set, at most `n` of them and `bytes` of sample lines: whole families in the order the
 * collector made them (the same order every poll), and of the family at the edge, its samples in label order as long
 * as they fit, so the same series stay from one poll to the next.
 */
function firstSeries(set: MetricSet, n: number, bytes: number): { set: MetricSet; bytes: number } {
  const out = withoutFamilies(set);
  let room = n;
  let roomBytes = bytes;
  for (const [name, family] of set.families) {
    if (room <= 0) break;
    const whole = familyBytes(name, family.samples);
    if (family.samples.length <= room && whole <= roomBytes) {
      out.families.set(name, family);
      room -= family.samples.length;
      roomBytes -= whole;
      continue;
    }
    const sorted = family.samples
      .map((s) => ({ s, k: Object.values(s.labels).join('\u0000') }))
      .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
    const samples: Sample[] = [];
    for (const { s } of sorted) {
      const line = lineBytes(name, s);
      if (samples.length >= room || line > roomBytes) break;
      samples.push(s);
      roomBytes -= line;
    }
    if (samples.length > 0) out.families.set(name, { def: family.def, samples } satisfies Family);
    break;
  }
  return { set: out, bytes: bytes - roomBytes };
}

/** A new set with `set`'s drops, notes and unknowns (counted by the scheduler already) and no series. */
function withoutFamilies(set: MetricSet): MetricSet {
  const out = new MetricSet();
  for (const [k, v] of set.drops) out.drops.set(k, v);
  for (const [k, v] of set.notes) out.notes.set(k, v);
  for (const [k, v] of set.unknowns) out.unknowns.set(k, v);
  return out;
}

/**
 * The bytes of a sample's line in the exposition, `name{k="v",...} value\n`, within a few (escapes, the labels of a
 * target file and the HELP and TYPE lines are left out of the estimate).
 */
export function lineBytes(name: string, s: Sample): number {
  let n = name.length + 4 + String(s.value).length;
  for (const k in s.labels) n += k.length + 4 + Buffer.byteLength(s.labels[k]!, 'utf8');
  return n;
}

function familyBytes(name: string, samples: readonly Sample[]): number {
  let n = 0;
  for (const s of samples) n += lineBytes(name, s);
  return n;
}

function setBytes(set: MetricSet): number {
  let n = 0;
  for (const [name, family] of set.families) n += familyBytes(name, family.samples);
  return n;
}

/**
 * `set` with every label value over MAX_LABEL_BYTES shortened (shortenLabelValue), `server` aside (the configured
 * name), and how many distinct values of each label were. A sample whose shortened value equals another value of the
 * same label (a hash collision, or a server naming an object like another's shortened name) is left out rather than
 * merged into the other's series: the first one met keeps the value.
 */
export function shortenLabels(set: MetricSet): { set: MetricSet; shortened: Map<string, number>; collided: number } {
  const shortened = new Map<string, number>();
  const memo = new Map<string, string>();
  /** Values that end like a shortened one, by label: what each stands for. */
  const owners = new Map<string, string>();
  let collided = 0;
  let changed = false;
  const families = new Map<string, Family>();
  for (const [name, family] of set.families) {
    let samples: Sample[] | undefined;
    family.samples.forEach((s, i) => {
      let labels: Record<string, string> | undefined;
      let clash = false;
      for (const k in s.labels) {
        const v = s.labels[k]!;
        if (k === 'server') continue;
        let short = v;
        if (overBytes(v, MAX_LABEL_BYTES)) {
          const key = `${k}\u0000${v}`;
          short = memo.get(key) ?? '';
          if (short === '') {
            memo.set(key, (short = shortenLabelValue(v)));
            shortened.set(k, (shortened.get(k) ?? 0) + 1);
          }
          (labels ??= { ...s.labels })[k] = short;
        }
        // `~` 17 from the end first: the regular expression for every label of every sample was a good part of a fit.
        if (short.length < 17 || short.charCodeAt(short.length - 17) !== 0x7e || !SHORTENED_SUFFIX.test(short)) continue;
        const owner = `${k}\u0000${short}`;
        const was = owners.get(owner);
        if (was === undefined) owners.set(owner, v);
        else if (was !== v) clash = true;
      }
      if (labels || clash) samples ??= family.samples.slice(0, i);
      if (clash) collided++;
      else if (samples) samples.push(labels ? { ...s, labels: labels as Labels } : s);
    });
    if (samples) changed = true;
    families.set(name, samples ? { def: family.def, samples } : family);
  }
  if (!changed) return { set, shortened, collided };
  const out = withoutFamilies(set);
  for (const [name, family] of families) if (family.samples.length > 0) out.families.set(name, family);
  return { set: out, shortened, collided };
}
