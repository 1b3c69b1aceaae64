import { resource, wowzaError } from '../reply.js';
import type { Router } from '../router.js';
import type { ServerConfig } from '../server-config.js';
import { readJsonBody } from './json-body.js';
import { forServer, S } from './paths.js';
import { saved } from './saved.js';

/** `GET {S}` and `PUT {S}`: the server config, whose listener list turns webhook delivery on. */
export function registerServerConfigRoutes(router: Router, config: ServerConfig): void {
  router.add('GET', S, forServer(() => resource('ServerConfig', config.body())));
  router.add(
    'PUT',
    S,
    forServer(async (ctx) => {
      const body = await readJsonBody(ctx);
      if (!body.ok) return body.reply;
      const result = config.update(body.value);
      return result.ok ? saved(200) : wowzaError(400, result.message);
    }),
  );
}
