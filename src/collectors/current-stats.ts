import type { MetricDef } from '../metrics/definitions.js';
import { withLabel, type Labels, type MetricSet } from '../metrics/metric-set.js';
import type { CurrentStats } from '../wowza/schemas.js';
import { WowzaHttpError } from '../wowza/errors.js';
import type { PollContext } from './collector.js';
import { eachConnection } from './protocol.js';

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

/**
 * `viewers: false` leaves the connection counts to another source (connectioncounts). `connectionCount` keys outside
 * the documented protocols are summed as `protocol="other"` and told to `unknownProtocol` (protocol.ts).
 */
export function addCurrentStats(out: MetricSet, defs: CurrentStatsDefs, labels: Labels, s: CurrentStats, unknownProtocol: (key: string) => void, viewers = true): void {
  // Required at every level by the server's models (MODELS.md), except the rates of a vhost.
  out.addRequired(defs.uptime, labels, s.uptime, 'uptime');
  out.addRequired(defs.received, labels, s.bytesIn, 'bytesIn');
  out.addRequired(defs.sent, labels, s.bytesOut, 'bytesOut');
  out.add(defs.receiveRate, labels, s.bytesInRate, 'bytesInRate');
  out.add(defs.sendRate, labels, s.bytesOutRate, 'bytesOutRate');
  if (!viewers) return;
  out.addRequired(defs.connectionsTotal, labels, s.totalConnections, 'totalConnections');
  if (!s.connectionCount) {
    out.drop('connectionCount', 'missing');
    return;
  }
  // withLabel, not a spread: on Node 20 each spread-and-extended object got a hidden class of its own (metric-set.ts).
  eachConnection(s.connectionCount, unknownProtocol, (protocol, value) => out.add(defs.connections, withLabel(labels, 'protocol', protocol), value, 'connectionCount'));
}

/**
 * Reads each object of a level (one request each) and hands what answered to `use`. One object's failure costs that
 * object, not the level: it is left out of this poll, counted and logged (ctx.objects). One gone by now (404, the
 * reference's "Errors") has no series, which is the truth, and is counted as vanished. The collector fails only when
 * objects were listed and none answered.
 */
export async function readEach<T, R>(ctx: PollContext, objects: readonly T[], name: (o: T) => string, read: (o: T) => Promise<R>, use: (o: T, r: R) => void): Promise<void> {
  let answered = 0;
  let firstError: Error | undefined;
  await Promise.all(
    objects.map(async (o) => {
      const object = name(o);
      let result: R;
      try {
        result = await read(o);
      } catch (err) {
        if (err instanceof WowzaHttpError && err.status === 404) {
          ctx.vanished();
          ctx.objects.ok(object);
          return;
        }
        const error = err instanceof Error ? err : new Error(String(err));
        firstError ??= error;
        ctx.objects.failed(object, error);
        return;
      }
      answered++;
      ctx.objects.ok(object);
      use(o, result);
    }),
  );
  ctx.objects.finish(objects.length);
  if (answered === 0 && firstError) throw firstError;
}
