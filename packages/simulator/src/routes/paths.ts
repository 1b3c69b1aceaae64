import { SERVER_NAME } from '../topology.js';
import { wowzaError } from '../reply.js';
import type { RouteHandler } from '../router.js';

/** Route templates, named as the exporter's endpoint label names them. */
export const S = '/v2/servers/{server}';
export const V = `${S}/vhosts/{vhost}`;
export const A = `${V}/applications/{app}`;
export const I = `${A}/instances/{instance}`;

/** The `{server}` segment must name the one simulated server, as on a real one. */
export function forServer(handler: RouteHandler): RouteHandler {
  return (ctx) => (ctx.params.server === SERVER_NAME ? handler(ctx) : wowzaError(404, `Server (${ctx.params.server}) not found.`));
}
