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

/** The `protocol` label of a key: its documented name, else `other`. */
export function protocolLabel(key: string): string {
  return (key.length <= LONGEST_KEY ? PROTOCOLS.get(key.toUpperCase()) : undefined) ?? OTHER_PROTOCOL;
}

/**
 * Connections per `protocol` label; two keys of one label (a server sending both RTP and rtp, or several unknown
 * keys in `other`) are summed, not doubled. `onUnknown` hears the keys that went to `other`, at most a few per call:
 * a map of 14,000 keys costs a pass over them, not 14,000 reports (only MAX_UNKNOWN_VALUES are ever told apart).
 */
export function connectionsByProtocol(counts: Readonly<Record<string, number | null>>, onUnknown?: (key: string) => void): Map<string, number> {
  const byProtocol = new Map<string, number>();
  let unknown = 0;
  for (const key in counts) {
    const value = counts[key];
    if (value === null || value === undefined) continue;
    const p = protocolLabel(key);
    if (p === OTHER_PROTOCOL && onUnknown && unknown++ <= MAX_UNKNOWN_VALUES) onUnknown(key);
    byProtocol.set(p, (byProtocol.get(p) ?? 0) + value);
  }
  return byProtocol;
}

/**
 * Counts a key that went to `other` as an unknown value of `field` (wowza_exporter_unknown_values_total, said once):
 * named as the server's vocabulary bounds it (cut, control characters removed, the first MAX_UNKNOWN_VALUES apart).
 */
export function unknownProtocols(vocabulary: PollContext['vocabulary'], out: MetricSet, field: string): (key: string) => void {
  const names = vocabulary(field, []);
  return (key) => out.unknown(field, names.label(key).value);
}
