import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { toXml } from './xml.js';

/** What a route answers, before content negotiation turns it into bytes. */
export type Reply =
  /** A REST resource: JSON when asked for, XML (root element `root`) otherwise. */
  | { kind: 'resource'; status: number; root: string; body: object }
  /** The Wowza error envelope (`{"success":false,"message":...,"code":"404",...}`). */
  | { kind: 'error'; status: number; message: string; headers?: OutgoingHttpHeaders }
  /** Bytes sent as they are (HTML pages, plain text, broken bodies). */
  | { kind: 'raw'; status: number; contentType: string; body: string | Buffer; headers?: OutgoingHttpHeaders };

export const resource = (root: string, body: object, status = 200): Reply => ({ kind: 'resource', status, root, body });
export const wowzaError = (status: number, message: string, headers?: OutgoingHttpHeaders): Reply => ({ kind: 'error', status, message, headers });

export interface RenderSettings {
  json: boolean;
  /** `4.9.4`, as the error envelope's `wowzaServer`. */
  wowzaServer: string;
  /** The `Server` response header. */
  serverHeader: string;
}

export interface EncodedReply {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

export const JSON_TYPE = 'application/json;charset=UTF-8';
export const XML_TYPE = 'text/xml;charset=UTF-8';

/** True when the Accept header asks for JSON (and does not refuse it with q=0). */
export function wantsJson(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((part) => {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (type !== 'application/json') return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

export function errorEnvelope(status: number, message: string, wowzaServer: string) {
  return { success: false, message, code: String(status), data: null, wowzaServer };
}

export function htmlPage(status: number, reason: string, detail = ''): string {
  const title = `${status} ${reason}`;
  return `<html>\n<head><title>${title}</title></head>\n<body>\n<h1>${title}</h1>${detail ? `\n<p>${detail}</p>` : ''}\n</body>\n</html>\n`;
}

export function encodeReply(reply: Reply, s: RenderSettings): EncodedReply {
  const base: OutgoingHttpHeaders = { server: s.serverHeader };
  if (reply.kind === 'raw') {
    return { status: reply.status, headers: { ...base, 'content-type': reply.contentType, ...reply.headers }, body: Buffer.from(reply.body) };
  }
  const [root, body] = reply.kind === 'resource' ? [reply.root, reply.body] : ['WMSResponse', errorEnvelope(reply.status, reply.message, s.wowzaServer)];
  const extra = reply.kind === 'error' ? reply.headers : undefined;
  if (s.json) return { status: reply.status, headers: { ...base, 'content-type': JSON_TYPE, ...extra }, body: Buffer.from(JSON.stringify(body)) };
  return { status: reply.status, headers: { ...base, 'content-type': XML_TYPE, ...extra }, body: Buffer.from(toXml(root, body)) };
}

export function writeEncoded(res: ServerResponse, e: EncodedReply): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(e.status, { ...e.headers, 'content-length': e.body.length });
  res.end(e.body);
}
