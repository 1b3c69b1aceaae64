import { readFileSync } from 'node:fs';
import type { Dispatcher } from 'undici';
import { Agent, request } from '../../base/undici-core.js';
import { RequestDeadline } from '../../base/request-deadline.js';
import { redactUrl } from '../../base/redact.js';
import { scrubReceived } from '../../base/secret-scrubber.js';
import { parseRetryAfter } from './backoff.js';
import { DeliveryError } from './sink.js';

export interface HttpPostTarget {
  url: string;
  headers: Readonly<Record<string, string>>;
  timeoutMs: number;
  dispatcher: Dispatcher;
}

export interface SinkTls {
  /** PEM file with the CA that signed the receiver's certificate. */
  caFile?: string;
  /** Accept any certificate (test setups only). */
  insecureSkipVerify?: boolean;
}

/** A connection pool for one sink; throws naming the file when the CA cannot be read. */
export function createSinkAgent(tls: SinkTls = {}): Agent {
  let ca: Buffer | undefined;
  if (tls.caFile) {
    try {
      ca = readFileSync(tls.caFile);
    } catch (err) {
      throw new Error(`tls.ca_file: cannot read ${tls.caFile} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  return new Agent({
    connections: 4,
    keepAliveTimeout: 30_000,
    connect: { ...(ca ? { ca } : {}), rejectUnauthorized: !tls.insecureSkipVerify },
  });
}

/** Longest excerpt of a refusal body kept in errors and the dead-letter file. */
const BODY_EXCERPT = 300;

/**
 * POSTs a body and sorts the outcome for the retry logic: 2xx resolves; network errors, timeouts, 408,
 * 429 and 5xx are retryable (with `Retry-After` when sent); any other status is a refusal for good.
 * Messages name the URL without credentials or token parameters; header values never appear.
 */
export async function httpPost(target: HttpPostTarget, body: string | Buffer, contentType: string, signal: AbortSignal): Promise<void> {
  const where = redactUrl(target.url);
  // Tied to the caller's signal and a deadline, both released afterwards (the caller's signal lives as long
  // as the sink: nothing may pile up on it).
  const deadline = new RequestDeadline(target.timeoutMs, signal);
  try {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(target.url, {
        method: 'POST',
        headers: { ...target.headers, 'content-type': contentType },
        body,
        dispatcher: target.dispatcher,
        signal: deadline.signal,
        headersTimeout: target.timeoutMs,
        bodyTimeout: target.timeoutMs,
      });
    } catch (err) {
      if (signal.aborted) throw err;
      if (deadline.timedOut) throw new DeliveryError(`${where}: no answer within ${target.timeoutMs} ms`, true);
      throw new DeliveryError(`${where}: ${networkReason(err)}`, true);
    }
    await checkResponse(res, where, scrubber(target.headers));
  } finally {
    deadline.release();
  }
}

async function checkResponse(res: Dispatcher.ResponseData, where: string, scrub: (text: string) => string): Promise<void> {
  const status = res.statusCode;
  if (status >= 200 && status < 300) {
    await res.body.dump().catch(() => undefined);
    return;
  }
  const text = await readStart(res.body, 8 * 1024);
  // Scrubbed whole, then cut: a cut first could leave the start of a secret.
  const excerpt = scrubReceived(scrub(text)).replace(/\s+/g, ' ').trim().slice(0, BODY_EXCERPT);
  const message = `${where} answered HTTP ${status}${excerpt ? `: ${excerpt}` : ''}`;
  const retryable = status === 408 || status === 429 || status >= 500;
  const retryAfterMs = retryable ? parseRetryAfter(res.headers['retry-after']) : undefined;
  throw new DeliveryError(message, retryable, retryAfterMs === undefined ? { status } : { status, retryAfterMs });
}

/**
 * A receiver (or a proxy) may quote the request in its error page: the values of the headers sent
 * (Authorization, tokens in custom headers) and anything after an auth scheme are blanked; scrubReceived then
 * blanks every configured secret in every form (a receiver may decode the Basic header and quote the password).
 */
function scrubber(headers: Readonly<Record<string, string>>): (text: string) => string {
  const values = Object.entries(headers)
    .filter(([name]) => name.toLowerCase() !== 'content-type')
    .flatMap(([, v]) => [v, v.replace(/^\S+\s+/, '')])
    .filter((v) => v.length >= 4)
    .sort((a, b) => b.length - a.length);
  return (text) => values.reduce((t, v) => t.split(v).join('[REDACTED]'), text).replace(/\b(Basic|Bearer)\s+[A-Za-z0-9+/=._~-]+/gi, '$1 [REDACTED]');
}

/** The first `limit` bytes of a body (an error page may be huge); the rest is discarded. */
async function readStart(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= limit) break; // leaving the loop destroys the stream
    }
  } catch {
    // a body cut short still leaves the status to go by
  }
  return Buffer.concat(chunks).toString('utf8', 0, Math.min(size, limit));
}

function networkReason(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name does not resolve';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection reset';
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'connect timed out';
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'receiver too slow to answer';
    default:
      return (e.message ?? String(err)).replace(/\s+/g, ' ').slice(0, 200);
  }
}
