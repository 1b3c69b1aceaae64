import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, type Registry } from '../metrics/prom-client-core.js';
import type { RouteHandler } from '../http/server.js';
import { sendText } from '../http/server.js';
import type { Logger } from '../base/logger.js';
import { BoundedMemory } from './bounded-memory.js';
import { readEvent, type WebhookEvent } from './event.js';
import { JwtError, verifyHs256 } from './jwt.js';

export const MAX_BODY_BYTES = 64 * 1024;

export interface WebhookReceiverOptions {
  /** The shared secret. Without it events are taken unauthenticated (only with the explicit insecure setting). */
  secret?: string;
  /**
   * `jwt`: every event carries `Authorization: Bearer <HS256 JWT signed with the secret>` with a numeric `exp` and a
   * bounded lifetime (a target with `auth.type: jwt`). `token`: the bearer token is the secret itself (a static header
   * that `webhooks setup --auth header` writes). Each mode takes only its own kind.
   */
  auth?: 'jwt' | 'token';
  /** Longest JWT lifetime taken, in seconds (`exp` - now, and `exp - iat` when there is an `iat`); default 600. */
  maxTokenLifetimeSeconds?: number;
  /** Tolerance for the JWT's time claims (`exp`, `nbf`, `iat`), in seconds; default 30. */
  clockSkewSeconds?: number;
  /** How many recent event ids are remembered to drop redeliveries (with JWTs, at least as many as token ids). */
  dedupeWindow?: number;
  /** How long an event id is remembered (ms): a sender's retries come within it. Default one hour. */
  dedupeTtlMs?: number;
  registry: Registry;
  logger: Logger;
  /** The configured server an event belongs to (by `?server=`, its `source`, or the only server). */
  resolveServer: (query: URLSearchParams, event: WebhookEvent) => string;
  /** The applications discovery knows on a server: other names are labelled `other`. */
  knownApplications?: (server: string) => ReadonlySet<string> | undefined;
  /** Runs after the answer was sent: forwarding, re-polling. Errors are logged, never surfaced. */
  onEvent: (server: string, event: WebhookEvent) => Promise<void> | void;
}

type Reason = 'unauthorized' | 'expired' | 'replayed' | 'too_large' | 'unsupported_media_type' | 'malformed_json' | 'invalid' | 'method';

/**
 * Event names as label values: the documented ones (docs/wowza-api-notes.md, "More shapes real servers send"), and names of the documented
 * families (`recording.*`, `connection.*`) up to a small number; anything else is `other`. Names come from the
 * caller, so they must not mint series without bound.
 */
const DOCUMENTED_EVENTS = new Set(['app.started', 'app.shutdown', 'stream.started', 'stream.stopped']);
const EVENT_FAMILY = /^(?:recording|connection|stream|app)\.[a-z][a-z_]{0,31}$/;
const MAX_FAMILY_NAMES = 16;

class EventLabels {
  private readonly family = new Set<string>();
  of(name: string): string {
    if (DOCUMENTED_EVENTS.has(name) || this.family.has(name)) return name;
    if (EVENT_FAMILY.test(name) && this.family.size < MAX_FAMILY_NAMES) {
      this.family.add(name);
      return name;
    }
    return 'other';
  }
}

/**
 * Why a verified JWT's claims are refused, or undefined: it must say when it ends (a numeric `exp`), and not live
 * longer than `maxSeconds`, so a token sniffed off the network is worth minutes, not forever.
 */
export function lifetimeProblem(claims: Record<string, unknown>, nowSeconds: number, maxSeconds: number, skewSeconds: number): string | undefined {
  const { exp, iat } = claims;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return 'the token has no numeric exp (expiry) claim';
  if (iat !== undefined && (typeof iat !== 'number' || !Number.isFinite(iat))) return 'the token has a non-numeric iat claim';
  // Measured from now: measured from `iat`, a token dated a year ahead lived a minute, and stayed good for that year.
  const left = exp - nowSeconds;
  if (left > maxSeconds + skewSeconds) return `the token is good for ${Math.round(left)} s more, longer than the ${maxSeconds} s taken (webhooks.max_token_lifetime)`;
  // A token minted to live a day is refused even in its last minutes: it was worth that day to whoever sniffed it.
  if (typeof iat === 'number' && exp - iat > maxSeconds + skewSeconds) {
    return `the token lives ${Math.round(exp - iat)} s, longer than the ${maxSeconds} s taken (webhooks.max_token_lifetime)`;
  }
  return undefined;
}

/** The longest `jti` taken. A longer one is refused, not cut: two cut ones could be the same. */
const MAX_JTI_LENGTH = 256;
/** How many token ids (`jti`) are remembered; with JWTs, event ids are remembered as many. */
const REMEMBERED_TOKEN_IDS = 100_000;

type TokenCheck = { ok: true; jti: string | undefined; untilMs: number } | { ok: false; reason: Reason; message: string };

/**
 * Checks a bearer JWT: its signature and `exp`/`nbf` (verifyHs256), an `iat` not ahead of this clock by more than
 * the skew, its lifetime, and its `jti`. Gives the `jti` and until when it must be remembered (epoch ms).
 */
function checkJwt(token: string, secret: string, nowMs: number, maxSeconds: number, skewSeconds: number): TokenCheck {
  let claims: Record<string, unknown>;
  try {
    claims = verifyHs256(token, secret, nowMs, skewSeconds);
  } catch (err) {
    const expired = err instanceof JwtError && (err.reason === 'expired' || err.reason === 'not_yet_valid');
    const message = err instanceof JwtError ? (err.reason === 'malformed' ? 'the token is not a JWT signed with the shared secret (webhooks.auth: jwt)' : err.message) : 'invalid token';
    return { ok: false, reason: expired ? 'expired' : 'unauthorized', message };
  }
  const now = nowMs / 1000;
  // Like an `nbf` ahead (counted as `expired` too): a clock problem at the sender, or a token made to last.
  if (typeof claims.iat === 'number' && claims.iat > now + skewSeconds) {
    return { ok: false, reason: 'expired', message: `the token's iat (issued at) is ${Math.round(claims.iat - now)} s ahead of this clock, more than the ${skewSeconds} s taken (webhooks.clock_skew)` };
  }
  const problem = lifetimeProblem(claims, now, maxSeconds, skewSeconds);
  if (problem) return { ok: false, reason: 'unauthorized', message: problem };
  const jti = typeof claims.jti === 'string' || typeof claims.jti === 'number' ? String(claims.jti) : undefined;
  if (jti !== undefined && jti.length > MAX_JTI_LENGTH) {
    return { ok: false, reason: 'unauthorized', message: `the token's jti is ${jti.length} characters long, more than the ${MAX_JTI_LENGTH} taken` };
  }
  return { ok: true, jti, untilMs: ((claims.exp as number) + skewSeconds) * 1000 };
}

/** What a `jti` is bound to: the event's id and every byte of its body, so the token cannot carry another body. */
function eventHash(id: string, body: Buffer): string {
  return createHash('sha256').update(id).update('\u0000').update(body).digest('base64');
}

/** Compares a static token with the secret in constant time (over their digests, so lengths may differ). */
function sameSecret(token: string, secret: string): boolean {
  const a = createHash('sha256').update(token).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      resolve('too_large');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      if (over) return;
      size += c.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(over ? 'too_large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The receiver's own series, in the exporter's registry. */
function receiverMetrics(registry: Registry) {
  const events = new Counter({
    name: 'wowza_webhook_events_total',
    help: 'Webhook events accepted, by event name.',
    labelNames: ['server', 'event', 'application'],
    registers: [registry],
  });
  const unreadable = new Counter({
    name: 'wowza_webhook_unreadable_fields_total',
    help: 'Accepted webhook events with a field that could not be read (a derived id, the arrival time, the name "unknown"), by field.',
    labelNames: ['field'],
    registers: [registry],
  });
  const rejected = new Counter({
    name: 'wowza_webhook_rejected_total',
    help: 'Webhook deliveries refused, by reason.',
    labelNames: ['reason'],
    registers: [registry],
  });
  // A retry is part of a healthy delivery, not a refusal: it is acknowledged and counted apart.
  const duplicates = new Counter({
    name: 'wowza_webhook_duplicates_total',
    help: 'Webhook deliveries of an event already taken (a sender\'s retry): acknowledged with 200, not counted again.',
    registers: [registry],
  });
  const lastEvent = new Gauge({
    name: 'wowza_stream_last_event_timestamp_seconds',
    help: 'Time of the last webhook event for a stream, labelled with the state it reported.',
    labelNames: ['server', 'vhost', 'application', 'app_instance', 'stream', 'state'],
    registers: [registry],
  });
  return { events, unreadable, rejected, duplicates, lastEvent };
}

/** The POST handler for WSE webhook deliveries. It answers before any slow work. */
export function createWebhookReceiver(o: WebhookReceiverOptions): RouteHandler {
  const log = o.logger.child({ component: 'webhooks' });
  const { events, unreadable, rejected, duplicates, lastEvent } = receiverMetrics(o.registry);
  // Only the latest state per stream is kept, and only for a bounded number of streams.
  const streamStates = new Map<string, Record<string, string>>();
  const MAX_STREAMS = 10_000;
  const mode = o.auth ?? 'jwt';
  const jwtMode = mode === 'jwt' && o.secret !== undefined;
  // Event ids taken, so a retry is acknowledged and counted once; bounded in count and in time. With JWTs as many
  // as token ids, and each at least as long as its token's: an id forgotten while its jti is not let a replay in.
  const dedupeWindow = o.dedupeWindow ?? 10_000;
  const remembered = jwtMode ? Math.max(dedupeWindow, REMEMBERED_TOKEN_IDS) : dedupeWindow;
  const recent = new BoundedMemory<true>(remembered);
  const dedupeTtl = o.dedupeTtlMs ?? 3_600_000;

  const reject = (res: ServerResponse, status: number, reason: Reason, message: string, extra: Record<string, string> = {}) => {
    rejected.inc({ reason });
    log.warn({ status, reason, detail: message }, 'webhook rejected');
    res.writeHead(status, { 'content-type': 'application/json', ...extra });
    res.end(JSON.stringify({ error: message }) + '\n');
  };

  const eventLabels = new EventLabels();
  // A token with a jti names one event (the hash of its id and body): with another one it is a replay. Kept until
  // the token expires.
  const seenJtis = new BoundedMemory<string>(remembered);
  const maxLifetime = o.maxTokenLifetimeSeconds ?? 600;
  const skew = o.clockSkewSeconds ?? 30;
  const denied = (res: ServerResponse, reason: Reason, message: string) =>
    reject(res, 401, reason, message, { 'www-authenticate': reason === 'unauthorized' && message.startsWith('missing') ? 'Bearer' : 'Bearer error="invalid_token"' });

  return async (req, res, url) => {
    if (req.method !== 'POST') {
      reject(res, 405, 'method', 'use POST', { allow: 'POST' });
      return;
    }
    // A page on another site can make a browser POST text/plain or a form without asking first; JSON it cannot.
    const type = String(req.headers['content-type'] ?? '');
    if (!/^\s*application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
      req.resume();
      reject(res, 415, 'unsupported_media_type', `events must be sent as application/json, not ${JSON.stringify(type.slice(0, 60) || 'no content type')}`);
      return;
    }
    /** The JWT's expiry (epoch ms) when it must be claimed for this event once the body was read. */
    let jwt: { jti: string | undefined; untilMs: number } | undefined;
    if (o.secret !== undefined) {
      const m = /^Bearer\s+(\S+)$/i.exec(String(req.headers.authorization ?? ''));
      if (!m) {
        req.resume();
        denied(res, 'unauthorized', 'missing Bearer token');
        return;
      }
      const token = m[1]!;
      if (mode === 'token') {
        if (!sameSecret(token, o.secret)) {
          req.resume();
          denied(res, 'unauthorized', 'the bearer token is not the shared secret (webhooks.auth: token)');
          return;
        }
      } else {
        const checked = checkJwt(token, o.secret, Date.now(), maxLifetime, skew);
        if (!checked.ok) {
          req.resume();
          denied(res, checked.reason, checked.message);
          return;
        }
        jwt = { jti: checked.jti, untilMs: checked.untilMs };
      }
    }
    const body = await readBody(req, MAX_BODY_BYTES);
    if (body === 'too_large') {
      reject(res, 413, 'too_large', `body larger than ${MAX_BODY_BYTES} bytes`);
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      reject(res, 400, 'malformed_json', 'body is not valid JSON');
      return;
    }
    const read = readEvent(json, body);
    if (!read.ok) {
      reject(res, 400, 'invalid', read.message);
      return;
    }
    const event = read.event;
    // Wowza does not document its tokens' claims; a token without a jti may carry every event of its second (the
    // same iat), so only a jti binds a token to one event: its id and its body. The same token with the same
    // bytes is the sender's retry, a duplicate below; with another id or another body, a replay.
    const now = Date.now();
    let retry = false;
    if (jwt?.jti !== undefined) {
      const hash = eventHash(event.id, body);
      const first = seenJtis.get(jwt.jti, now);
      if (first !== undefined && first !== hash) {
        denied(res, 'replayed', 'this token (its jti) already came with another event (another id or another body)');
        return;
      }
      retry = first !== undefined;
      if (!retry) seenJtis.set(jwt.jti, hash, jwt.untilMs, now);
    }
    for (const field of read.unreadable) unreadable.inc({ field });
    if (read.unreadable.length > 0) log.debug({ event: event.name, fields: read.unreadable }, 'webhook event taken with fields it could not read');
    // An event id is kept at least as long as the token that came with it (a fresh token for a known id included).
    const keepUntil = Math.max(now + dedupeTtl, jwt?.untilMs ?? 0);
    if (retry || recent.get(event.id, now)) {
      if (jwt?.jti !== undefined && !retry) recent.set(event.id, true, keepUntil, now);
      duplicates.inc();
      log.debug({ event: event.name, id: event.id }, 'webhook event delivered again (a retry): acknowledged, not counted again');
      sendText(res, 200, '{"status":"duplicate"}\n', 'application/json');
      return;
    }
    recent.set(event.id, true, keepUntil, now);
    sendText(res, 202, '{"status":"accepted"}\n', 'application/json');

    const server = o.resolveServer(url.searchParams, event);
    const c = event.context;
    // Label values from bounded sets: the caller names events and applications, discovery says which exist.
    const application = c.app !== undefined && o.knownApplications?.(server)?.has(c.app) ? c.app : c.app === undefined ? '' : 'other';
    events.inc({ server, event: eventLabels.of(event.name), application });
    if (c.stream && application !== 'other') {
      const key = [server, c.vhost, c.app, c.appInstance, c.stream].join('\u0000');
      const previous = streamStates.get(key);
      if (previous) lastEvent.remove(previous);
      const state = c.state !== undefined && /^[a-z][a-z_]{0,31}$/i.test(c.state) ? c.state.toLowerCase() : eventLabels.of(event.name);
      const labels = { server, vhost: c.vhost ?? '', application, app_instance: c.appInstance ?? '', stream: c.stream, state };
      streamStates.delete(key);
      streamStates.set(key, labels);
      lastEvent.set(labels, event.timestamp / 1000);
      if (streamStates.size > MAX_STREAMS) {
        const [oldKey, oldLabels] = streamStates.entries().next().value!;
        streamStates.delete(oldKey);
        lastEvent.remove(oldLabels);
      }
    }
    try {
      await o.onEvent(server, event);
    } catch (err) {
      log.error({ err: (err as Error).message, event: event.name }, 'webhook follow-up failed');
    }
  };
}
