import type { WowzaClient } from '../wowza/client.js';
import { WowzaHttpError } from '../wowza/errors.js';
import {
  LISTENER_CLASS,
  ServerConfigBody,
  WEBHOOK_EP,
  WebhookFilter,
  WebhookTarget,
  WebhooksWrapper,
  WriteAnswer,
} from './config-api.js';

/**
 * Every event of every vhost, application, instance and stream. The reference's criteria are dot-separated
 * tokens where `*` is one token and `>` the rest (wse-rest-api.md, "Webhooks", Filter): a stream name with a
 * dot (`cam1.sdp`) is two tokens, and an application event has no `stream` part, so a pattern that spells every
 * level with `*` misses both.
 */
export const DEFAULT_CRITERIA = 'vHost.>';

/**
 * How deliveries prove they come from the server. `jwt`: the target's `auth` ({type: "jwt", secret}); how the
 * server applies it is not in the reference (section 6, item 7); public reports show an HS256 Bearer token.
 * `header`: the secret as a static `Authorization: Bearer` header in the target's documented `headers`, for
 * servers whose JWT the receiver cannot verify.
 */
export type DeliveryAuth = 'jwt' | 'header';

export interface SetupOptions {
  targetUrl: string;
  criteria?: string;
  secret: string;
  auth?: DeliveryAuth;
  /** Ids of the target and filter this tool owns. */
  id?: string;
  maxRetryAttempts?: number;
  retryDelayMs?: number;
  dryRun?: boolean;
}

export interface Change {
  kind: 'create' | 'update' | 'unchanged';
  what: string;
  /** Human-readable diff lines (secrets shown as `***`). */
  diff: string[];
}

export class WebhookSetupError extends Error {}

/** Turns API failures into what to do about them. */
export function explain(err: unknown, step: string): Error {
  if (!(err instanceof WowzaHttpError)) return err as Error;
  const msg = err.wowzaMessage ? `: ${err.wowzaMessage}` : '';
  switch (err.status) {
    case 404:
      if (step === 'read') return new WebhookSetupError(`the server has no webhook API (404 on {S}/webhooks): webhooks need Wowza Streaming Engine 4.9.6+`);
      return new WebhookSetupError(`${step}: not found (404)${msg}`);
    case 400:
      return new WebhookSetupError(`${step}: the server rejected the request (400)${msg}; check the criteria syntax (dot-separated, e.g. vHost.<v>.app.<a>.appInstance.<i>.stream.<s>.state.<state>; * for one token, > for the rest) and the target URL`);
    case 409:
      return new WebhookSetupError(`${step}: the id already exists (409)${msg}; someone changed the config at the same time, run again`);
    case 415:
      return new WebhookSetupError(`${step}: the server refused the content type (415)${msg}`);
    default:
      return new WebhookSetupError(`${step}: HTTP ${err.status}${msg}`);
  }
}

function field(name: string, from: unknown, to: unknown): string | undefined {
  const a = JSON.stringify(from ?? null);
  const b = JSON.stringify(to ?? null);
  return a === b ? undefined : `  ${name}: ${a} -> ${b}`;
}

const AUTHORIZATION = 'authorization';

/** The target as it should be: JWT auth, or the secret as a static Authorization header (other headers kept). */
function wantedTarget(o: SetupOptions, id: string, have: WebhookTarget | undefined): WebhookTarget {
  const others = (have?.headers ?? []).filter((h) => h.name.toLowerCase() !== AUTHORIZATION);
  if (o.auth === 'header') return { id, url: o.targetUrl, headers: [...others, { name: 'Authorization', value: `Bearer ${o.secret}` }], auth: null };
  return { id, url: o.targetUrl, headers: others.length ? others : null, auth: { type: 'jwt', secret: o.secret } };
}

/** What differs between the target on the server and the wanted one; secrets are compared, never shown. */
function targetDiff(have: WebhookTarget, want: WebhookTarget): string[] {
  const out: Array<string | undefined> = [field('url', have.url, want.url), field('auth.type', have.auth?.type ?? null, want.auth?.type ?? null)];
  // Servers that do not echo the secret cannot be compared; a server that does and differs gets the new one.
  if (want.auth && have.auth?.secret != null && have.auth.secret !== want.auth.secret) out.push('  auth.secret: *** -> ***');
  const haveHeader = have.headers?.find((h) => h.name.toLowerCase() === AUTHORIZATION);
  const wantHeader = want.headers?.find((h) => h.name.toLowerCase() === AUTHORIZATION);
  if (!haveHeader && wantHeader) out.push('  headers.Authorization: (none) -> Bearer ***');
  else if (haveHeader && !wantHeader) out.push('  headers.Authorization: *** -> (none)');
  else if (haveHeader && wantHeader && haveHeader.value !== wantHeader.value) out.push('  headers.Authorization: *** -> ***');
  return out.filter((l): l is string => l !== undefined);
}

/**
 * Writes one item and checks the answer: a 2xx whose body says `success: false` did not save. The answer's body
 * is the created or updated item (reference), a save result on older builds, or nothing at all (`PUT {S}` answers
 * `void` in the server's own model): all of them are fine.
 */
async function write(client: WowzaClient, method: 'POST' | 'PUT', endpoint: string, values: Record<string, string>, body: unknown, step: string): Promise<void> {
  let answer;
  try {
    answer = await client.write(method, endpoint, values, WriteAnswer, { body });
  } catch (err) {
    throw explain(err, step);
  }
  if (answer?.success === false) throw new WebhookSetupError(`${step}: the server answered without saving${answer.message ? `: ${answer.message}` : ''}`);
}

/**
 * Makes the server's webhook config match: a target (JWT auth or a static header), a filter with the criteria
 * pointing at it, and the WebhookListener server listener. Only what differs is written, so a second run only
 * reads (two GETs) and writes nothing.
 */
export async function setupWebhooks(client: WowzaClient, o: SetupOptions): Promise<Change[]> {
  const id = o.id ?? 'wowza-exporter';
  const serverName = client.target.serverName;
  let current;
  try {
    current = (await client.get(WEBHOOK_EP.config, {}, WebhooksWrapper)).webhooks;
  } catch (err) {
    throw explain(err, 'read');
  }
  const changes: Change[] = [];

  const haveTarget = current.targets.find((t) => t.id === id);
  const wantTarget = wantedTarget(o, id, haveTarget);
  const tDiff = haveTarget
    ? targetDiff(haveTarget, wantTarget)
    : [`  url: ${JSON.stringify(o.targetUrl)}`, o.auth === 'header' ? '  headers: [{"name":"Authorization","value":"Bearer ***"}]' : '  auth: {"type":"jwt","secret":"***"}'];
  changes.push({ kind: !haveTarget ? 'create' : tDiff.length ? 'update' : 'unchanged', what: `target ${id}`, diff: tDiff });

  const wantFilter: WebhookFilter = {
    id,
    enabled: true,
    criteria: o.criteria ?? DEFAULT_CRITERIA,
    targetRef: id,
    maxRetryAttempts: o.maxRetryAttempts ?? 3,
    retryDelay: o.retryDelayMs ?? 1000,
    retryDelayUnit: 'ms',
  };
  const haveFilter = current.filters.find((f) => f.id === id);
  const filterKeys = ['enabled', 'criteria', 'targetRef', 'maxRetryAttempts', 'retryDelay', 'retryDelayUnit'] as const;
  const filterDiff = haveFilter
    ? filterKeys.map((k) => field(k, haveFilter[k], wantFilter[k])).filter((l): l is string => l !== undefined)
    : filterKeys.map((k) => `  ${k}: ${JSON.stringify(wantFilter[k])}`);
  changes.push({ kind: !haveFilter ? 'create' : filterDiff.length ? 'update' : 'unchanged', what: `filter ${id}`, diff: filterDiff });

  let serverConfig;
  try {
    serverConfig = await client.get(WEBHOOK_EP.server, {}, ServerConfigBody);
  } catch (err) {
    throw explain(err, 'read server listeners');
  }
  const listeners = serverConfig.serverListeners?.serverListeners ?? [];
  const hasListener = listeners.some((l) => l.baseClass === LISTENER_CLASS);
  changes.push({ kind: hasListener ? 'unchanged' : 'create', what: 'server listener WebhookListener', diff: hasListener ? [] : [`  baseClass: ${LISTENER_CLASS}`] });

  if (o.dryRun) return changes;

  // The target first: a filter naming a missing target is a 400. POST bodies carry serverName, as the
  // reference's samples do; PUT cannot change an id.
  const [t, f, l] = changes as [Change, Change, Change];
  if (t.kind === 'create') await write(client, 'POST', WEBHOOK_EP.targets, {}, { serverName, ...wantTarget }, `write target ${id}`);
  if (t.kind === 'update') await write(client, 'PUT', WEBHOOK_EP.target, { id }, { serverName, ...wantTarget }, `write target ${id}`);
  if (f.kind === 'create') await write(client, 'POST', WEBHOOK_EP.filters, {}, { serverName, ...wantFilter }, `write filter ${id}`);
  if (f.kind === 'update') await write(client, 'PUT', WEBHOOK_EP.filter, { id }, { serverName, ...wantFilter }, `write filter ${id}`);
  if (l.kind === 'create') {
    const order = listeners.reduce((m, x) => Math.max(m, x.order ?? 0), -1) + 1;
    const body = { ...serverConfig, serverListeners: { ...(serverConfig.serverListeners ?? {}), serverListeners: [...listeners, { baseClass: LISTENER_CLASS, order }] } };
    await write(client, 'PUT', WEBHOOK_EP.server, {}, body, 'add the WebhookListener server listener');
  }
  return changes;
}

export interface WebhookStatus {
  targets: WebhookTarget[];
  filters: WebhookFilter[];
  listener: boolean;
}

export async function webhookStatus(client: WowzaClient): Promise<WebhookStatus> {
  let config;
  try {
    config = (await client.get(WEBHOOK_EP.config, {}, WebhooksWrapper)).webhooks;
  } catch (err) {
    throw explain(err, 'read');
  }
  const server = await client.get(WEBHOOK_EP.server, {}, ServerConfigBody);
  return {
    targets: config.targets.map((t) => ({
      ...t,
      headers: t.headers?.map((h) => (h.name.toLowerCase() === AUTHORIZATION ? { ...h, value: '***' } : h)) ?? t.headers,
      auth: t.auth ? { ...t.auth, secret: t.auth.secret ? '***' : t.auth.secret } : t.auth,
    })),
    filters: config.filters,
    listener: (server.serverListeners?.serverListeners ?? []).some((x) => x.baseClass === LISTENER_CLASS),
  };
}
