import type { WowzaClient } from '../wowza/client.js';
import { WowzaHttpError } from '../wowza/errors.js';
import {
  LISTENER_CLASS,
  SaveResult,
  ServerConfigBody,
  WEBHOOK_EP,
  WebhookConfig,
  type WebhookFilter,
  type WebhookTarget,
} from './config-api.js';

export interface SetupOptions {
  targetUrl: string;
  criteria: string;
  secret: string;
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
      return new WebhookSetupError(`${step}: the server rejected the request (400)${msg}; check the criteria syntax (vHost.<v>.app.<a>.appInstance.<i>.stream.<s>.state.<state>, * for one token, > for the rest) and the target URL`);
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

/**
 * Makes the server's webhook config match: a target with JWT auth, a filter with the criteria pointing at
 * it, and the WebhookListener server listener. Only what differs is written, so a second run writes nothing.
 */
export async function setupWebhooks(client: WowzaClient, o: SetupOptions): Promise<Change[]> {
  const id = o.id ?? 'wowza-exporter';
  let current;
  try {
    current = await client.get(WEBHOOK_EP.config, {}, WebhookConfig);
  } catch (err) {
    throw explain(err, 'read');
  }
  const changes: Change[] = [];

  const wantTarget: WebhookTarget = { id, url: o.targetUrl, headers: null, auth: { type: 'jwt', secret: o.secret } };
  const haveTarget = current.targets.find((t) => t.id === id);
  const targetDiff = haveTarget
    ? [
        field('url', haveTarget.url, wantTarget.url),
        field('auth.type', haveTarget.auth?.type, 'jwt'),
        // Servers that do not echo the secret cannot be compared; a server that does and differs gets the new one.
        haveTarget.auth?.secret != null && haveTarget.auth.secret !== o.secret ? '  auth.secret: *** -> ***' : undefined,
      ].filter((l): l is string => l !== undefined)
    : [`  url: ${JSON.stringify(o.targetUrl)}`, '  auth: {"type":"jwt","secret":"***"}'];
  if (!haveTarget) changes.push({ kind: 'create', what: `target ${id}`, diff: targetDiff });
  else changes.push({ kind: targetDiff.length ? 'update' : 'unchanged', what: `target ${id}`, diff: targetDiff });

  const wantFilter: WebhookFilter = {
    id,
    enabled: true,
    criteria: o.criteria,
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

  // The target first: a filter naming a missing target is a 400.
  const [t, f, l] = changes as [Change, Change, Change];
  try {
    if (t.kind === 'create') await client.call('POST', WEBHOOK_EP.targets, {}, SaveResult, { body: wantTarget });
    if (t.kind === 'update') await client.call('PUT', WEBHOOK_EP.target, { id }, SaveResult, { body: wantTarget });
  } catch (err) {
    throw explain(err, `write target ${id}`);
  }
  try {
    if (f.kind === 'create') await client.call('POST', WEBHOOK_EP.filters, {}, SaveResult, { body: wantFilter });
    if (f.kind === 'update') await client.call('PUT', WEBHOOK_EP.filter, { id }, SaveResult, { body: wantFilter });
  } catch (err) {
    throw explain(err, `write filter ${id}`);
  }
  if (l.kind === 'create') {
    const order = listeners.reduce((m, x) => Math.max(m, x.order ?? 0), -1) + 1;
    const body = { ...serverConfig, serverListeners: { ...(serverConfig.serverListeners ?? {}), serverListeners: [...listeners, { baseClass: LISTENER_CLASS, order }] } };
    try {
      await client.call('PUT', WEBHOOK_EP.server, {}, SaveResult, { body });
    } catch (err) {
      throw explain(err, 'add the WebhookListener server listener');
    }
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
    config = await client.get(WEBHOOK_EP.config, {}, WebhookConfig);
  } catch (err) {
    throw explain(err, 'read');
  }
  const server = await client.get(WEBHOOK_EP.server, {}, ServerConfigBody);
  return {
    targets: config.targets.map((t) => ({ ...t, auth: t.auth ? { ...t.auth, secret: t.auth.secret ? '***' : t.auth.secret } : t.auth })),
    filters: config.filters,
    listener: (server.serverListeners?.serverListeners ?? []).some((x) => x.baseClass === LISTENER_CLASS),
  };
}
