import { createHash } from 'node:crypto';

/**
 * A WSE webhook event. The reference does not show the delivered payload (wse-rest-api.md, "6. Events", item 5);
 * public reports show `{"id","timestamp"(epoch ms),"name":"stream.started","source","version":"1.0",
 * "context":{"vhost","app","appInstance","stream","state"},"data":{}}` (docs/wowza-api-notes.md, "More shapes real servers send").
 * Since none of that is promised, the receiver reads it leniently: an event whose shape merely differs is
 * taken with what could be read, and the fields that could not are counted, not answered with 400.
 */
export interface WebhookEvent {
  /** The event's `id`, or one derived from the body (so a redelivery of the same body is still a duplicate). */
  id: string;
  /** Epoch ms: from `timestamp` as epoch seconds, ms or an ISO 8601 string; the arrival time when unreadable. */
  timestamp: number;
  /** Any characters (stream names hold dots, newer servers add event kinds); `unknown` when absent. */
  name: string;
  source?: string;
  version?: string;
  context: { vhost?: string; app?: string; appInstance?: string; stream?: string; state?: string };
  data?: unknown;
}

/** Fields of an event that could not be read, for `wowza_webhook_unreadable_fields_total{field}`. */
export type UnreadableField = 'id' | 'timestamp' | 'name' | 'source' | 'context';

export type EventRead = { ok: true; event: WebhookEvent; unreadable: UnreadableField[] } | { ok: false; message: string };

const MAX_NAME = 256;
const MAX_VALUE = 1024;
const CONTEXT_KEYS = ['vhost', 'app', 'appInstance', 'stream', 'state'] as const;

/** A bounded string from a string or a number; undefined for anything else. */
function text(v: unknown, max = MAX_VALUE): string | undefined {
  if (typeof v === 'string') return v.length > max ? v.slice(0, max) : v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/**
 * Epoch ms from epoch seconds, epoch ms (numbers or digit strings; below 1e11 is taken as seconds, i.e. before
 * 1973 in ms or after 5138 in seconds) or an ISO 8601 string. Undefined when none of those.
 */
export function eventTime(v: unknown): number | undefined {
  let n: number | undefined;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string' && /^\d+(\.\d+)?$/.test(v.trim())) n = Number(v.trim());
  else if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v)) {
    const ms = Date.parse(v);
    return Number.isNaN(ms) ? undefined : ms;
  }
  if (n === undefined || !Number.isFinite(n) || n <= 0) return undefined;
  return n < 1e11 ? Math.round(n * 1000) : Math.round(n);
}

/** Reads a delivered body (already JSON-parsed). Only a body that is not a JSON object is refused. */
export function readEvent(json: unknown, raw: Buffer, now = Date.now()): EventRead {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return { ok: false, message: 'the event must be a JSON object' };
  const b = json as Record<string, unknown>;
  const unreadable: UnreadableField[] = [];

  let id = text(b.id, 256);
  if (id === undefined || id === '') {
    if (b.id !== undefined) unreadable.push('id');
    id = `sha256:${createHash('sha256').update(raw).digest('hex').slice(0, 32)}`;
  }
  let timestamp = eventTime(b.timestamp);
  if (timestamp === undefined) {
    unreadable.push('timestamp');
    timestamp = now;
  }
  let name = text(b.name, MAX_NAME);
  if (name === undefined || name === '') {
    unreadable.push('name');
    name = 'unknown';
  }
  const source = text(b.source, 512);
  if (b.source !== undefined && b.source !== null && source === undefined) unreadable.push('source');

  const context: WebhookEvent['context'] = {};
  if (b.context !== undefined && b.context !== null) {
    if (typeof b.context !== 'object' || Array.isArray(b.context)) unreadable.push('context');
    else {
      const c = b.context as Record<string, unknown>;
      let bad = false;
      for (const k of CONTEXT_KEYS) {
        if (c[k] === undefined || c[k] === null) continue;
        const v = text(c[k]);
        if (v === undefined) bad = true;
        else context[k] = v;
      }
      if (bad) unreadable.push('context');
    }
  }
  const event: WebhookEvent = { id, timestamp, name, context };
  if (source !== undefined) event.source = source;
  const version = text(b.version, 32);
  if (version !== undefined) event.version = version;
  if (b.data !== undefined) event.data = b.data;
  return { ok: true, event, unreadable };
}
