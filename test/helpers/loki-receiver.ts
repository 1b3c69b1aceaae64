import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/**
 * A loopback stand-in for Loki's `POST /loki/api/v1/push` (JSON). Stricter than Loki on purpose: it
 * accepts only what the shipper promises to send, answers 400 to anything else, and records every line
 * it accepted, in the order it accepted them. It can be switched down (connection refused, or 503) and
 * up again on the same port, to play an outage.
 */

export const PUSH_PATH = '/loki/api/v1/push';

/** The only stream labels the shipper may set (it configures no static ones in these tests). */
export const ALLOWED_LABELS: ReadonlySet<string> = new Set(['server', 'log_type', 'severity', 'service_name']);

/** One accepted line. */
export interface ReceivedLine {
  labels: Readonly<Record<string, string>>;
  /** Unix nanoseconds, as sent (a string of digits). */
  ns: string;
  line: string;
  /** Loki 3 structured metadata sent with the line, if any. */
  metadata?: Readonly<Record<string, string>>;
  /** Which accepted push it came in (1, 2, ...). */
  push: number;
  /** When it was accepted (epoch ms). */
  at: number;
}

export interface Rejection {
  status: number;
  reason: string;
}

type Value = [string, string] | [string, string, Record<string, string>];
export type ValidatedPush = { ok: true; streams: Array<{ labels: Record<string, string>; values: Value[] }> } | { ok: false; reason: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks a push body against `{streams:[{stream:{labels}, values:[[ns-string, line], ...]}]}`: no other
 * keys, label names from {@link ALLOWED_LABELS} with non-empty string values, timestamps strings of
 * digits that never go back within a stream, lines strings. Returns the first problem found.
 */
export function validateLokiPush(body: unknown): ValidatedPush {
  if (!isObject(body)) return { ok: false, reason: 'body is not a JSON object' };
  const extra = Object.keys(body).filter((k) => k !== 'streams');
  if (extra.length > 0) return { ok: false, reason: `unexpected top-level keys: ${extra.join(', ')}` };
  if (!Array.isArray(body.streams) || body.streams.length === 0) return { ok: false, reason: 'streams must be a non-empty array' };
  const streams: Array<{ labels: Record<string, string>; values: Value[] }> = [];
  for (const [i, s] of body.streams.entries()) {
    const where = `streams[${i}]`;
    if (!isObject(s)) return { ok: false, reason: `${where} is not an object` };
    const keys = Object.keys(s).sort().join(',');
    if (keys !== 'stream,values') return { ok: false, reason: `${where} must have exactly the keys stream and values, has ${keys || 'none'}` };
    if (!isObject(s.stream) || Object.keys(s.stream).length === 0) return { ok: false, reason: `${where}.stream must be a non-empty object of labels` };
    const labels: Record<string, string> = {};
    for (const [name, value] of Object.entries(s.stream)) {
      if (!ALLOWED_LABELS.has(name)) return { ok: false, reason: `${where}.stream: label "${name}" is not one of ${[...ALLOWED_LABELS].join(', ')}` };
      if (typeof value !== 'string' || value === '') return { ok: false, reason: `${where}.stream.${name} must be a non-empty string` };
      labels[name] = value;
    }
    if (!Array.isArray(s.values) || s.values.length === 0) return { ok: false, reason: `${where}.values must be a non-empty array` };
    const values: Value[] = [];
    let last = -1n;
    for (const [j, v] of s.values.entries()) {
      const at = `${where}.values[${j}]`;
      if (!Array.isArray(v) || (v.length !== 2 && v.length !== 3)) return { ok: false, reason: `${at} must be [ns-string, line] or [ns-string, line, {structured metadata}]` };
      const [ns, line, meta] = v as unknown[];
      // Loki 3's structured metadata: an object of string values, never empty.
      if (v.length === 3) {
        if (!isObject(meta) || Object.keys(meta).length === 0) return { ok: false, reason: `${at}[2] must be a non-empty object of structured metadata` };
        for (const [k, mv] of Object.entries(meta)) {
          if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) return { ok: false, reason: `${at}[2]: metadata name "${k}" is not a label name` };
          if (typeof mv !== 'string') return { ok: false, reason: `${at}[2].${k} must be a string` };
        }
      }
      if (typeof ns !== 'string' || !/^\d{1,19}$/.test(ns)) return { ok: false, reason: `${at}[0] must be a string of digits (unix nanoseconds), got ${JSON.stringify(ns)}` };
      if (typeof line !== 'string') return { ok: false, reason: `${at}[1] must be a string` };
      const t = BigInt(ns);
      if (t < last) return { ok: false, reason: `${at}: timestamp ${ns} goes back in time within the stream` };
      last = t;
      values.push(v.length === 3 ? [ns, line, meta as Record<string, string>] : [ns, line]);
    }
    streams.push({ labels, values });
  }
  return { ok: true, streams };
}

export interface LokiReceiver {
  /** Base URL, e.g. http://127.0.0.1:41234 (the push path is {@link PUSH_PATH}). */
  readonly url: string;
  readonly port: number;
  /** Every accepted line, in the order accepted. */
  readonly lines: readonly ReceivedLine[];
  /** Requests refused as malformed (anything but a valid push). */
  readonly rejections: readonly Rejection[];
  /** Pushes accepted. */
  readonly pushes: number;
  /** Accepted pushes whose body came gzipped (`Content-Encoding: gzip`). */
  readonly gzipped: number;
  /** 503 answers given while down in `unavailable` mode. */
  readonly unavailableAnswers: number;
  /** `refuse`: stop listening (connections are refused); `unavailable`: answer every push 503. */
  down(mode: 'refuse' | 'unavailable'): Promise<void>;
  /** Accepts pushes again (listening on the same port). */
  up(): Promise<void>;
  close(): Promise<void>;
}

/** Largest body read; the shipper's batches are far smaller. */
const MAX_BODY = 16 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    // A sender killed mid-request leaves an incomplete body: nothing of it may count as received.
    req.on('aborted', () => resolve(undefined));
    req.on('error', () => resolve(undefined));
    req.on('end', () => resolve(size > MAX_BODY ? Buffer.alloc(0) : Buffer.concat(chunks)));
  });
}

export async function startLokiReceiver(): Promise<LokiReceiver> {
  const lines: ReceivedLine[] = [];
  const rejections: Rejection[] = [];
  let pushes = 0;
  let gzipped = 0;
  let unavailableAnswers = 0;
  let mode: 'up' | 'refuse' | 'unavailable' = 'up';

  const answer = (res: ServerResponse, status: number, text: string) => {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(text + '\n');
  };
  const reject = (res: ServerResponse, status: number, reason: string) => {
    rejections.push({ status, reason });
    answer(res, status, reason);
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      if (body === undefined) return;
      if (mode === 'unavailable') {
        unavailableAnswers++;
        return answer(res, 503, 'receiver is down (test outage)');
      }
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path !== PUSH_PATH) return reject(res, 404, `unknown path ${path}`);
      if (req.method !== 'POST') return reject(res, 405, `method ${req.method} not allowed`);
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json') return reject(res, 400, `content-type must be application/json, got "${type}"`);
      // Loki's push handler takes gzip (and deflate); the shipper sends gzip or nothing.
      const encoding = req.headers['content-encoding'];
      if (encoding !== undefined && encoding !== 'gzip') return reject(res, 400, `unexpected content-encoding ${encoding}`);
      let text: string;
      try {
        text = (encoding === 'gzip' ? gunzipSync(body, { maxOutputLength: MAX_BODY * 4 }) : body).toString('utf8');
      } catch (err) {
        return reject(res, 400, `body is not gzip: ${(err as Error).message}`);
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        return reject(res, 400, `body is not JSON: ${(err as Error).message}`);
      }
      const push = validateLokiPush(parsed);
      if (!push.ok) return reject(res, 400, push.reason);
      pushes++;
      if (encoding === 'gzip') gzipped++;
      const at = Date.now();
      for (const s of push.streams) for (const [ns, line, metadata] of s.values) lines.push({ labels: s.labels, ns, line, push: pushes, at, ...(metadata ? { metadata } : {}) });
      res.writeHead(204);
      res.end();
    })();
  });

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  // Idle keep-alive sockets are closed too: going down must refuse the sender's next request.
  const stopListening = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });

  await listen(0);
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    lines,
    rejections,
    get pushes() {
      return pushes;
    },
    get gzipped() {
      return gzipped;
    },
    get unavailableAnswers() {
      return unavailableAnswers;
    },
    async down(next) {
      if (mode === 'refuse' && next !== 'refuse') await listen(port);
      if (next === 'refuse' && mode !== 'refuse') {
        mode = 'refuse';
        await stopListening();
        return;
      }
      mode = next;
    },
    async up() {
      if (mode === 'refuse') await listen(port);
      mode = 'up';
    },
    async close() {
      if (mode !== 'refuse') {
        mode = 'refuse';
        await stopListening();
      }
    },
  };
}
