import type { IncomingMessage, ServerResponse } from 'node:http';
import { access, type Tokens } from './access.js';
import { errorBody, type VideoErrorName } from './error-body.js';
import type { VideoFaults } from './faults.js';
import { listBody, type ListSettings } from './schedule-list.js';
import { PatchRefused } from './schedule-patch.js';
import type { ScheduleStore } from './schedule-store.js';

/**
 * The routes, as section 4 of test/fixtures/reference/wowza-video-schedules-v1.11.md lists them:
 *
 * | GET    | /schedules/{id} | 200 `{schedule}` |
 * | PATCH  | /schedules/{id} | 200 `{schedule}`; errors 401, 403, 404, 410, 422 |
 * | DELETE | /schedules/{id} | 204, no content |
 *
 * and, not in the reference, `GET /schedules` (docs/wowza-api-notes.md): 200 `{schedules: [...]}`, limited details
 * per item. Errors of GET and DELETE are "not shown": an unknown id is 404 here as for PATCH. 410 is documented
 * for PATCH without its meaning; here it is a PATCH of a schedule that was deleted (Gone).
 */

export const VIDEO_API_PATH = '/api/v1.11';

export interface VideoRouteDeps {
  store: ScheduleStore;
  faults: VideoFaults;
  tokens: Tokens;
  list: ListSettings;
  /** Counts requests by `METHOD route`, authorized or not. */
  count(key: string): void;
}

function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  if (body === undefined) {
    res.writeHead(status, headers).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)), ...headers }).end(text);
}

export function sendError(res: ServerResponse, name: VideoErrorName, message: string, headers: Record<string, string> = {}): void {
  const { status, body } = errorBody(name, message);
  send(res, status, body, headers);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function createVideoHandler(d: VideoRouteDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const rest = url.pathname.startsWith(VIDEO_API_PATH) ? url.pathname.slice(VIDEO_API_PATH.length) : undefined;
    const one = rest === undefined ? null : /^\/schedules\/([^/]+)$/.exec(rest);
    const route = rest === '/schedules' ? '/schedules' : one ? '/schedules/{id}' : url.pathname;
    const method = req.method ?? 'GET';
    d.count(`${method} ${route}`);

    const allowed = access(req.headers.authorization, method, d.tokens);
    if (allowed !== 'allowed') {
      req.resume();
      if (allowed === 'forbidden') sendError(res, 'forbidden', 'This token may read schedules but not change them.');
      else sendError(res, 'unauthorized', 'The access token is missing, invalid or expired.');
      return;
    }
    const limited = d.faults.takeRateLimit();
    if (limited) {
      req.resume();
      sendError(res, 'rate_limited', 'Too many requests.', limited.retryAfter === undefined ? {} : { 'retry-after': limited.retryAfter });
      return;
    }

    if (rest === '/schedules' && method === 'GET') {
      const body = listBody(d.store.summaries(), url.searchParams, d.list);
      send(res, 200, { ...body, schedules: body.schedules.map((s) => d.faults.apply(s)) });
      return;
    }
    if (one && (method === 'GET' || method === 'PATCH' || method === 'DELETE')) {
      let id: string;
      try {
        id = decodeURIComponent(one[1]!);
      } catch {
        req.resume();
        sendError(res, 'not_found', 'The requested resource could not be found.');
        return;
      }
      const schedule = d.store.get(id);
      if (!schedule) {
        req.resume();
        if (method === 'PATCH' && d.store.deleted(id)) sendError(res, 'gone', `The requested resource has been deleted (schedule ${id}).`);
        else sendError(res, 'not_found', `The requested resource could not be found (schedule ${id}).`);
        return;
      }
      if (method === 'GET') {
        send(res, 200, { schedule: d.faults.apply(schedule) });
        return;
      }
      if (method === 'DELETE') {
        req.resume();
        d.store.delete(id);
        send(res, 204);
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(await readBody(req));
      } catch {
        sendError(res, 'invalid', 'The body is not JSON.');
        return;
      }
      try {
        send(res, 200, { schedule: d.faults.apply(d.store.patch(id, body)) });
      } catch (err) {
        if (!(err instanceof PatchRefused)) throw err;
        sendError(res, 'invalid', err.message);
      }
      return;
    }
    req.resume();
    sendError(res, 'no_route', `No route ${method} ${url.pathname}.`);
  };
}
