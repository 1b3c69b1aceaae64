import type { Dispatcher } from 'undici';
import { entryDocument, type LogEntry } from '../transform/entry.js';
import { createSinkAgent, httpPost, type SinkTls } from './http-post.js';
import { Utf8Builder } from '../../base/utf8-builder.js';
import { registerSecret } from '../../base/secret-scrubber.js';
import type { LogSink } from './sink.js';

export interface HttpSinkOptions {
  name: string;
  url: string;
  timeoutMs: number;
  tls?: SinkTls;
  /** Connection pool to use instead of a private one (closed by its owner, not by the sink). */
  dispatcher?: Dispatcher;
  /** Extra request headers (may hold credentials: never logged). */
  headers?: Readonly<Record<string, string>>;
  bearerToken?: string;
}

/** Headers whose values are credentials (any header's value is blanked in the sink's own answers: http-post.ts). */
const CREDENTIAL_HEADER = /auth|token|key|secret|passw|cookie|session|signature/i;

/**
 * A credential header's value, without its scheme, and the password of a Basic one, registered for the process: a
 * receiver may quote them back in any form. Values under 4 characters would blank unrelated text everywhere.
 */
function registerHeaderSecret(value: string): void {
  const credentials = value.replace(/^(?:Basic|Bearer|Digest|Token)\s+/i, '');
  for (const v of [value, credentials]) if (v.length >= 4) registerSecret(v);
  if (/^Basic\s/i.test(value)) {
    const decoded = Buffer.from(credentials, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon >= 0 && decoded.length - colon > 4) registerSecret(decoded.slice(colon + 1), decoded.slice(0, colon));
  }
}

/** POSTs each batch as a JSON array of records to a URL (a webhook, Vector's http source, Logstash...). */
export class HttpSink implements LogSink {
  readonly name: string;
  private readonly headers: Record<string, string>;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;

  constructor(private readonly options: HttpSinkOptions) {
    this.name = options.name;
    this.ownsDispatcher = !options.dispatcher;
    this.dispatcher = options.dispatcher ?? createSinkAgent(options.tls);
    this.headers = {};
    for (const [k, v] of Object.entries(options.headers ?? {})) {
      this.headers[k.toLowerCase()] = v;
      if (CREDENTIAL_HEADER.test(k)) registerHeaderSecret(v);
    }
    registerSecret(options.bearerToken);
    if (options.bearerToken) this.headers.authorization = `Bearer ${options.bearerToken}`;
  }

  encode(entries: readonly LogEntry[]): Buffer {
    const out = new Utf8Builder().add('[');
    entries.forEach((e, i) => {
      if (i > 0) out.add(',');
      out.add(entryDocument(e));
    });
    return out.add(']').toBuffer();
  }

  send(entries: readonly LogEntry[], signal: AbortSignal, encoded?: Buffer): Promise<void> {
    const body = encoded ?? this.encode(entries);
    return httpPost({ url: this.options.url, headers: this.headers, timeoutMs: this.options.timeoutMs, dispatcher: this.dispatcher }, body, 'application/json', signal);
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}
