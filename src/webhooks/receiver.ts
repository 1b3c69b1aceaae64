import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { RouteHandler } from '../http/server.js';
import { sendText } from '../http/server.js';
import type { Logger } from '../logger.js';
import { readEvent, type WebhookEvent } from './event.js';
import { JwtError, verifyHs256 } from './jwt.js';

export const MAX_BODY_BYTES = 64 * 1024;

export interface WebhookReceiverOptions {
  /**
   * The shared secret; when set, every event must carry `Authorization: Bearer <token>` where the token is an
   * HS256 JWT signed with it (a target with `auth.type: jwt`) or the secret itself (a static token that
   * `webhooks setup --auth header` puts in the target's `headers`).
   */
  secret?: string;
  clockSkewSeconds?: number;
  /** How many recent event ids are remembered to drop redeliveries. */
  dedupeWindow?: number;
  registry: Registry;
  logger: Logger;
  /** The configured server an event belongs to (by `?server=`, its `source`, or the only server). */
  resolveServer: (query: URLSearchParams, event: WebhookEvent) => string;
  /** Runs after the answer was sent: forwarding, re-polling. Errors are logged, never surfaced. */
  onEvent: (server: string, event: WebhookEvent) => Promise<void> | void;
}

type Reason = 'unauthorized' | 'expired' | 'too_large' | 'malformed_json' | 'invalid' | 'duplicate' | 'method';

/** Compares a static token with the secret in constant time (over their digests, so lengths may differ). */
function sameSecret(token: string, secret: string): boolean {
  const a = createHash('sha256').update(token).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
}

/** Remembers the last N ids in insertion order (a Set keeps it), so memory stays bounded. */
class RecentIds {
  private readonly ids = new Set<string>();
  constructor(private readonly max: number) {}
  seen(id: string): boolean {
    if (this.ids.has(id)) return true;
    this.ids.add(id);
    if (this.ids.size > this.max) this.ids.delete(this.ids.values().next().value!);
    return false;
  }
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

/** The POST handler for WSE webhook deliveries. It answers before any slow work. */
export function createWebhookReceiver(o: WebhookReceiverOptions): RouteHandler {
  const log = o.logger.child({ component: 'webhooks' });
  const events = new Counter({
    name: 'wowza_webhook_events_total',
    help: 'Webhook events accepted, by event name.',
    labelNames: ['server', 'event', 'application'],
    registers: [o.registry],
  });
  const unreadable = new Counter({
    name: 'wowza_webhook_unreadable_fields_total',
    help: 'Accepted webhook events with a field that could not be read (a derived id, the arrival time, the name "unknown"), by field.',
    labelNames: ['field'],
    registers: [o.registry],
  });
  const rejected = new Counter({
    name: 'wowza_webhook_rejected_total',
    help: 'Webhook deliveries rejected (or dropped as duplicates), by reason.',
    labelNames: ['reason'],
    registers: [o.registry],
  });
  const lastEvent = new Gauge({
    name: 'wowza_stream_last_event_timestamp_seconds',
    help: 'Time of the last webhook event for a stream, labelled with the state it reported.',
    labelNames: ['server', 'vhost', 'application', 'instance', 'stream', 'state'],
    registers: [o.registry],
  });
  // Only the latest state per stream is kept, and only for a bounded number of streams.
  const streamStates = new Map<string, Record<string, string>>();
  const MAX_STREAMS = 10_000;
  const recent = new RecentIds(o.dedupeWindow ?? 10_000);

  const reject = (res: ServerResponse, status: number, reason: Reason, message: string, extra: Record<string, string> = {}) => {
    rejected.inc({ reason });
    log.warn({ status, reason, detail: message }, 'webhook rejected');
    res.writeHead(status, { 'content-type': 'application/json', ...extra });
    res.end(JSON.stringify({ error: message }) + '\n');
  };

  return async (req, res, url) => {
    if (req.method !== 'POST') {
      reject(res, 405, 'method', 'use POST', { allow: 'POST' });
      return;
    }
    if (o.secret !== undefined) {
      const auth = String(req.headers.authorization ?? '');
      const m = /^Bearer\s+(\S+)$/i.exec(auth);
      if (!m) {
        req.resume();
        reject(res, 401, 'unauthorized', 'missing Bearer token', { 'www-authenticate': 'Bearer' });
        return;
      }
      const token = m[1]!;
      // A static token is the secret itself; anything else must be a JWT signed with it.
      if (!sameSecret(token, o.secret)) {
        try {
          verifyHs256(token, o.secret, Date.now(), o.clockSkewSeconds ?? 30);
        } catch (err) {
          req.resume();
          const expired = err instanceof JwtError && (err.reason === 'expired' || err.reason === 'not_yet_valid');
          const message = err instanceof JwtError ? (err.reason === 'malformed' ? 'the token is neither the shared secret nor a JWT signed with it' : err.message) : 'invalid token';
          reject(res, 401, expired ? 'expired' : 'unauthorized', message, { 'www-authenticate': 'Bearer error="invalid_token"' });
          return;
        }
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
    for (const field of read.unreadable) unreadable.inc({ field });
    if (read.unreadable.length > 0) log.debug({ event: event.name, fields: read.unreadable }, 'webhook event taken with fields it could not read');
    if (recent.seen(event.id)) {
      rejected.inc({ reason: 'duplicate' });
      sendText(res, 200, '{"status":"duplicate"}\n', 'application/json');
      return;
    }
    sendText(res, 202, '{"status":"accepted"}\n', 'application/json');

    const server = o.resolveServer(url.searchParams, event);
    const c = event.context;
    events.inc({ server, event: event.name, application: c.app ?? '' });
    if (c.stream) {
      const key = [server, c.vhost, c.app, c.appInstance, c.stream].join('\u0000');
      const previous = streamStates.get(key);
      if (previous) lastEvent.remove(previous);
      const labels = { server, vhost: c.vhost ?? '', application: c.app ?? '', instance: c.appInstance ?? '', stream: c.stream, state: c.state ?? event.name };
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
