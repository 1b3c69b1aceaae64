import { sleep } from '../sleep.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import { signHs256 } from './jwt.js';
import type { EventSubject } from './criteria.js';
import { retryDelayMs, type WebhookConfig, type WebhookFilter, type WebhookTarget } from './webhook-config.js';

/**
 * Sends webhook events the way a 4.9.6+ server does: only with the WebhookListener server listener
 * installed, to the target of every enabled filter whose criteria match, signed with the target's JWT
 * secret, retried per the filter. Delivery runs in the background and never throws at whoever fired.
 */

export interface WebhookEventContext {
  vhost?: string;
  app?: string;
  appInstance?: string;
  stream?: string;
  /** Default: the last part of the event name (`stream.stopped` -> `stopped`). */
  state?: string;
}

export interface WebhookEventInput {
  /** `stream.started`, `stream.stopped`, `app.started`, `app.shutdown`, `recording.*`, `connection.*`... */
  name: string;
  context?: WebhookEventContext;
  data?: Record<string, unknown>;
  /** Epoch ms; default now. */
  timestamp?: number;
}

/** The JSON body a target receives. */
export interface WebhookPayload {
  id: string;
  timestamp: number;
  name: string;
  source: string;
  version: '1.0';
  context: WebhookEventContext;
  data: Record<string, unknown>;
}

/** One HTTP attempt, as tests see it. */
export interface WebhookDeliveryAttempt {
  eventId: string;
  event: string;
  filter: string;
  target: string;
  url: string;
  /** 1 for the first try. */
  attempt: number;
  /** The answer's status; absent when there was none (network error, timeout). */
  status?: number;
  /** Why there was no answer. */
  error?: string;
  /** A 2xx answer. */
  ok: boolean;
  /** Epoch ms the attempt started. */
  at: number;
}

/** How one event fared at one filter's target, once retries are over. */
export interface WebhookOutcome {
  eventId: string;
  filter: string;
  target: string;
  delivered: boolean;
  attempts: number;
}

export class WebhookEventError extends Error {}

export interface DispatcherSettings {
  config: WebhookConfig;
  /** False below 4.9.6: the server has no webhooks. */
  supported: boolean;
  /** Whether the WebhookListener server listener is installed right now. */
  listenerInstalled: () => boolean;
  /** Deadline of one delivery request. */
  timeoutMs: number;
  logger: Logger;
  /** `WowzaStreamingEngine/4.9.6`. */
  userAgent: string;
}

/** Attempts kept for tests; older ones are dropped so a long run cannot grow without bound. */
const MAX_RECORDED = 10_000;
const EVENT_NAME = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;
/** Seconds a delivery token stays valid. */
const TOKEN_LIFETIME_S = 60;

/** Resolves true after `ms`, false as soon as `signal` aborts; the timer does not keep the process up. */
async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  await sleep(ms, signal, { unref: true });
  return !signal.aborted;
}

/** The URL without credentials, for logs. */
function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return '(invalid url)';
  }
}

function checkEvent(e: WebhookEventInput): void {
  if (e === null || typeof e !== 'object') throw new WebhookEventError('a webhook event must be an object with a name');
  if (typeof e.name !== 'string' || !EVENT_NAME.test(e.name)) throw new WebhookEventError(`webhook event name must be dotted words like stream.stopped, got ${JSON.stringify(e.name)}`);
  for (const [k, v] of Object.entries(e.context ?? {})) {
    if (v !== undefined && typeof v !== 'string') throw new WebhookEventError(`webhook event context.${k} must be a string, got ${JSON.stringify(v)}`);
  }
  if (e.timestamp !== undefined && !Number.isFinite(e.timestamp)) throw new WebhookEventError(`webhook event timestamp must be epoch ms, got ${JSON.stringify(e.timestamp)}`);
}

export class WebhookDispatcher {
  private readonly attempts: WebhookDeliveryAttempt[] = [];
  private readonly pending = new Set<Promise<unknown>>();
  private readonly closing = new AbortController();
  private readonly log: Logger;

  constructor(private readonly s: DispatcherSettings) {
    this.log = s.logger.child({ component: 'webhooks' });
  }

  get supported(): boolean {
    return this.s.supported;
  }

  /** The `source` events carry. */
  get source(): string {
    return this.s.config.source;
  }

  /** Every attempt so far (the last 10,000), oldest first. */
  get deliveries(): readonly WebhookDeliveryAttempt[] {
    return this.attempts;
  }

  /**
   * Sends `event` to the target of every matching filter. Resolves, after retries, with one outcome per
   * filter that matched (none when the server lacks webhooks or the listener). Never rejects; throws
   * WebhookEventError at once for an event that is not well formed.
   */
  fire(event: WebhookEventInput): Promise<WebhookOutcome[]> {
    checkEvent(event);
    if (!this.s.supported || this.closing.signal.aborted || !this.s.listenerInstalled()) return Promise.resolve([]);
    const context: WebhookEventContext = { ...event.context, state: event.context?.state ?? event.name.slice(event.name.lastIndexOf('.') + 1) };
    const subject: EventSubject = { vHost: context.vhost, app: context.app, appInstance: context.appInstance, stream: context.stream, state: context.state };
    const matches = this.s.config.matching(subject);
    if (matches.length === 0) return Promise.resolve([]);
    const payload: WebhookPayload = {
      id: randomUUID(),
      timestamp: event.timestamp ?? Date.now(),
      name: event.name,
      source: this.s.config.source,
      version: '1.0',
      context,
      data: event.data ?? {},
    };
    const all = Promise.all(matches.map(({ filter, target }) => this.deliver(payload, filter, target)));
    this.pending.add(all);
    void all.finally(() => this.pending.delete(all));
    return all;
  }

  /** Resolves when every delivery under way (retries included) has ended. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Cancels waiting retries and requests in flight; nothing is sent afterwards. */
  async close(): Promise<void> {
    this.closing.abort();
    await this.settled();
  }

  private async deliver(payload: WebhookPayload, filter: WebhookFilter, target: WebhookTarget): Promise<WebhookOutcome> {
    const tries = 1 + (filter.maxRetryAttempts ?? 0);
    const body = JSON.stringify(payload);
    let n = 0;
    while (n < tries) {
      n++;
      if (await this.attempt(payload, body, filter, target, n)) return { eventId: payload.id, filter: filter.id, target: target.id, delivered: true, attempts: n };
      if (n < tries && !(await pause(retryDelayMs(filter), this.closing.signal))) break;
    }
    this.log.warn({ event: payload.name, eventId: payload.id, filter: filter.id, target: target.id, url: safeUrl(target.url), attempts: n }, 'webhook not delivered');
    return { eventId: payload.id, filter: filter.id, target: target.id, delivered: false, attempts: n };
  }

  /** One POST; true on a 2xx answer. */
  private async attempt(payload: WebhookPayload, body: string, filter: WebhookFilter, target: WebhookTarget, attempt: number): Promise<boolean> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': this.s.userAgent };
    for (const h of target.headers ?? []) headers[h.name.toLowerCase()] = h.value;
    if (target.auth?.type === 'jwt') {
      const iat = Math.floor(Date.now() / 1000);
      headers.authorization = `Bearer ${signHs256({ iat, exp: iat + TOKEN_LIFETIME_S, iss: payload.source }, target.auth.secret)}`;
    }
    const record: WebhookDeliveryAttempt = { eventId: payload.id, event: payload.name, filter: filter.id, target: target.id, url: target.url, attempt, ok: false, at: Date.now() };
    const timeout = AbortSignal.timeout(this.s.timeoutMs);
    try {
      const res = await fetch(target.url, { method: 'POST', headers, body, signal: AbortSignal.any([this.closing.signal, timeout]), redirect: 'manual' });
      // The answer's body is not needed; dropping it frees the connection.
      await res.body?.cancel().catch(() => {});
      record.status = res.status;
      record.ok = res.status >= 200 && res.status < 300;
    } catch (err) {
      record.error = timeout.aborted ? `no answer within ${this.s.timeoutMs} ms` : this.closing.signal.aborted ? 'cancelled: the simulator closed' : describeFetchError(err);
    }
    this.record(record);
    this.log.debug({ event: payload.name, eventId: payload.id, target: target.id, url: safeUrl(target.url), attempt, status: record.status, error: record.error }, 'webhook attempt');
    return record.ok;
  }

  private record(r: WebhookDeliveryAttempt): void {
    this.attempts.push(r);
    if (this.attempts.length > MAX_RECORDED) this.attempts.splice(0, this.attempts.length - MAX_RECORDED);
  }
}

/** fetch hides the reason (ECONNREFUSED, ...) in `cause`. */
function describeFetchError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message ?? String(err);
}
