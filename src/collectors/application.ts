import { M } from '../metrics/definitions.js';
import type { Collector } from './collector.js';
import { addCurrentStats, readEach } from './current-stats.js';
import { unknownProtocols } from './protocol.js';

const DEFS = {
  uptime: M.applicationUptime,
  connections: M.applicationConnections,
  connectionsTotal: M.applicationConnectionsTotal,
  received: M.applicationReceived,
  sent: M.applicationSent,
  receiveRate: M.applicationReceiveRate,
  sendRate: M.applicationSendRate,
};

const flag = (v: boolean | null | undefined) => (v ? 'true' : 'false');

/** Application list facts and `{A}/monitoring/current` per application. One request per application; one failing is left out. */
export const applicationCollector: Collector = {
  name: 'application',
  description: 'application type, flags, connections and traffic ({A}/monitoring/current)',
  async poll(ctx, out) {
    const topology = await ctx.discovery.get(ctx.signal);
    const unknown = unknownProtocols(ctx.vocabulary, out, 'connectionCount');
    await readEach(
      ctx,
      topology.apps,
      ({ vhost, app }) => `${vhost}/${app.id}`,
      ({ vhost, app }) => ctx.limit(() => ctx.client.applicationCurrent(vhost, app.id, ctx.signal)),
      ({ vhost, app }, stats) => {
        const labels = { server: ctx.server, vhost, application: app.id };
        out.add(
          M.applicationInfo,
          { ...labels, app_type: app.appType ?? 'unknown', dvr: flag(app.dvrEnabled), transcoder: flag(app.transcoderEnabled), drm: flag(app.drmEnabled) },
          1,
        );
        addCurrentStats(out, DEFS, labels, stats, unknown);
      },
    );
  },
};
