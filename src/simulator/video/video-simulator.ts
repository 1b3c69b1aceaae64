import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen } from '../http-server.js';
import { PatchRefused, ScheduleStore, type VideoSchedule } from './schedule-store.js';

/**
 * A loopback Wowza Video API (schedules, v1.11) for tests and the demo, answering as the reference shows
 * (../shared/reference/wowza-video-schedules-v1.11.md, section 4) and, where it is silent, as
 * shared/wowza-api.md says the service does:
 *
 * - GET `/schedules/{id}`: 200 `{schedule}`; PATCH: 200 `{schedule}`, 422 for a body it does not accept;
 *   DELETE: 204, no content. An unknown id: 404.
 * - GET `/schedules` (not in the reference): `{schedules: [...]}` with limited details per item; with
 *   `pageSize`, pages by `page`/`per_page` and adds a `pagination` object, as the service's other lists do.
 * - Errors: `{meta: {status, code, title, message, description, links}}` (section 7).
 * - Auth: `Authorization: Bearer <token>` (section 5 does not show it; wowza-api.md does). 401 otherwise.
 * - 429 with `Retry-After` on demand (rate limits are not in the reference; the header is HTTP's own).
 */

export const VIDEO_API_PATH = '/api/v1.11';

export interface VideoSimulatorOptions {
  token: string;
  schedules?: readonly VideoSchedule[];
  /** Page the list by this size, with a `pagination` object. Default: one answer, no pagination. */
  pageSize?: number;
  /** Answer the list with at most this many items and no pagination (a server that truncates silently). */
  truncateAt?: number;
  port?: number;
}

export interface VideoSimulator {
  /** The API base, e.g. `http://127.0.0.1:40123/api/v1.11`. */
  readonly url: string;
  readonly schedules: ScheduleStore;
  /** Requests by route (`GET /schedules/{id}`), authorized or not. */
  readonly requests: Map<string, number>;
  /** The next `count` requests answer 429 with `Retry-After: retryAfterSeconds`. */
  rateLimit(count: number, retryAfterSeconds: number): void;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  if (body === undefined) {
    res.writeHead(status, headers).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers }).end(text);
}

/** Section 7: the error body. `code` values are not in the reference; these follow the service's style. */
function error(res: ServerResponse, status: number, code: string, title: string, message: string, headers: Record<string, string> = {}): void {
  send(res, status, { meta: { status, code, title, message, description: message, links: [] } }, headers);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startVideoSimulator(o: VideoSimulatorOptions): Promise<VideoSimulator> {
  const store = new ScheduleStore(o.schedules ?? []);
  const requests = new Map<string, number>();
  let limited = 0;
  let retryAfter = 1;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const rest = url.pathname.startsWith(VIDEO_API_PATH) ? url.pathname.slice(VIDEO_API_PATH.length) : undefined;
    const one = rest === undefined ? null : /^\/schedules\/([^/]+)$/.exec(rest);
    const route = rest === '/schedules' ? '/schedules' : one ? '/schedules/{id}' : url.pathname;
    const method = req.method ?? 'GET';
    requests.set(`${method} ${route}`, (requests.get(`${method} ${route}`) ?? 0) + 1);

    if (req.headers.authorization !== `Bearer ${o.token}`) {
      req.resume();
      error(res, 401, 'ERR-401-InvalidToken', 'Invalid Token Error', 'The access token is missing, invalid or expired.');
      return;
    }
    if (limited > 0) {
      limited--;
      req.resume();
      error(res, 429, 'ERR-429-RateLimited', 'Rate Limit Error', 'Too many requests.', { 'retry-after': String(retryAfter) });
      return;
    }
    if (rest === '/schedules' && method === 'GET') {
      let items = store.summaries();
      if (o.truncateAt !== undefined) {
        send(res, 200, { schedules: items.slice(0, o.truncateAt) });
        return;
      }
      if (o.pageSize === undefined) {
        send(res, 200, { schedules: items });
        return;
      }
      const perPage = Math.min(Number(url.searchParams.get('per_page')) || o.pageSize, o.pageSize);
      const page = Math.max(1, Number(url.searchParams.get('page')) || 1);
      const total = items.length;
      items = items.slice((page - 1) * perPage, page * perPage);
      send(res, 200, { schedules: items, pagination: { page, per_page: perPage, total_pages: Math.max(1, Math.ceil(total / perPage)), total_records: total } });
      return;
    }
    if (one) {
      const id = decodeURIComponent(one[1]!);
      const schedule = store.get(id);
      if (!schedule) {
        req.resume();
        error(res, 404, 'ERR-404-RecordNotFound', 'Record Not Found Error', `The requested resource couldn't be found (schedule ${id}).`);
        return;
      }
      if (method === 'GET') {
        send(res, 200, { schedule });
        return;
      }
      if (method === 'DELETE') {
        store.delete(id);
        send(res, 204);
        return;
      }
      if (method === 'PATCH') {
        let body: unknown;
        try {
          body = JSON.parse(await readBody(req));
        } catch {
          error(res, 422, 'ERR-422-InvalidInteraction', 'Invalid Interaction Error', 'The body is not JSON.');
          return;
        }
        try {
          send(res, 200, { schedule: store.patch(id, body) });
        } catch (err) {
          if (!(err instanceof PatchRefused)) throw err;
          error(res, 422, 'ERR-422-InvalidInteraction', 'Invalid Interaction Error', err.message);
        }
        return;
      }
    }
    req.resume();
    error(res, 404, 'ERR-404-RouteNotFound', 'Route Not Found Error', `No route ${method} ${url.pathname}.`);
  };

  const listener = await listen({ host: '127.0.0.1', port: o.port ?? 0 }, (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) error(res, 500, 'ERR-500', 'Internal Error', 'The simulator failed.');
    });
  });
  return {
    url: `${listener.url}${VIDEO_API_PATH}`,
    schedules: store,
    requests,
    rateLimit(count, seconds) {
      limited = count;
      retryAfter = seconds;
    },
    close: () => listener.close(),
  };
}
