import { M } from '../metrics/definitions.js';
import type { Collector } from './collector.js';
import { addCurrentStats, readEach } from './current-stats.js';
import { streamLabels } from './instance.js';
import { unknownProtocols } from './protocol.js';

const DEFS = {
  uptime: M.streamUptime,
  connections: M.streamConnections,
  connectionsTotal: M.streamConnectionsTotal,
  received: M.streamReceived,
  sent: M.streamSent,
  receiveRate: M.streamReceiveRate,
  sendRate: M.streamSendRate,
};

/**
 * `{I}/incomingstreams/{stream}/monitoring/current` per stream the instance list shows (the list is the
 * truth for existence: the API answers 200 with zeros for streams that do not exist). One request per stream.
 * Streams come and go all the time: one that ended since discovery (404) or that fails is left out, the rest stay. With
 * connectioncounts the viewers come from there, and this collector reads only bytes and uptime.
 */
export const streamCollector: Collector = {
  name: 'stream',
  description: 'per incoming stream traffic and viewers ({I}/incomingstreams/{stream}/monitoring/current)',
  async poll(ctx, out) {
    const topology = await ctx.discovery.get(ctx.signal);
    const unknown = unknownProtocols(ctx.vocabulary, out, 'connectionCount');
    await readEach(
      ctx,
      topology.streams,
      (s) => `${s.vhost}/${s.app}/${s.instance}/${s.name}`,
      (s) => ctx.limit(() => ctx.client.streamCurrent(s.vhost, s.app, s.instance, s.name, ctx.signal)),
      (s, stats) => addCurrentStats(out, DEFS, streamLabels(ctx.server, s), stats, unknown, !ctx.viewersFromConnectionCounts),
    );
  },
};
