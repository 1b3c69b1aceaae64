import type { Reply } from '../reply.js';
import type { Router } from '../router.js';
import { DEFAULT_INSTANCE, type Topology } from '../topology.js';
import type { CurrentStatsBody, ValueModel } from '../values.js';
import { escapeXml } from '../xml.js';

/**
 * `GET /connectioncounts`: the `HTTPConnectionCountsXML` HTTP provider of a default install (wowza-api.md; on a
 * real server it listens on the admin port, 8086, with an authentication of its own: so does the simulator's), names
 * URL-encoded as the real provider writes them. The tree
 * (`WowzaStreamingEngine` > `VHost` > `Application` > `ApplicationInstance` > `Stream`), or with `?flat` one
 * `<Stream .../>` per stream, with the same numbers the REST monitoring resources serve at the same moment.
 * Newer servers add session kinds: `SessionsWebRTC` is here too. Always XML, whatever the Accept header asks.
 */

/** REST `connectionCount` keys to the provider's session names (wowza-api.md: Flash = RTMP, RTSP = RTP). */
const SESSIONS: ReadonlyArray<[rest: string, provider: string]> = [
  ['RTMP', 'Flash'],
  ['CUPERTINO', 'Cupertino'],
  ['SANJOSE', 'SanJose'],
  ['SMOOTH', 'Smooth'],
  ['RTP', 'RTSP'],
  ['MPEGDASH', 'MPEGDash'],
  ['WEBRTC', 'WebRTC'],
];

/**
 * A name as the real provider writes it: Java's `URLEncoder.encode(name, "UTF-8")` (letters, digits and `.-*_` as
 * they are, a space as `+`, every other byte of the UTF-8 as `%XX`); a real document holds
 * `294%2F294%2F294_content_lq.mp4` (wowza-api.md).
 */
function urlEncoded(name: string): string {
  let out = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9.\-*_]/.test(c)) out += c;
    else if (byte === 0x20) out += '+';
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const rate = (n: number | undefined) => (n ?? 0).toFixed(1);
const el = (name: string, value: string | number) => `<${name}>${typeof value === 'string' ? escapeXml(value) : value}</${name}>`;

/**
 * The counters every level carries. The simulator keeps no connection history, so the totals since start are
 * the current connections (a lower bound) and none were rejected.
 */
function counters(s: Pick<CurrentStatsBody, 'totalConnections' | 'bytesInRate' | 'bytesOutRate'>): string {
  const current = s.totalConnections;
  return (
    el('ConnectionsCurrent', current) +
    el('ConnectionsTotal', current) +
    el('ConnectionsTotalAccepted', current) +
    el('ConnectionsTotalRejected', 0) +
    el('MessagesInBytesRate', rate(s.bytesInRate)) +
    el('MessagesOutBytesRate', rate(s.bytesOutRate))
  );
}

function sessions(s: CurrentStatsBody, attribute: boolean): string {
  const pairs: Array<[string, number]> = SESSIONS.filter(([rest]) => rest in s.connectionCount).map(([rest, name]) => [`Sessions${name}`, s.connectionCount[rest]!]);
  pairs.push(['SessionsTotal', s.totalConnections]);
  return attribute ? pairs.map(([k, v]) => ` s${k.slice(1)}="${v}"`).join('') : pairs.map(([k, v]) => el(k, v)).join('');
}

export function connectionCountsXml(values: ValueModel, topology: Topology, flat: boolean): string {
  const machine = values.machine();
  let xml = '<?xml version="1.0" encoding="UTF-8"?>\n<WowzaStreamingEngine>';
  if (!flat) xml += counters({ totalConnections: machine.connectionCount });
  for (const v of topology.vhostNodes()) {
    const vhost = values.vhost(v.name)!;
    if (!flat) xml += `<VHost>${el('Name', urlEncoded(v.name))}${el('TimeRunning', rate(vhost.uptime))}${el('ConnectionsLimit', 0)}${counters(vhost)}`;
    for (const a of v.apps.values()) {
      if (a.startedAt === undefined) continue; // not loaded: no instance, no streams
      const app = values.application(v.name, a.name)!;
      if (!flat) xml += `<Application>${el('Name', urlEncoded(a.name))}${el('Status', 'loaded')}${el('TimeRunning', rate(app.uptime))}${counters(app)}<ApplicationInstance>${el('Name', DEFAULT_INSTANCE)}${el('TimeRunning', rate(app.uptime))}${counters(app)}`;
      for (const s of a.streams.values()) {
        const stats = values.stream(v.name, a.name, DEFAULT_INSTANCE, s.name)!;
        xml += flat
          ? `<Stream vhostName="${escapeXml(urlEncoded(v.name))}" applicationName="${escapeXml(urlEncoded(a.name))}" appInstanceName="${DEFAULT_INSTANCE}" streamName="${escapeXml(urlEncoded(s.name))}"${sessions(stats, true)}/>`
          : `<Stream>${el('Name', urlEncoded(s.name))}${sessions(stats, false)}</Stream>`;
      }
      if (!flat) xml += '</ApplicationInstance></Application>';
    }
    if (!flat) xml += '</VHost>';
  }
  return `${xml}</WowzaStreamingEngine>\n`;
}

export function registerConnectionCountsRoute(router: Router, values: ValueModel, topology: Topology): void {
  router.add('GET', '/connectioncounts', (ctx): Reply => ({
    kind: 'raw',
    status: 200,
    contentType: 'text/xml;charset=UTF-8',
    body: connectionCountsXml(values, topology, ctx.query.has('flat')),
  }));
}
