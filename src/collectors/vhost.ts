import { M } from '../metrics/definitions.js';
import type { Collector } from './collector.js';
import { addCurrentStats, readEach } from './current-stats.js';
import { unknownProtocols } from './protocol.js';

const DEFS = {
  uptime: M.vhostUptime,
  connections: M.vhostConnections,
  connectionsTotal: M.vhostConnectionsTotal,
  received: M.vhostReceived,
  sent: M.vhostSent,
  receiveRate: M.vhostReceiveRate,
  sendRate: M.vhostSendRate,
};

/** `{V}/monitoring/current` per virtual host: connections by protocol, bytes in/out. One request per vhost; one removed since discovery (404) or failing is left out. */
export const vhostCollector: Collector = {
  name: 'vhost',
  description: 'virtual host connections and traffic ({V}/monitoring/current)',
  async poll(ctx, out) {
    const topology = await ctx.discovery.get(ctx.signal);
    const unknown = unknownProtocols(ctx.vocabulary, out, 'connectionCount');
    await readEach(
      ctx,
      topology.vhosts,
      (vhost) => vhost,
      (vhost) => ctx.limit(() => ctx.client.vhostCurrent(vhost, ctx.signal)),
      (vhost, stats) => addCurrentStats(out, DEFS, { server: ctx.server, vhost }, stats, unknown),
    );
  },
};
