import { M } from '../metrics/definitions.js';
import { streamKey } from '../wowza/stream-key.js';
import type { Collector } from './collector.js';
import { streamLabels } from './instance.js';
import { connectionsByProtocol, unknownProtocols } from './protocol.js';

/**
 * Per-stream viewers from the server's connectioncounts provider: one request per cycle for every stream,
 * where the REST path asks once per stream. Only for streams discovery knows (the instance lists are the truth
 * for which incoming streams exist; VOD files being watched also appear in the document and are left out), so
 * the series, their labels and the stream cap are exactly those of the REST `stream` collector, which then
 * reads only bytes and uptime.
 */
export const connectionCountsCollector: Collector = {
  name: 'connectioncounts',
  description: 'per-stream viewers by protocol for every stream in one request (HTTPConnectionCountsXML, :8086/connectioncounts)',
  appliesTo: (target) => target.connectionCountsUrl !== undefined,
  outsideRest: true,
  async poll(ctx, out) {
    const [topology, counts] = await Promise.all([ctx.discovery.get(ctx.signal), ctx.limit(() => ctx.client.connectionCounts(ctx.signal))]);
    const unknown = unknownProtocols(ctx.vocabulary, out, 'sessions');
    for (const s of topology.streams) {
      const found = counts.get(streamKey(s.vhost, s.app, s.instance, s.name));
      if (!found) continue;
      const labels = streamLabels(ctx.server, s);
      out.add(M.streamConnectionsTotal, labels, found.total);
      for (const [protocol, value] of connectionsByProtocol(found.sessions, unknown)) out.add(M.streamConnections, { ...labels, protocol }, value);
    }
  },
};
