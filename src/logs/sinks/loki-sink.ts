import type { Dispatcher } from 'undici';
import type { LogEntry } from '../log-entry.js';
import { createSinkAgent, httpPost, type SinkTls } from './http-post.js';
import { Utf8Builder } from './utf8-builder.js';
import type { LogSink } from './log-sink.js';

export interface LokiStream {
  stream: Record<string, string>;
  /** `[unix nanoseconds as a string, line]`, ascending in time. */
  values: Array<[string, string]>;
}

export interface LokiPushBody {
  streams: LokiStream[];
}

/**
 * Builds a `/loki/api/v1/push` body. Streams are keyed by low-cardinality labels only (server, log_type,
 * severity, plus the static ones configured); the record travels as the line, in JSON.
 */
export function buildLokiPush(entries: readonly LogEntry[], staticLabels: Readonly<Record<string, string>> = {}): LokiPushBody {
  const streams = new Map<string, { labels: Record<string, string>; items: Array<{ ms: number; seq: number; line: string }> }>();
  let seq = 0;
  for (const e of entries) {
    const severity = e.severity;
    const key = `${e.server}\u0000${e.logType}\u0000${severity}`;
    let s = streams.get(key);
    if (!s) {
      s = { labels: { ...staticLabels, server: e.server, log_type: e.logType, severity }, items: [] };
      streams.set(key, s);
    }
    s.items.push({ ms: e.timeMs, seq: seq++, line: e.json });
  }
  const out: LokiStream[] = [];
  for (const s of streams.values()) {
    // Loki wants each stream in time order; equal times keep the order they were read in.
    s.items.sort((a, b) => a.ms - b.ms || a.seq - b.seq);
    out.push({ stream: s.labels, values: s.items.map((i) => [nanoseconds(i.ms), i.line]) });
  }
  return { streams: out };
}

/**
 * `JSON.stringify(buildLokiPush(entries, staticLabels))` as UTF-8, written piece by piece (see Utf8Builder):
 * the same bytes at a fraction of the cost.
 */
export function encodeLokiPush(entries: readonly LogEntry[], staticLabels: Readonly<Record<string, string>> = {}): Buffer {
  const push = buildLokiPush(entries, staticLabels);
  const out = new Utf8Builder().add('{"streams":[');
  push.streams.forEach((s, i) => {
    out.add(i === 0 ? '{"stream":' : ',{"stream":').add(JSON.stringify(s.stream)).add(',"values":[');
    s.values.forEach(([ns, line], j) => out.add(j === 0 ? '["' : ',["').add(ns).add('",').add(JSON.stringify(line)).add(']'));
    out.add(']}');
  });
  return out.add(']}').toBuffer();
}

function nanoseconds(ms: number): string {
  const whole = Math.max(0, Math.trunc(ms));
  // Up to 2^53 ms the digits of ms followed by six zeros are exact; BigInt costs more than the line.
  return whole === 0 ? '0' : Number.isSafeInteger(whole) ? `${whole}000000` : (BigInt(whole) * 1_000_000n).toString();
}

/** `http://loki:3100` -> `http://loki:3100/loki/api/v1/push`; a URL with a path is used as given. */
export function lokiPushUrl(url: string): string {
  const u = new URL(url);
  if (u.pathname === '' || u.pathname === '/') u.pathname = '/loki/api/v1/push';
  return u.toString();
}

export interface LokiSinkOptions {
  name: string;
  url: string;
  timeoutMs: number;
  tls?: SinkTls;
  /** Connection pool to use instead of a private one (closed by its owner, not by the sink). */
  dispatcher?: Dispatcher;
  /** Sent as `X-Scope-OrgID` (multi-tenant Loki). */
  tenantId?: string;
  basicAuth?: { username: string; password: string };
  bearerToken?: string;
  labels?: Readonly<Record<string, string>>;
}

/** Pushes batches to Grafana Loki's JSON push API. */
export class LokiSink implements LogSink {
  readonly name: string;
  private readonly url: string;
  private readonly headers: Record<string, string>;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;

  constructor(private readonly options: LokiSinkOptions) {
    this.name = options.name;
    this.ownsDispatcher = !options.dispatcher;
    this.dispatcher = options.dispatcher ?? createSinkAgent(options.tls);
    this.url = lokiPushUrl(options.url);
    this.headers = {};
    if (options.tenantId) this.headers['x-scope-orgid'] = options.tenantId;
    if (options.basicAuth) {
      const token = Buffer.from(`${options.basicAuth.username}:${options.basicAuth.password}`).toString('base64');
      this.headers.authorization = `Basic ${token}`;
    } else if (options.bearerToken) {
      this.headers.authorization = `Bearer ${options.bearerToken}`;
    }
  }

  send(entries: readonly LogEntry[], signal: AbortSignal): Promise<void> {
    const body = encodeLokiPush(entries, this.options.labels);
    return httpPost({ url: this.url, headers: this.headers, timeoutMs: this.options.timeoutMs, dispatcher: this.dispatcher }, body, 'application/json', signal);
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}
