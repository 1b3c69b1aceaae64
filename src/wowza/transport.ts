import { readFileSync } from 'node:fs';
import type { Dispatcher } from 'undici';
import { Agent, request } from '../undici-core.js';

export interface TlsSettings {
  caFile?: string;
  insecureSkipVerify?: boolean;
}

export interface AgentSettings {
  /** Connection cap per origin; the scheduler's concurrency should not exceed it. */
  connections: number;
  tls?: TlsSettings;
}

/** One keep-alive pool per server, so polls reuse sockets instead of paying a handshake each time. */
export function createAgent(settings: AgentSettings): Agent {
  const ca = settings.tls?.caFile ? readFileSync(settings.tls.caFile) : undefined;
  return new Agent({
    connections: settings.connections,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 120_000,
    connect: {
      ...(ca ? { ca } : {}),
      rejectUnauthorized: !settings.tls?.insecureSkipVerify,
    },
  });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  contentType: string;
}

export class BodyTooLargeError extends Error {}

/**
 * One HTTP exchange with a deadline that covers headers and body, and a size cap enforced while the body
 * streams in (a Content-Length over the cap is refused before reading anything).
 */
export async function exchange(
  dispatcher: Dispatcher,
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal; maxBytes: number },
): Promise<RawResponse> {
  const res = await request(url, {
    dispatcher,
    method: init.method as Dispatcher.HttpMethod,
    headers: init.headers,
    body: init.body,
    signal: init.signal,
  });
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > init.maxBytes) {
    res.body.destroy();
    throw new BodyTooLargeError();
  }
  const body = await readCapped(res.body, init.maxBytes);
  const ct = res.headers['content-type'];
  return {
    status: res.statusCode,
    headers: res.headers,
    body,
    contentType: (Array.isArray(ct) ? ct[0] : ct) ?? '',
  };
}

/**
 * The whole body, refused as soon as it grows past `maxBytes`. Plain stream events rather than an async
 * iterator: a poll reads thousands of small bodies, and the iterator's promise per chunk is measurable.
 */
function readCapped(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (err: Error | undefined, value?: Buffer) => {
      if (settled) return;
      settled = true;
      // The error listener stays: an 'error' emitted after this must not become an uncaught exception.
      body.off('data', onData).off('end', onEnd).off('close', onClose);
      if (err) reject(err);
      else resolve(value!);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        settle(new BodyTooLargeError());
        body.destroy();
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => settle(undefined, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    const onError = (err: Error) => settle(err);
    // Destroyed without an error (and so without 'end'): the body was cut short.
    const onClose = () => settle(Object.assign(new Error('response body closed before its end'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    body.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}
