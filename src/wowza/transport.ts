import { readFileSync } from 'node:fs';
import type { Dispatcher } from 'undici';
import { Agent, request } from '../base/undici-core.js';

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

export class BodyTooLargeError extends Error {
  /** Set when the body was refused because the server's answers in flight together passed their budget. */
  constructor(readonly budgetBytes?: number) {
    super();
  }
}

/** Reads a body's bytes as they stream in, and says why the body is refused as soon as it can tell. */
export interface BodyGuard {
  /** Reads more bytes; the reason the body is refused, once it is. */
  refuse(bytes: Uint8Array): string | undefined;
}

/**
 * Counts how deep JSON arrays and objects nest while the bytes stream in (strings skipped), so that an answer nested
 * deeper than any API answer is refused at its first bytes, before it is buffered or parsed.
 */
export class JsonDepthGuard implements BodyGuard {
  private depth = 0;
  private inString = false;
  private escaped = false;
  constructor(readonly limit: number) {}

  refuse(bytes: Uint8Array): string | undefined {
    return this.exceeded(bytes) ? `JSON nested deeper than ${this.limit} levels (too deep to be an API answer)` : undefined;
  }

  /**
   * Reads more bytes; true once the nesting went past the limit. Inside a string it jumps to the next quote or
   * backslash with indexOf (native): a log page is almost all string, and a byte-by-byte loop over it took a tenth of
   * the event loop while a backlog drained.
   */
  exceeded(bytes: Uint8Array): boolean {
    const n = bytes.length;
    // The next quote and backslash at or after where the scan is (-1: none left in these bytes), found once each.
    let quote = -2;
    let backslash = -2;
    let i = 0;
    while (i < n) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          i++;
          continue;
        }
        if (quote !== -1 && quote < i) quote = bytes.indexOf(0x22, i);
        if (backslash !== -1 && backslash < i) backslash = bytes.indexOf(0x5c, i);
        if (backslash !== -1 && (quote === -1 || backslash < quote)) {
          this.escaped = true;
          i = backslash + 1;
        } else if (quote !== -1) {
          this.inString = false;
          i = quote + 1;
        } else return false; // the string goes on in the next bytes
        continue;
      }
      const c = bytes[i++]!;
      if (c === 0x22) this.inString = true;
      else if (c === 0x5b || c === 0x7b) {
        if (++this.depth > this.limit) return true;
      } else if (c === 0x5d || c === 0x7d) this.depth--;
    }
    return false;
  }
}

/** The body was refused by its guard while it streamed in (nested too deep, a name too long...): the message says why. */
export class RefusedBodyError extends Error {}

/**
 * Bytes of response bodies one server's requests may hold at once. Each request is capped on its own, but many in
 * flight at the cap would still add up (64 x 32 MiB is 2 GiB): a body that would pass the budget is refused.
 */
export class ByteBudget {
  private used = 0;
  constructor(readonly limit: number) {}
  take(n: number): boolean {
    if (this.used + n > this.limit) return false;
    this.used += n;
    return true;
  }
  give(n: number): void {
    this.used = Math.max(0, this.used - n);
  }
  get inUse(): number {
    return this.used;
  }
}

/**
 * One HTTP exchange with a deadline that covers headers and body, and a size cap enforced while the body
 * streams in (a Content-Length over the cap is refused before reading anything).
 */
export async function exchange(
  dispatcher: Dispatcher,
  url: URL,
  init: {
    method: string;
    headers: Record<string, string>;
    body?: string;
    signal: AbortSignal;
    maxBytes: number;
    budget?: ByteBudget;
    /** The guard of a body of this status, if any: XML caps apply to documents, not to a proxy's error page. */
    guard?: (status: number) => BodyGuard | undefined;
  },
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
    // undici emits the abort as an 'error' on the body: unheard, it would be an uncaught exception.
    res.body.on('error', () => undefined);
    res.body.destroy();
    throw new BodyTooLargeError();
  }
  const body = await readCapped(res.body, init.maxBytes, init.budget, init.guard?.(res.statusCode));
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
function readCapped(body: Dispatcher.ResponseData['body'], maxBytes: number, budget?: ByteBudget, guard?: BodyGuard): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (err: Error | undefined, value?: Buffer) => {
      if (settled) return;
      settled = true;
      // The bytes are the caller's now (or dropped): a parse that follows is bounded by maxBytes on its own.
      budget?.give(size);
      // The error listener stays: an 'error' emitted after this must not become an uncaught exception.
      body.off('data', onData).off('end', onEnd).off('close', onClose);
      if (err) reject(err);
      else resolve(value!);
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > maxBytes) {
        settle(new BodyTooLargeError());
        body.destroy();
        return;
      }
      const refused = guard?.refuse(chunk);
      if (refused) {
        settle(new RefusedBodyError(refused));
        body.destroy();
        return;
      }
      if (budget && !budget.take(chunk.length)) {
        settle(new BodyTooLargeError(budget.limit));
        body.destroy();
        return;
      }
      size += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => settle(undefined, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    const onError = (err: Error) => settle(err);
    // Destroyed without an error (and so without 'end'): the body was cut short.
    const onClose = () => settle(Object.assign(new Error('response body closed before its end'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    body.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}
