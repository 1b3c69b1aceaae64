/**
 * Protocol names to the contract's `protocol` label values: the keys of the REST `connectionCount` maps, and the
 * `Sessions*` names of the connectioncounts provider (wowza-api.md: Flash = RTMP, RTSP = RTP), so both sources
 * give a stream the same series.
 */
const PROTOCOLS: Record<string, string> = {
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
};

/** Unknown keys (new servers add some) are kept, lowercased and made label-safe. */
export function protocolLabel(key: string): string {
  return PROTOCOLS[key.toUpperCase()] ?? (key.toLowerCase().replace(/[^a-z0-9_]+/g, '_') || 'unknown');
}

/** Connections per `protocol` label; two keys of one label (a server sending both RTP and rtp) are summed, not doubled. */
export function connectionsByProtocol(counts: Readonly<Record<string, number | null>>): Map<string, number> {
  const byProtocol = new Map<string, number>();
  for (const [key, value] of Object.entries(counts)) {
    if (value === null) continue;
    const p = protocolLabel(key);
    byProtocol.set(p, (byProtocol.get(p) ?? 0) + value);
  }
  return byProtocol;
}
