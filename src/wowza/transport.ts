import { readFileSync } from 'node:fs';
import { Agent, request, type Dispatcher } from 'undici';

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
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > init.maxBytes) {
      res.body.destroy();
      throw new BodyTooLargeError();
    }
    chunks.push(chunk);
  }
  const ct = res.headers['content-type'];
  return {
    status: res.statusCode,
    headers: res.headers,
    body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size),
    contentType: (Array.isArray(ct) ? ct[0] : ct) ?? '',
  };
}
