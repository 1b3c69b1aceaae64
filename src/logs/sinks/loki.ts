import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Dispatcher } from 'undici';
import { entryLokiLine, entryRecord, type LogEntry } from '../transform/entry.js';
import { lokiNanoseconds } from '../transform/loki-timestamp.js';
import { createSinkAgent, httpPost, type SinkTls } from './http-post.js';
import { Utf8Builder } from '../../base/utf8-builder.js';
import { registerSecret } from '../../base/secret-scrubber.js';
import type { LogSink } from './sink.js';

export interface LokiStream {
  stream: Record<string, string>;
  /** `[unix nanoseconds as a string, line]`, ascending in time; a third member holds structured metadata. */
  values: Array<[string, string] | [string, string, Record<string, string>]>;
}

export interface LokiPushBody {
  streams: LokiStream[];
}

interface StreamOfEntries {
  labels: Record<string, string>;
  entries: LogEntry[];
}

/**
 * The batch's streams, keyed by low-cardinality labels only (server, log_type, severity, plus the static ones
 * configured), each in time order as Loki wants it; equal times keep the order they were read in.
 */
function streamsOf(entries: readonly LogEntry[], staticLabels: Readonly<Record<string, string>>): StreamOfEntries[] {
  const streams = new Map<string, StreamOfEntries & { seq: number[] }>();
  let last: (StreamOfEntries & { seq: number[] }) | undefined;
  let prev: LogEntry | undefined;
  entries.forEach((e, i) => {
    // Lines of one stream come in runs (one log, mostly one severity): the run's stream is kept, not looked up again.
    let s = prev !== undefined && e.server === prev.server && e.logType === prev.logType && e.severity === prev.severity ? last : undefined;
    if (!s) {
      const key = `${e.server}\u0000${e.logType}\u0000${e.severity}`;
      s = streams.get(key);
      if (!s) {
        s = { labels: { ...staticLabels, server: e.server, log_type: e.logType, severity: e.severity }, entries: [], seq: [] };
        streams.set(key, s);
      }
    }
    s.entries.push(e);
    s.seq.push(i);
    last = s;
    prev = e;
  });
  return [...streams.values()].map((s) => {
    let sorted = true;
    for (let i = 1; i < s.entries.length && sorted; i++) sorted = s.entries[i - 1]!.timeMs <= s.entries[i]!.timeMs;
    if (sorted) return { labels: s.labels, entries: s.entries };
    const order = s.entries.map((_, i) => i).sort((a, b) => s.entries[a]!.timeMs - s.entries[b]!.timeMs || s.seq[a]! - s.seq[b]!);
    return { labels: s.labels, entries: order.map((i) => s.entries[i]!) };
  });
}

/** Builds a `/loki/api/v1/push` body; the record travels as the line, in JSON. */
export function buildLokiPush(entries: readonly LogEntry[], staticLabels: Readonly<Record<string, string>> = {}, metadata?: MetadataFields): LokiPushBody {
  return {
    streams: streamsOf(entries, staticLabels).map((s) => ({
      stream: s.labels,
      values: s.entries.map((e) => {
        const line = JSON.parse(Buffer.from(entryLokiLine(e)).toString('utf8')) as string;
        const meta = metadata?.length ? metadataOf(e, metadata) : undefined;
        return meta ? [lokiNanoseconds(e.timeMs), line, JSON.parse(meta) as Record<string, string>] : [lokiNanoseconds(e.timeMs), line];
      }),
    })),
  };
}

/** Record fields sent as Loki 3 structured metadata: the record's field name and the metadata key it goes under. */
export type MetadataFields = ReadonlyArray<{ field: string; key: string }>;

/**
 * The push body as UTF-8, written piece by piece (see Utf8Builder): the lines are the encoder's bytes, copied as they
 * are. The encoder writes each line with a time as a whole value (`["<nanoseconds>",<line>]`) followed by a comma, so
 * the values of consecutive lines of one stream are one run of bytes, copied in one piece, as NDJSON copies its
 * documents. With `metadata`, each line whose record has one of those fields carries them as structured metadata (the
 * record is read back for it: a cost only those who ask for it pay).
 */
export function encodeLokiPush(entries: readonly LogEntry[], staticLabels: Readonly<Record<string, string>> = {}, metadata?: MetadataFields): Buffer {
  const out = new Utf8Builder().add('{"streams":[');
  const withMetadata = metadata !== undefined && metadata.length > 0;
  streamsOf(entries, staticLabels).forEach((s, i) => {
    out.add(i === 0 ? '{"stream":' : ',{"stream":').add(JSON.stringify(s.labels)).add(',"values":[');
    const values = s.entries;
    for (let j = 0; j < values.length; ) {
      if (j > 0) out.add(',');
      const e = values[j]!;
      const n = withMetadata ? 0 : valueRun(values, j);
      if (n > 0) {
        const last = values[j + n - 1]!.lokiLine!;
        const from = e.lokiLine!.byteOffset - e.lokiPrefix!;
        out.add(new Uint8Array(last.buffer, from, last.byteOffset + last.length + 1 - from));
        j += n;
        continue;
      }
      out.add(`["${lokiNanoseconds(e.timeMs)}",`);
      out.add(entryLokiLine(e));
      const meta = withMetadata ? metadataOf(e, metadata) : undefined;
      if (meta) out.add(',').add(meta);
      out.add(']');
      j++;
    }
    out.add(']}');
  });
  return out.add(']}').toBuffer();
}

/**
 * How many entries from `from` on the encoder wrote as whole values one after the other, a comma between each two
 * (0 when the first was not written as a value): their bytes, from the first `[` to the last `]`, are those values.
 */
function valueRun(entries: readonly LogEntry[], from: number): number {
  let prev = entries[from]!;
  if (!prev.lokiPrefix || !prev.lokiLine) return 0;
  let n = 1;
  for (let i = from + 1; i < entries.length; i++, n++) {
    const e = entries[i]!;
    const line = e.lokiLine;
    const p = prev.lokiLine!;
    if (!e.lokiPrefix || !line || line.buffer !== p.buffer || line.byteOffset - e.lokiPrefix !== p.byteOffset + p.length + 2) break;
    prev = e;
  }
  return n;
}

/** The structured metadata object of one entry, as JSON, or undefined when its record has none of the fields. */
function metadataOf(entry: LogEntry, fields: MetadataFields): string | undefined {
  const record = entryRecord(entry);
  const meta: Record<string, string> = {};
  let any = false;
  for (const { field, key } of fields) {
    const v = record[field];
    // W3C logs write `-` for an empty field: no metadata is better than a value that says nothing.
    if (v === undefined || v === null || v === '' || v === '-') continue;
    meta[key] = String(v);
    any = true;
  }
  return any ? JSON.stringify(meta) : undefined;
}

/** `c-ip` -> `c_ip`: structured metadata keys follow the label-name rules. */
export function metadataKey(field: string): string {
  const key = field.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[0-9]/.test(key) ? `_${key}` : key;
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
  /** The `service_name` stream label: what Grafana's Logs Drilldown lists the logs under. */
  serviceName?: string;
  /** Request bodies gzipped (`Content-Encoding: gzip`, which Loki's push API takes); default gzip. */
  compression?: 'gzip' | 'none';
  /** Record fields sent as structured metadata (Loki 3.0 and later; earlier versions refuse such pushes). */
  structuredMetadata?: readonly string[];
}

const gzipAsync = promisify(gzip);

/** Pushes batches to Grafana Loki's JSON push API. */
export class LokiSink implements LogSink {
  readonly name: string;
  readonly quotesRecords = true;
  private readonly url: string;
  private headers: Record<string, string> | undefined;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly labels: Readonly<Record<string, string>>;
  private readonly metadata: MetadataFields;

  constructor(private readonly options: LokiSinkOptions) {
    this.name = options.name;
    this.labels = { ...options.labels, ...(options.serviceName ? { service_name: options.serviceName } : {}) };
    this.metadata = (options.structuredMetadata ?? []).map((field) => ({ field, key: metadataKey(field) }));
    if (options.compression !== 'none') this.headers = { 'content-encoding': 'gzip' };
    this.ownsDispatcher = !options.dispatcher;
    this.dispatcher = options.dispatcher ?? createSinkAgent(options.tls);
    this.url = lokiPushUrl(options.url);
    this.headers ??= {};
    if (options.tenantId) this.headers['x-scope-orgid'] = options.tenantId;
    // Registered for the process: a receiver may quote them back in any form (what it answers is scrubbed of them).
    registerSecret(options.basicAuth?.password, options.basicAuth?.username);
    registerSecret(options.bearerToken);
    if (options.basicAuth) {
      const token = Buffer.from(`${options.basicAuth.username}:${options.basicAuth.password}`).toString('base64');
      this.headers.authorization = `Basic ${token}`;
    } else if (options.bearerToken) {
      this.headers.authorization = `Bearer ${options.bearerToken}`;
    }
  }

  /**
   * The request body: the push as JSON, gzipped unless compression is off. Compressed on libuv's thread pool, not on
   * the thread that serves /metrics, and while the batch before is on its way (the worker encodes ahead); level 1:
   * JSON log lines shrink about ten times already, and higher levels cost more CPU than the bytes they save are
   * worth here.
   */
  encode(entries: readonly LogEntry[]): Buffer | Promise<Buffer> {
    const json = encodeLokiPush(entries, this.labels, this.metadata);
    // One output chunk per 256 KB instead of 16 KB: each chunk is a call back into JavaScript on the event loop.
    return this.options.compression === 'none' ? json : gzipAsync(json, { level: 1, chunkSize: 256 * 1024 });
  }

  async send(entries: readonly LogEntry[], signal: AbortSignal, encoded?: Buffer): Promise<void> {
    const body = encoded ?? (await this.encode(entries));
    return httpPost({ url: this.url, headers: this.headers!, timeoutMs: this.options.timeoutMs, dispatcher: this.dispatcher }, body, 'application/json', signal);
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}
