/** WSE connection-map keys to the contract's `protocol` label values. */
const PROTOCOLS: Record<string, string> = {
  RTMP: 'rtmp',
  CUPERTINO: 'hls',
  MPEGDASH: 'mpeg_dash',
  SANJOSE: 'hds',
  SMOOTH: 'smooth',
  RTP: 'rtsp',
  WEBM: 'webm',
  DVRCHUNKS: 'dvr_chunks',
  WEBRTC: 'webrtc',
};

/** Unknown keys (new servers add some) are kept, lowercased and made label-safe. */
export function protocolLabel(key: string): string {
  return PROTOCOLS[key.toUpperCase()] ?? (key.toLowerCase().replace(/[^a-z0-9_]+/g, '_') || 'unknown');
}
