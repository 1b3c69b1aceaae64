import { resource, wowzaError, type Reply } from '../reply.js';
import type { Router, RequestContext } from '../router.js';
import { parseFilter, parseTarget, type ConfigOutcome, type Parsed, type WebhookConfig } from '../webhooks/webhook-config.js';
import { enveloped } from './envelope.js';
import { readJsonBody } from './json-body.js';
import { forServer, S } from './paths.js';
import { deleted } from './saved.js';

const W = `${S}/webhooks`;

/**
 * `{S}/webhooks` (4.9.6+), as the reference lists it (wse-rest-api.md, section 4 "Webhooks (base {S}/webhooks)"):
 *
 * - GET `{S}/webhooks`: the wrapper `webhooks` {`debugLog`, `source`, `filters`, `targets`}, `serverName`,
 *   `version`; PUT takes the wrapper and answers the `webhooks` object.
 * - GET `{S}/webhooks/targets|filters`: `serverName` and the list.
 * - POST one target or filter: the created item (201, the "Created" of section 7); the schema form of the body,
 *   a list wrapper (`targets`/`filters` array), is taken too and answers the list of created items.
 * - GET, PUT one item: the item with `serverName`, `version`; DELETE: `success`, `message`, `data`.
 * - GET, PUT `{S}/webhooks/source`: `source`.
 *
 * Servers before 4.9.6 do not register these and answer 404. `saveFieldList` is optional and left out, as in the
 * simulator's other answers.
 */
export function registerWebhookRoutes(router: Router, config: WebhookConfig): void {
  const failed = (o: ConfigOutcome & { ok: false }) => wowzaError(o.status, o.message);

  router.add('GET', W, forServer(() => resource('WebhooksConfig', enveloped({ webhooks: config.body() }))));
  router.add(
    'PUT',
    W,
    forServer(async (ctx) => {
      const body = await objectBody(ctx);
      if (!body.ok) return body.reply;
      // The wrapper as GET shows it; its inner object alone is taken too (the reference lists the fields
      // `source`, `filters`, `targets` as the body).
      const inner = isObject(body.value.webhooks) ? body.value.webhooks : body.value;
      const targets = parseAll(inner.targets, (t) => parseTarget(t), 'targets');
      if (!targets.ok) return wowzaError(400, targets.message);
      const filters = parseAll(inner.filters, (f) => parseFilter(f), 'filters');
      if (!filters.ok) return wowzaError(400, filters.message);
      if (inner.source !== undefined && inner.source !== null && typeof inner.source !== 'string') return wowzaError(400, 'source must be a string');
      if (inner.debugLog !== undefined && inner.debugLog !== null && typeof inner.debugLog !== 'boolean') return wowzaError(400, 'debugLog must be true or false');
      const outcome = config.replace({
        targets: targets.value,
        filters: filters.value,
        ...(typeof inner.source === 'string' ? { source: inner.source } : {}),
        ...(typeof inner.debugLog === 'boolean' ? { debugLog: inner.debugLog } : {}),
      });
      return outcome.ok ? resource('WebhooksConfig', config.body()) : failed(outcome);
    }),
  );

  router.add('GET', `${W}/source`, forServer(() => resource('WebhooksSource', enveloped({ source: config.source }))));
  router.add(
    'PUT',
    `${W}/source`,
    forServer(async (ctx) => {
      const body = await objectBody(ctx);
      if (!body.ok) return body.reply;
      if (typeof body.value.source !== 'string' || body.value.source === '') return wowzaError(400, 'missing required field: source');
      config.source = body.value.source;
      return resource('WebhooksSource', enveloped({ source: config.source }));
    }),
  );

  // Targets.
  router.add('GET', `${W}/targets`, forServer(() => resource('WebhookTargets', enveloped({ targets: config.targetList() }))));
  router.add(
    'POST',
    `${W}/targets`,
    forServer(async (ctx) => {
      const body = await objectBody(ctx);
      if (!body.ok) return body.reply;
      if (Array.isArray(body.value.targets)) {
        const all = parseAll(body.value.targets, (t) => parseTarget(t), 'targets');
        if (!all.ok) return wowzaError(400, all.message);
        for (const t of all.value) {
          const outcome = config.addTarget(t);
          if (!outcome.ok) return failed(outcome);
        }
        return resource('WebhookTargets', enveloped({ targets: all.value.map((t) => config.target(t.id)!) }), 201);
      }
      const t = parseTarget(body.value);
      if (!t.ok) return wowzaError(400, t.message);
      const outcome = config.addTarget(t.value);
      return outcome.ok ? resource('WebhookTarget', enveloped(config.target(t.value.id)!), 201) : failed(outcome);
    }),
  );
  router.add(
    'GET',
    `${W}/targets/{id}`,
    forServer((ctx) => {
      const t = config.target(ctx.params.id!);
      return t ? resource('WebhookTarget', enveloped(t)) : wowzaError(404, `Target (${ctx.params.id}) not found.`);
    }),
  );
  router.add(
    'PUT',
    `${W}/targets/{id}`,
    forServer(async (ctx) => {
      const id = ctx.params.id!;
      if (!config.target(id)) return wowzaError(404, `Target (${id}) not found.`);
      const body = await objectBody(ctx);
      if (!body.ok) return body.reply;
      const t = parseTarget(body.value, id);
      if (!t.ok) return wowzaError(400, t.message);
      const outcome = config.updateTarget(t.value);
      return outcome.ok ? resource('WebhookTarget', enveloped(config.target(id)!)) : failed(outcome);
    }),
  );
  router.add(
    'DELETE',
    `${W}/targets/{id}`,
    forServer((ctx) => {
      const outcome = config.deleteTarget(ctx.params.id!);
      return outcome.ok ? deleted() : failed(outcome);
    }),
  );

  // Filters.
  router.add('GET', `${W}/filters`, forServer(() => resource('WebhookFilters', enveloped({ filters: config.filterList() }))));
  router.add(
    'POST',
    `${W}/filters`,
    forServer(async (ctx) => {
      const body = await objectBody(ctx);
      if (!body.ok) return body.reply;
      if (Array.isArray(body.value.filters)) {
        const all = parseAll(body.value.filters, (f) => parseFilter(f), 'filters');
        if (!all.ok) return wowzaError(400, all.message);
        for (const f of all.value) {
          const outcome = config.addFilter(f);
          if (!outcome.ok) return failed(outcome);
        }
        return resource('WebhookFilters', enveloped({ filters: all.value.map((f) => config.filter(f.id)!) }), 201);
      }
      const f = parseFilter(body.value);
      if (!f.ok) return wowzaError(400, f.message);
      const outcome = config.addFilter(f.value);
      return outcome.ok ? resource('WebhookFilter', enveloped(config.filter(f.value.id)!), 201) : failed(outcome);
    }),
  );
  router.add(
    'GET',
    `${W}/filters/{id}`,
    forServer((ctx) => {
      const f = config.filter(ctx.params.id!);
      return f ? resource('WebhookFilter', enveloped(f)) : wowzaError(404, `Filter (${ctx.params.id}) not found.`);
    }),
  );
  router.add(
    'PUT',
    `${W}/filters/{id}`,
    forServer(async (ctx) => {
      const id = ctx.params.id!;
      if (!config.filter(id)) return wowzaError(404, `Filter (${id}) not found.`);
      const body = await objectBody(ctx);
      if (!body.ok) return body.reply;
      const f = parseFilter(body.value, id);
      if (!f.ok) return wowzaError(400, f.message);
      const outcome = config.updateFilter(f.value);
      return outcome.ok ? resource('WebhookFilter', enveloped(config.filter(id)!)) : failed(outcome);
    }),
  );
  router.add(
    'DELETE',
    `${W}/filters/{id}`,
    forServer((ctx) => {
      const outcome = config.deleteFilter(ctx.params.id!);
      return outcome.ok ? deleted() : failed(outcome);
    }),
  );
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A JSON body that must be an object (415 when not JSON, 400 when not an object). */
async function objectBody(ctx: RequestContext): Promise<{ ok: true; value: Record<string, unknown> } | { ok: false; reply: Reply }> {
  const body = await readJsonBody(ctx);
  if (!body.ok) return body;
  if (!isObject(body.value)) return { ok: false, reply: wowzaError(400, 'the body must be a JSON object') };
  return { ok: true, value: body.value };
}

/** Every item of a list (absent or null: none), or the first one that is wrong, named by its index. */
function parseAll<T>(list: unknown, parse: (item: unknown) => Parsed<T>, what: string): Parsed<T[]> {
  if (list === undefined || list === null) return { ok: true, value: [] };
  if (!Array.isArray(list)) return { ok: false, message: `${what} must be a list` };
  const out: T[] = [];
  for (const [i, item] of list.entries()) {
    const p = parse(item);
    if (!p.ok) return { ok: false, message: `${what}[${i}]: ${p.message}` };
    out.push(p.value);
  }
  return { ok: true, value: out };
}
