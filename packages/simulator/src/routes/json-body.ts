import { wowzaError, type Reply } from '../reply.js';
import type { RequestContext } from '../router.js';

export type JsonBody = { ok: true; value: unknown } | { ok: false; reply: Reply };

/** A request body the REST API takes: `Content-Type: application/json` and valid JSON, else 415. */
export async function readJsonBody(ctx: RequestContext): Promise<JsonBody> {
  const type = String(ctx.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    return { ok: false, reply: wowzaError(415, `Unsupported Media Type: send the body as JSON with Content-Type: application/json${type ? ` (got ${type})` : ''}`) };
  }
  const raw = await ctx.readBody();
  try {
    return { ok: true, value: JSON.parse(raw.toString('utf8')) as unknown };
  } catch {
    return { ok: false, reply: wowzaError(415, 'Unsupported Media Type: the body is not valid JSON') };
  }
}
