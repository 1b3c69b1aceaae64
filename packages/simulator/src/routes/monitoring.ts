import { resource, wowzaError, type Reply } from '../reply.js';
import type { RequestContext, Router } from '../router.js';
import type { ValueModel } from '../values.js';
import { mapEntries } from '../push-publish.js';
import { SERVER_NAME, type Topology } from '../topology.js';
import { enveloped } from './envelope.js';
import { A, forServer, I, S, V } from './paths.js';

export interface MonitoringRouteSettings {
  values: ValueModel;
  topology: Topology;
  /** Send numbers as JSON strings (`"bytesIn":"123"`), as some servers and proxies do. */
  numbersAsStrings: boolean;
}

/** Deep copy with every number turned into its decimal string. */
export function stringifyNumbers<T>(value: T): T {
  if (typeof value === 'number') return String(value) as T;
  if (Array.isArray(value)) return value.map(stringifyNumbers) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stringifyNumbers(v)])) as T;
  }
  return value;
}

/**
 * The monitoring resources of the reference's section 4 (shapes: its section 2, and wowza-api.md where it shows no
 * fields), with the real server's 404s and 200-with-zeros.
 */
export function registerMonitoringRoutes(router: Router, s: MonitoringRouteSettings): void {
  const { values, topology } = s;
  const out = (root: string, body: object): Reply => resource(root, enveloped(s.numbersAsStrings ? stringifyNumbers(body) : body));
  const missing = (ctx: RequestContext): Reply => {
    const { vhost, app } = ctx.params;
    if (!topology.vhost(vhost!)) return wowzaError(404, `VHost (${vhost}) not found.`);
    return wowzaError(404, `Application (${app}) not found.`);
  };
  const or404 = (ctx: RequestContext, root: string, body: object | undefined): Reply => (body ? out(root, body) : missing(ctx));

  router.add('GET', '/v2/machine/monitoring/current', () => out('CurrentMachineStatistics', values.machine()));
  router.add('GET', '/v2/machine/monitoring/historic', () => out('HistoricMachineStatistics', values.history(() => values.machine())!));
  router.add('GET', `${S}/status`, forServer(() => out('ServerStatus', values.status())));
  router.add('GET', `${S}/monitoring/historic`, forServer(() => out('HistoricServerStatistics', values.history(() => values.status())!)));
  router.add('GET', `${S}/vhosts`, forServer(() => resource('VHosts', enveloped(values.vhostList()))));
  router.add('GET', `${V}/monitoring/current`, forServer((ctx) => or404(ctx, 'CurrentVHostStatistics', values.vhost(ctx.params.vhost!))));
  router.add(
    'GET',
    `${V}/monitoring/historic`,
    forServer((ctx) => or404(ctx, 'HistoricVHostStatistics', values.history(() => values.vhost(ctx.params.vhost!)))),
  );
  router.add('GET', `${V}/applications`, forServer((ctx) => or404(ctx, 'Applications', values.applicationList(ctx.params.vhost!))));
  router.add(
    'GET',
    `${A}/monitoring/current`,
    forServer((ctx) => or404(ctx, 'CurrentApplicationStatistics', values.application(ctx.params.vhost!, ctx.params.app!))),
  );
  router.add(
    'GET',
    `${A}/monitoring/historic`,
    forServer((ctx) => or404(ctx, 'HistoricApplicationStatistics', values.history(() => values.application(ctx.params.vhost!, ctx.params.app!)))),
  );
  router.add('GET', `${A}/instances`, forServer((ctx) => or404(ctx, 'Instances', values.instances(ctx.params.vhost!, ctx.params.app!))));
  router.add(
    'GET',
    I,
    forServer((ctx) => or404(ctx, 'ApplicationInstance', values.instance(ctx.params.vhost!, ctx.params.app!, ctx.params.instance!))),
  );
  router.add(
    'GET',
    `${I}/incomingstreams/{stream}/monitoring/current`,
    forServer((ctx) => {
      const p = ctx.params;
      return or404(ctx, 'CurrentIncomingStreamStatistics', values.stream(p.vhost!, p.app!, p.instance!, p.stream!));
    }),
  );
  // The recorders and stream targets of the server's own models (MODELS.md), read by the recorder and
  // stream_target collectors.
  router.add(
    'GET',
    `${I}/streamrecorders`,
    forServer((ctx) => or404(ctx, 'StreamRecorders', values.streamRecorders(ctx.params.vhost!, ctx.params.app!, ctx.params.instance!))),
  );
  router.add(
    'GET',
    `${A}/pushpublish/mapentries`,
    forServer((ctx) => {
      const a = topology.app(ctx.params.vhost!, ctx.params.app!);
      return or404(ctx, 'PushPublishStreams', a && { serverName: SERVER_NAME, mapEntries: mapEntries(a) });
    }),
  );
  // Not a row of the reference's tables; wowza-api.md's generic `.../monitoring/historic` row (undocumented entries).
  router.add(
    'GET',
    `${I}/incomingstreams/{stream}/monitoring/historic`,
    forServer((ctx) => {
      const p = ctx.params;
      return or404(ctx, 'HistoricIncomingStreamStatistics', values.history(() => values.stream(p.vhost!, p.app!, p.instance!, p.stream!)));
    }),
  );
}
