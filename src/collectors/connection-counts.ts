import { M } from '../metrics/definitions.js';
import { withLabel, type Labels } from '../metrics/metric-set.js';
import type { StreamSessions } from '../wowza/connection-counts.js';
import { streamKey } from '../wowza/stream-key.js';
import type { Collector } from './collector.js';
import type { StreamRef } from './discovery.js';
import { streamLabels } from './instance.js';
import { eachConnection, unknownProtocols } from './protocol.js';

/** A stream of discovery, ready to be joined to the document: its key there, and its labels (per protocol too). */
interface Joined {
  key: string;
  labels: Labels;
  byProtocol: Map<string, Labels>;
}

/**
 * The joins of a walk's streams, made once per walk and shared by the polls until the next one (every poll of a
 * 2,000-stream server otherwise built 2,000 keys and 18,000 label sets that had not changed).
 */
const joins = new WeakMap<readonly StreamRef[], Joined[]>();

function joinedOf(server: string, streams: readonly StreamRef[]): Joined[] {
  let joined = joins.get(streams);
  if (!joined) {
    joined = streams.map((s) => ({ key: streamKey(s.vhost, s.app, s.instance, s.name), labels: streamLabels(server, s), byProtocol: new Map() }));
    joins.set(streams, joined);
  }
  return joined;
}

function protocolLabels(j: Joined, protocol: string): Labels {
  let labels = j.byProtocol.get(protocol);
  if (!labels) {
    labels = withLabel(j.labels, 'protocol', protocol);
    j.byProtocol.set(protocol, labels);
  }
  return labels;
}

/**
 * Per-stream viewers from the server's connectioncounts provider: one request per cycle for every stream,
 * where the REST path asks once per stream. Only for streams discovery knows (the instance lists are the truth
 * for which incoming streams exist; VOD files being watched also appear in the document and are left out), so
 * the series, their labels and the stream cap are exactly those of the REST `stream` collector, which then
 * reads only bytes and uptime. The provider URL-encodes names (the parser decodes them); a name is also matched as
 * written, for a server that does not encode. Document streams that match nothing are counted, and said when their number grows past a power of two.
 */
export const connectionCountsCollector: Collector = {
  name: 'connectioncounts',
  description: 'per-stream viewers by protocol for every stream in one request (HTTPConnectionCountsXML, :8086/connectioncounts)',
  appliesTo: (target) => target.connectionCountsUrl !== undefined,
  outsideRest: true,
  async poll(ctx, out) {
    const [topology, counts] = await Promise.all([ctx.discovery.get(ctx.signal), ctx.limit(() => ctx.client.connectionCounts(ctx.signal))]);
    const unknown = unknownProtocols(ctx.vocabulary, out, 'sessions');
    let written: Map<string, StreamSessions> | undefined;
    const matched = new Set<StreamSessions>();
    for (const j of joinedOf(ctx.server, topology.streams)) {
      let found = counts.get(j.key);
      if (!found) {
        written ??= new Map([...counts.values()].filter((c) => c.writtenKey !== undefined).map((c) => [c.writtenKey!, c]));
        found = written.get(j.key);
      }
      if (!found) continue;
      matched.add(found);
      out.add(M.streamConnectionsTotal, j.labels, found.total);
      eachConnection(found.sessions, unknown, (protocol, value) => out.add(M.streamConnections, protocolLabels(j, protocol), value));
    }
    const unmatched: string[] = [];
    for (const c of counts.values()) if (!matched.has(c)) unmatched.push(`${c.vhost}/${c.application}/${c.instance}/${c.stream}`);
    // One line when the count reaches another power of two (VOD viewers come and go every poll), with a few names.
    const examples = unmatched.slice(0, 5).map((n) => JSON.stringify(n.slice(0, 120))).join(', ');
    ctx.notices?.set(
      ctx.log,
      'connectioncounts streams without an incoming stream',
      unmatched.length === 0 ? undefined : `${2 ** Math.floor(Math.log2(unmatched.length))} or more`,
      `connectioncounts streams left out (e.g. ${examples}): in the document but no incoming stream of discovery (VOD files being played, streams filtered out or over the cap); their viewers are not exported`,
      'info',
    );
    out.add(M.connectionCountsUnmatched, { server: ctx.server }, unmatched.length);
  },
};
