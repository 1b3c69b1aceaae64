import type { MetricSet } from '../metrics/metric-set.js';
import type { PollContext } from './collector.js';
import { MAX_UNKNOWN_VALUES } from './label-vocabulary.js';

/**
 * Protocol names to the contract's `protocol` label values: the keys of the REST `connectionCount` maps, and the
 * `Sessions*` names of the connectioncounts provider (wowza-api.md: Flash = RTMP, RTSP = RTP), so both sources
 * give a stream the same series.
 */
const PROTOCOLS = new Map<string, string>(Object.entries({
  RTMP: 'rtmp',
  FLASH: 'rtmp',
  CUPERTINO: 'hls',
  MPEGDASH: 'mpeg_dash',
  SANJOSE: 'hds',
  SMOOTH: 'smooth',
  RTP: 'rtsp',
  RTSP: 'rtsp',
  WEBM: 'webm',
  DVRCHUNKS: 'dvr_chunks',
  WEBRTC: 'webrtc',
}));

/** Where the keys outside the documented set are counted, summed: a server cannot mint a series per key. */
export const OTHER_PROTOCOL = 'other';

/** The longest key above: longer ones are not upper-cased to be looked up (a hostile key may be megabytes). */
const LONGEST_KEY = Math.max(...[...PROTOCOLS.keys()].map((k) => k.length));

/**
 * Keys as servers write them (`Flash`, `CUPERTINO`...) to their labels, learned as they are met: each stream's counts
 * repeat the same few keys, and upper-casing each to look it up made a string per key per stream per poll. Bounded, as
 * the keys come from the server: once full, keys not in it are looked up the long way.
 */
const KNOWN_KEYS = new Map<string, string>();
const MAX_KNOWN_KEYS = 64;

/** The `protocol` label of a key: its documented name, else `other`. */
export function protocolLabel(key: string): string {
  if (key.length > LONGEST_KEY) return OTHER_PROTOCOL; // before the lookup, which hashes the whole key
  const known = KNOWN_KEYS.get(key);
  if (known !== undefined) return known;
  const label = PROTOCOLS.get(key.toUpperCase()) ?? OTHER_PROTOCOL;
  if (KNOWN_KEYS.size < MAX_KNOWN_KEYS) KNOWN_KEYS.set(key, label);
  return label;
}

/** Where eachConnection sums a call's counts: one map for every call (they run one at a time, to their end). */
const sums = new Map<string, number>();

/**
 * Connections per `protocol` label, handed to `each`; two keys of one label (a server sending both RTP and rtp, or
 * several unknown keys in `other`) are summed, not doubled. `onUnknown` hears the keys that went to `other`, at most a
 * few per call: a map of 14,000 keys costs a pass over them, not 14,000 reports (only MAX_UNKNOWN_VALUES are ever
 * told apart). Called for every stream at every poll, so it leaves nothing behind: no map, no entry arrays.
 */
export function eachConnection(counts: Readonly<Record<string, number | null>>, onUnknown: ((key: string) => void) | undefined, each: (protocol: string, value: number) => void): void {
  sums.clear();
  let unknown = 0;
  for (const key in counts) {
    const value = counts[key];
    if (value === null || value === undefined) continue;
    const p = protocolLabel(key);
    if (p === OTHER_PROTOCOL && onUnknown && unknown++ <= MAX_UNKNOWN_VALUES) onUnknown(key);
    sums.set(p, (sums.get(p) ?? 0) + value);
  }
  sums.forEach((value, protocol) => each(protocol, value));
  sums.clear();
}

/**
 * Counts a key that went to `other` as an unknown value of `field` (wowza_exporter_unknown_values_total, said once):
 * named as the server's vocabulary bounds it (cut, control characters removed, the first MAX_UNKNOWN_VALUES apart).
 */
export function unknownProtocols(vocabulary: PollContext['vocabulary'], out: MetricSet, field: string): (key: string) => void {
  const names = vocabulary(field, []);
  return (key) => out.unknown(field, names.label(key).value);
}
