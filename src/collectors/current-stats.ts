import type { MetricDef } from '../metrics/definitions.js';
import type { Labels, MetricSet } from '../metrics/metric-set.js';
import type { CurrentStats } from '../wowza/schemas.js';
import { WowzaHttpError } from '../wowza/errors.js';
import type { PollContext } from './collector.js';
import { connectionsByProtocol } from './protocol.js';

/** The metrics of one `monitoring/current` level (vhost, application or stream share the shape). */
export interface CurrentStatsDefs {
  uptime: MetricDef;
  connections: MetricDef;
  connectionsTotal: MetricDef;
  received: MetricDef;
  sent: MetricDef;
  receiveRate: MetricDef;
  sendRate: MetricDef;
}

/** `viewers: false` leaves the connection counts to another source (connectioncounts). */
export function addCurrentStats(out: MetricSet, defs: CurrentStatsDefs, labels: Labels, s: CurrentStats, viewers = true): void {
  out.add(defs.uptime, labels, s.uptime);
  out.add(defs.received, labels, s.bytesIn);
  out.add(defs.sent, labels, s.bytesOut);
  out.add(defs.receiveRate, labels, s.bytesInRate);
  out.add(defs.sendRate, labels, s.bytesOutRate);
  if (!viewers) return;
  out.add(defs.connectionsTotal, labels, s.totalConnections);
  for (const [protocol, value] of connectionsByProtocol(s.connectionCount)) out.add(defs.connections, { ...labels, protocol }, value);
}

/**
 * The statistics of an object discovery listed, or undefined when it is gone by now: the API answers 404 for
 * a removed object (reference, "Errors"). It then has no series, which is the truth, and is counted.
 */
export async function ifStillThere<T>(ctx: PollContext, read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (!(err instanceof WowzaHttpError) || err.status !== 404) throw err;
    ctx.vanished();
    return undefined;
  }
}
