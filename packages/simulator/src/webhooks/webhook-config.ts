import { criteriaMatch, parseCriteria, type Criteria, type EventSubject } from './criteria.js';

/**
 * The server's webhook configuration (`conf/Webhooks.json` on a real server) with the REST API's rules:
 * a filter's target must exist (400), ids are unique (409), a target a filter points at cannot go (409).
 */

export interface WebhookHeader {
  name: string;
  value: string;
}

export interface WebhookTarget {
  id: string;
  url: string;
  headers: WebhookHeader[] | null;
  auth: { type: 'jwt'; secret: string } | null;
}

export type RetryDelayUnit = 'ms' | 'm';

export interface WebhookFilter {
  id: string;
  enabled: boolean;
  criteria: string;
  targetRef: string;
  /** Retries after the first attempt (null: none). */
  maxRetryAttempts: number | null;
  retryDelay: number | null;
  /** `ms` or `m` (minutes); null means ms. */
  retryDelayUnit: RetryDelayUnit | null;
}

/** What a change did, in the API's terms. */
export type ConfigOutcome = { ok: true } | { ok: false; status: 400 | 404 | 409; message: string };

/** A body read into a target or filter, or what is wrong with it. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// eslint-disable-next-line no-control-regex -- control characters are what a header value must not hold
const BAD_HEADER_VALUE = /[\u0000-\u0008\u000a-\u001f\u007f]/;

type Body = Record<string, unknown>;

function isObject(v: unknown): v is Body {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** `missing required fields: id, url`, or undefined. Null counts as missing. */
function missing(body: Body, fields: string[]): string | undefined {
  const absent = fields.filter((f) => body[f] === undefined || body[f] === null || body[f] === '');
  return absent.length ? `missing required field${absent.length > 1 ? 's' : ''}: ${absent.join(', ')}` : undefined;
}

/** Fills `id` from the path (PUT) and checks a body id agrees with it. */
function withPathId(body: unknown, pathId: string | undefined, kind: string): Parsed<Body> {
  if (!isObject(body)) return { ok: false, message: `the ${kind} must be a JSON object` };
  if (pathId === undefined) return { ok: true, value: body };
  if (body.id !== undefined && body.id !== null && body.id !== pathId) {
    return { ok: false, message: `id ${JSON.stringify(body.id)} in the body does not match the ${kind} id "${pathId}" in the path` };
  }
  return { ok: true, value: { ...body, id: pathId } };
}

/** A target from a request body; `pathId` for updates. */
export function parseTarget(input: unknown, pathId?: string): Parsed<WebhookTarget> {
  const b = withPathId(input, pathId, 'target');
  if (!b.ok) return b;
  const body = b.value;
  const absent = missing(body, ['id', 'url']);
  if (absent) return { ok: false, message: absent };
  if (typeof body.id !== 'string') return { ok: false, message: 'id must be a string' };
  if (typeof body.url !== 'string') return { ok: false, message: 'url must be a string' };
  let url: URL;
  try {
    url = new URL(body.url);
  } catch {
    return { ok: false, message: `url "${body.url}" is not a URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, message: `url must be http or https, got ${url.protocol}` };

  let headers: WebhookHeader[] | null = null;
  if (body.headers !== undefined && body.headers !== null) {
    if (!Array.isArray(body.headers)) return { ok: false, message: 'headers must be a list of {name, value}' };
    headers = [];
    for (const [i, h] of body.headers.entries()) {
      if (!isObject(h) || typeof h.name !== 'string' || typeof h.value !== 'string') return { ok: false, message: `headers[${i}] must be {name, value} with string values` };
      if (!HEADER_NAME.test(h.name)) return { ok: false, message: `headers[${i}].name "${h.name}" is not a valid header name` };
      if (BAD_HEADER_VALUE.test(h.value)) return { ok: false, message: `headers[${i}].value holds control characters` };
      headers.push({ name: h.name, value: h.value });
    }
  }

  let auth: WebhookTarget['auth'] = null;
  if (body.auth !== undefined && body.auth !== null) {
    if (!isObject(body.auth)) return { ok: false, message: 'auth must be {type, secret} or null' };
    if (body.auth.type !== 'jwt') return { ok: false, message: `auth.type must be "jwt", got ${JSON.stringify(body.auth.type)}` };
    if (typeof body.auth.secret !== 'string' || body.auth.secret === '') return { ok: false, message: 'missing required field: auth.secret' };
    auth = { type: 'jwt', secret: body.auth.secret };
  }
  return { ok: true, value: { id: body.id, url: body.url, headers, auth } };
}

function optionalCount(body: Body, field: string): Parsed<number | null> {
  const v = body[field];
  if (v === undefined || v === null) return { ok: true, value: null };
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return { ok: false, message: `${field} must be a whole number >= 0, got ${JSON.stringify(v)}` };
  return { ok: true, value: v };
}

/** A filter from a request body (criteria checked); `pathId` for updates. */
export function parseFilter(input: unknown, pathId?: string): Parsed<WebhookFilter & { compiled: Criteria }> {
  const b = withPathId(input, pathId, 'filter');
  if (!b.ok) return b;
  const body = b.value;
  const absent = missing(body, ['id', 'enabled', 'criteria', 'targetRef']);
  if (absent) return { ok: false, message: absent };
  for (const f of ['id', 'criteria', 'targetRef']) if (typeof body[f] !== 'string') return { ok: false, message: `${f} must be a string` };
  if (typeof body.enabled !== 'boolean') return { ok: false, message: `enabled must be true or false, got ${JSON.stringify(body.enabled)}` };
  const criteria = parseCriteria(body.criteria as string);
  if (!criteria.ok) return criteria;
  const retries = optionalCount(body, 'maxRetryAttempts');
  if (!retries.ok) return retries;
  const delay = optionalCount(body, 'retryDelay');
  if (!delay.ok) return delay;
  const unit = body.retryDelayUnit ?? null;
  if (unit !== null && unit !== 'ms' && unit !== 'm') return { ok: false, message: `retryDelayUnit must be "ms", "m" or null, got ${JSON.stringify(unit)}` };
  return {
    ok: true,
    value: {
      id: body.id as string,
      enabled: body.enabled,
      criteria: body.criteria as string,
      targetRef: body.targetRef as string,
      maxRetryAttempts: retries.value,
      retryDelay: delay.value,
      retryDelayUnit: unit,
      compiled: criteria.criteria,
    },
  };
}

/** A filter's pause between attempts, in ms (1 s when unset). */
export function retryDelayMs(f: WebhookFilter): number {
  const delay = f.retryDelay ?? 1000;
  return f.retryDelayUnit === 'm' ? delay * 60_000 : delay;
}

export class WebhookConfig {
  private readonly targets = new Map<string, WebhookTarget>();
  private readonly filters = new Map<string, WebhookFilter & { compiled: Criteria }>();

  debugLog = false;

  /** `source`: the origin events carry (a real server falls back to its GUID). */
  constructor(public source: string) {}

  /** The `webhooks` object of `{S}/webhooks`: `debugLog`, `source`, `filters`, `targets`. */
  body(): { debugLog: boolean; source: string; filters: WebhookFilter[]; targets: WebhookTarget[] } {
    return { debugLog: this.debugLog, source: this.source, filters: this.filterList(), targets: this.targetList() };
  }

  targetList(): WebhookTarget[] {
    return [...this.targets.values()].map(copyTarget);
  }

  filterList(): WebhookFilter[] {
    return [...this.filters.values()].map((f) => this.publicFilter(f));
  }

  /**
   * `PUT {S}/webhooks`: the whole configuration at once. Checked as a whole first (ids unique, every filter's
   * target among the new targets), so a refused body changes nothing.
   */
  replace(next: { debugLog?: boolean; source?: string; targets: WebhookTarget[]; filters: Array<WebhookFilter & { compiled: Criteria }> }): ConfigOutcome {
    const targetIds = new Set<string>();
    for (const t of next.targets) {
      if (targetIds.has(t.id)) return { ok: false, status: 409, message: `Target (${t.id}) appears twice.` };
      targetIds.add(t.id);
    }
    const filterIds = new Set<string>();
    for (const f of next.filters) {
      if (filterIds.has(f.id)) return { ok: false, status: 409, message: `Filter (${f.id}) appears twice.` };
      filterIds.add(f.id);
      if (!targetIds.has(f.targetRef)) return { ok: false, status: 400, message: `targetRef: Target (${f.targetRef}) not found; create the target first.` };
    }
    this.targets.clear();
    this.filters.clear();
    for (const t of next.targets) this.targets.set(t.id, copyTarget(t));
    for (const f of next.filters) this.filters.set(f.id, { ...f });
    if (next.debugLog !== undefined) this.debugLog = next.debugLog;
    if (next.source !== undefined) this.source = next.source;
    return { ok: true };
  }

  target(id: string): WebhookTarget | undefined {
    const t = this.targets.get(id);
    return t && copyTarget(t);
  }

  filter(id: string): WebhookFilter | undefined {
    const f = this.filters.get(id);
    return f && this.publicFilter(f);
  }

  addTarget(t: WebhookTarget): ConfigOutcome {
    if (this.targets.has(t.id)) return { ok: false, status: 409, message: `Target (${t.id}) already exists.` };
    this.targets.set(t.id, copyTarget(t));
    return { ok: true };
  }

  updateTarget(t: WebhookTarget): ConfigOutcome {
    if (!this.targets.has(t.id)) return { ok: false, status: 404, message: `Target (${t.id}) not found.` };
    this.targets.set(t.id, copyTarget(t));
    return { ok: true };
  }

  deleteTarget(id: string): ConfigOutcome {
    if (!this.targets.has(id)) return { ok: false, status: 404, message: `Target (${id}) not found.` };
    const users = [...this.filters.values()].filter((f) => f.targetRef === id).map((f) => f.id);
    if (users.length) return { ok: false, status: 409, message: `Target (${id}) is used by filter${users.length > 1 ? 's' : ''} ${users.join(', ')}: delete or change them first.` };
    this.targets.delete(id);
    return { ok: true };
  }

  addFilter(f: WebhookFilter & { compiled: Criteria }): ConfigOutcome {
    if (this.filters.has(f.id)) return { ok: false, status: 409, message: `Filter (${f.id}) already exists.` };
    if (!this.targets.has(f.targetRef)) return { ok: false, status: 400, message: `targetRef: Target (${f.targetRef}) not found; create the target first.` };
    this.filters.set(f.id, { ...f });
    return { ok: true };
  }

  updateFilter(f: WebhookFilter & { compiled: Criteria }): ConfigOutcome {
    if (!this.filters.has(f.id)) return { ok: false, status: 404, message: `Filter (${f.id}) not found.` };
    if (!this.targets.has(f.targetRef)) return { ok: false, status: 400, message: `targetRef: Target (${f.targetRef}) not found; create the target first.` };
    this.filters.set(f.id, { ...f });
    return { ok: true };
  }

  deleteFilter(id: string): ConfigOutcome {
    if (!this.filters.delete(id)) return { ok: false, status: 404, message: `Filter (${id}) not found.` };
    return { ok: true };
  }

  /** Enabled filters whose criteria match, each with its target. */
  matching(subject: EventSubject): Array<{ filter: WebhookFilter; target: WebhookTarget }> {
    const out: Array<{ filter: WebhookFilter; target: WebhookTarget }> = [];
    for (const f of this.filters.values()) {
      const target = this.targets.get(f.targetRef);
      if (f.enabled && target && criteriaMatch(f.compiled, subject)) out.push({ filter: this.publicFilter(f), target: copyTarget(target) });
    }
    return out;
  }

  private publicFilter(f: WebhookFilter & { compiled: Criteria }): WebhookFilter {
    const { compiled: _compiled, ...rest } = f;
    return rest;
  }
}

function copyTarget(t: WebhookTarget): WebhookTarget {
  return { ...t, headers: t.headers && t.headers.map((h) => ({ ...h })), auth: t.auth && { ...t.auth } };
}
