import { resource, wowzaError, type Reply } from '../reply.js';
import type { Router } from '../router.js';
import { SERVER_NAME } from '../topology.js';
import { parseFilter, parseTarget, type ConfigOutcome, type WebhookConfig } from '../webhooks/webhook-config.js';
import { readJsonBody } from './json-body.js';
import { forServer, S } from './paths.js';
import { deleted, saved } from './saved.js';

const W = `${S}/webhooks`;

const answer = (outcome: ConfigOutcome, status: 200 | 201): Reply => (outcome.ok ? saved(status) : wowzaError(outcome.status, outcome.message));

/**
 * `{S}/webhooks` (4.9.6+): the whole config, and targets and filters created by POST, changed by PUT,
 * removed by DELETE. Servers before 4.9.6 do not register these and answer 404.
 */
export function registerWebhookRoutes(router: Router, config: WebhookConfig): void {
  router.add('GET', W, forServer(() => resource('WebhooksConfig', { serverName: SERVER_NAME, ...config.body() })));

  router.add(
    'GET',
    `${W}/targets/{id}`,
    forServer((ctx) => {
      const t = config.target(ctx.params.id!);
      return t ? resource('WebhookTarget', t) : wowzaError(404, `Target (${ctx.params.id}) not found.`);
    }),
  );
  router.add(
    'POST',
    `${W}/targets`,
    forServer(async (ctx) => {
      const body = await readJsonBody(ctx);
      if (!body.ok) return body.reply;
      const t = parseTarget(body.value);
      return t.ok ? answer(config.addTarget(t.value), 201) : wowzaError(400, t.message);
    }),
  );
  router.add(
    'PUT',
    `${W}/targets/{id}`,
    forServer(async (ctx) => {
      const id = ctx.params.id!;
      if (!config.target(id)) return wowzaError(404, `Target (${id}) not found.`);
      const body = await readJsonBody(ctx);
      if (!body.ok) return body.reply;
      const t = parseTarget(body.value, id);
      return t.ok ? answer(config.updateTarget(t.value), 200) : wowzaError(400, t.message);
    }),
  );
  router.add(
    'DELETE',
    `${W}/targets/{id}`,
    forServer((ctx) => {
      const outcome = config.deleteTarget(ctx.params.id!);
      return outcome.ok ? deleted() : wowzaError(outcome.status, outcome.message);
    }),
  );

  router.add(
    'GET',
    `${W}/filters/{id}`,
    forServer((ctx) => {
      const f = config.filter(ctx.params.id!);
      return f ? resource('WebhookFilter', f) : wowzaError(404, `Filter (${ctx.params.id}) not found.`);
    }),
  );
  router.add(
    'POST',
    `${W}/filters`,
    forServer(async (ctx) => {
      const body = await readJsonBody(ctx);
      if (!body.ok) return body.reply;
      const f = parseFilter(body.value);
      return f.ok ? answer(config.addFilter(f.value), 201) : wowzaError(400, f.message);
    }),
  );
  router.add(
    'PUT',
    `${W}/filters/{id}`,
    forServer(async (ctx) => {
      const id = ctx.params.id!;
      if (!config.filter(id)) return wowzaError(404, `Filter (${id}) not found.`);
      const body = await readJsonBody(ctx);
      if (!body.ok) return body.reply;
      const f = parseFilter(body.value, id);
      return f.ok ? answer(config.updateFilter(f.value), 200) : wowzaError(400, f.message);
    }),
  );
  router.add(
    'DELETE',
    `${W}/filters/{id}`,
    forServer((ctx) => {
      const outcome = config.deleteFilter(ctx.params.id!);
      return outcome.ok ? deleted() : wowzaError(outcome.status, outcome.message);
    }),
  );
}
