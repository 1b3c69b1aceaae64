import { sleep } from '../base/abortable-sleep.js';
import type { z } from 'zod';
import { ConfigError, formatPath } from '../config/errors.js';
import { BUILD } from '../base/build-info.js';
import {
  VideoAbortedError,
  VideoHttpError,
  VideoNetworkError,
  VideoRateLimitError,
  VideoTimeoutError,
  VideoTooLargeError,
  VideoUnparsableError,
  type VideoErrorMeta,
} from './errors.js';
import { hasNextPage, type Pagination } from './pagination.js';
import { parseRetryAfter } from './retry-after.js';
import { RequestDeadline } from '../base/request-deadline.js';
import { scrubReceived } from '../base/secret-scrubber.js';
import { ScheduleEnvelopeSchema, ScheduleListSchema, type Schedule, type ScheduleSummary } from './schedule.js';
import { validateSchedulePatch, type SchedulePatchInput } from './schedule-patch.js';
import { isUsableToken } from '../config/video-token.js';

export const DEFAULT_VIDEO_URL = 'https://api.video.wowza.com/api/v1.11';

/** Called once per HTTP request sent (retries included); `code` is the status or an error kind. */
export type VideoRequestObserver = (endpoint: string, code: string, seconds: number) => void;

export interface VideoClientOptions {
  /** API base, e.g. `https://api.video.wowza.com/api/v1.11`. */
  url: string;
  /** JWT access token, sent as `Authorization: Bearer`. Never logged nor put in a message. */
  token: string;
  /** Deadline per HTTP request, body included. */
  timeoutMs?: number;
  /** Retries after HTTP 429 before giving up. */
  maxRetries?: number;
  /** A 429 asking for a longer wait than this fails at once instead of stalling the caller. */
  maxRetryDelayMs?: number;
  /** Page size for the schedule list (the API allows up to 1000). */
  perPage?: number;
  /** Upper bound on pages walked, so a server that never says "last page" cannot loop us forever. */
  maxPages?: number;
  /** Largest response body accepted. */
  maxResponseBytes?: number;
  onRequest?: VideoRequestObserver;
  /** Waits between retries; replaceable so tests need not sleep. Rejects or resolves early on abort. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Clock for `Retry-After` dates. */
  now?: () => number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

interface RequestSpec {
  method: 'GET' | 'PATCH' | 'DELETE';
  /** Path template for metrics, e.g. `/schedules/{id}`. */
  endpoint: string;
  /** Concrete path below the base, e.g. `/schedules/abc123`. */
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal;
}

interface Answer {
  status: number;
  text: string;
}


/** A short, tag-free, single-line excerpt of a non-JSON body (HTML error pages from proxies, plain text). */
function excerpt(text: string): string | undefined {
  // The head is enough for a message, and bounds the regex work on a large body.
  const flat = text
    .slice(0, 64 * 1024)
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (flat === '') return undefined;
  return flat.length > 200 ? `${flat.slice(0, 200)}...` : flat;
}

/** `GET /schedules`, every page walked. */
export interface ScheduleListing {
  schedules: ScheduleSummary[];
  /** Why the list looks cut short (schedules beyond it may be missing); undefined when it looks complete. */
  truncated?: string;
}

/** Whether the walk that stopped at `page` looks cut short, and why. */
function truncation(p: Pagination | null | undefined, page: number, collected: number, lastPage: number, perPage: number): string | undefined {
  if (!p) return lastPage >= perPage ? `the list came back exactly full (${lastPage}, per_page ${perPage}) without pagination` : undefined;
  if (p.total_records !== undefined && collected < p.total_records) return `${collected} schedules read, the pagination counts ${p.total_records}`;
  if (p.total_pages !== undefined && page < p.total_pages) return `the list ended at page ${page}, the pagination counts ${p.total_pages} pages`;
  return undefined;
}

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** Typed calls to the Wowza Video schedules API. */
export class VideoClient {
  readonly baseUrl: string;
  // A private field: the token cannot surface through JSON.stringify, util.inspect or a logged client.
  readonly #token: string;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;
  private readonly perPage: number;
  private readonly maxPages: number;
  private readonly maxResponseBytes: number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly now: () => number;
  private readonly onRequest: VideoRequestObserver | undefined;
  /**
   * Epoch ms (on `now`) before which no request is sent: the latest wait a 429 asked for. Shared by every call
   * of this client, so the requests in flight beside the limited one, and the next poll, wait too instead of
   * drawing more 429s. Rate limits are not in the reference (section 8: "not shown"); `Retry-After` is HTTP's.
   */
  private notBefore = 0;

  // The options object is not kept: it holds the token.
  constructor(options: VideoClientOptions) {
    let base: URL;
    try {
      base = new URL(options.url);
    } catch {
      throw new ConfigError(`video.url: "${options.url}" is not a URL`);
    }
    if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new ConfigError(`video.url: must be http(s), not ${base.protocol}`);
    if (base.username || base.password) throw new ConfigError('video.url: must not contain credentials; the token goes in video.token-file or WOWZA_VIDEO_TOKEN');
    if (base.search || base.hash) throw new ConfigError('video.url: must not have a query or fragment');
    if (!isUsableToken(options.token)) throw new ConfigError('video token: empty or contains whitespace or control characters');
    this.baseUrl = base.href.replace(/\/+$/, '');
    this.#token = options.token;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxRetries = options.maxRetries ?? 3;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.perPage = options.perPage ?? 1000;
    this.maxPages = options.maxPages ?? 100;
    this.maxResponseBytes = options.maxResponseBytes ?? 16 * 1024 * 1024;
    this.sleep = options.sleep ?? sleep;
    this.now = options.now ?? Date.now;
    this.onRequest = options.onRequest;
  }

  /** Every schedule of the account (summaries), following pagination while the API shows there is more. */
  async listSchedules(opts: CallOptions = {}): Promise<ScheduleSummary[]> {
    return (await this.listSchedulePages(opts)).schedules;
  }

  /**
   * The list and, when it looks cut short, why. Pagination is not in the reference (it has no list endpoint at
   * all); the service's other lists page with `page`/`per_page` and a `pagination` object, so that is followed
   * when present. A last page that came back exactly full without any `pagination` may have had more behind it,
   * and so may a walk that ended with fewer schedules than its `pagination` counts: the caller says so.
   */
  async listSchedulePages(opts: CallOptions = {}): Promise<ScheduleListing> {
    const out: ScheduleSummary[] = [];
    const seen = new Set<string>();
    for (let page = 1; ; page++) {
      const spec: RequestSpec = {
        method: 'GET',
        endpoint: '/schedules',
        path: '/schedules',
        query: { page: String(page), per_page: String(this.perPage) },
        signal: opts.signal,
      };
      const body = this.parse(spec, await this.send(spec), ScheduleListSchema);
      let fresh = 0;
      for (const s of body.schedules) {
        if (seen.has(s.id)) continue;
        seen.add(s.id);
        out.push(s);
        fresh++;
      }
      const more = hasNextPage({
        requestedPage: page,
        requestedPerPage: this.perPage,
        received: body.schedules.length,
        fresh,
        collected: out.length,
        pagination: body.pagination,
      });
      if (!more) return { schedules: out, truncated: truncation(body.pagination, page, out.length, body.schedules.length, this.perPage) };
      if (page >= this.maxPages) {
        throw new VideoUnparsableError(this.call(spec), `the list did not end after ${this.maxPages} pages of ${this.perPage}`);
      }
    }
  }

  async getSchedule(id: string, opts: CallOptions = {}): Promise<Schedule> {
    const spec: RequestSpec = { method: 'GET', endpoint: '/schedules/{id}', path: this.schedulePath(id), signal: opts.signal };
    return this.parse(spec, await this.send(spec), ScheduleEnvelopeSchema).schedule;
  }

  /**
   * Changes the given fields. The patch is validated first (VideoInputError, nothing sent): `state` is
   * refused, times are sent as `YYYY-MM-DD HH:MM:SS` UTC.
   */
  async updateSchedule(id: string, patch: SchedulePatchInput, opts: CallOptions = {}): Promise<Schedule> {
    const path = this.schedulePath(id);
    const body = { schedule: validateSchedulePatch(patch as Record<string, unknown>) };
    const spec: RequestSpec = { method: 'PATCH', endpoint: '/schedules/{id}', path, body, signal: opts.signal };
    return this.parse(spec, await this.send(spec), ScheduleEnvelopeSchema).schedule;
  }

  async deleteSchedule(id: string, opts: CallOptions = {}): Promise<void> {
    const spec: RequestSpec = { method: 'DELETE', endpoint: '/schedules/{id}', path: this.schedulePath(id), signal: opts.signal };
    await this.send(spec);
  }

  private schedulePath(id: string): string {
    if (typeof id !== 'string' || id.trim() === '') throw new ConfigError('schedule id: must not be empty');
    return `/schedules/${encodeURIComponent(id.trim())}`;
  }

  private call(spec: RequestSpec): string {
    return `${spec.method} ${spec.path}`;
  }

  /**
   * Removes the token (in any form, with every other secret of the process) from text that came from elsewhere (a
   * server echoing a header, an error's detail).
   */
  private scrub(text: string): string {
    return scrubReceived(text, { own: { password: this.#token } });
  }

  private parse<T extends z.ZodType>(spec: RequestSpec, answer: Answer, schema: T): z.output<T> {
    let json: unknown;
    try {
      json = JSON.parse(answer.text);
    } catch {
      const text = excerpt(this.scrub(answer.text));
      throw new VideoUnparsableError(this.call(spec), `HTTP ${answer.status} body is not JSON${text ? `: ${text}` : ''}`, answer.status);
    }
    const result = schema.safeParse(json);
    if (!result.success) {
      const issues = result.error.issues.slice(0, 5).map((i) => `${formatPath(i.path)}: ${i.message}`);
      const more = result.error.issues.length > 5 ? ` (and ${result.error.issues.length - 5} more)` : '';
      throw new VideoUnparsableError(this.call(spec), this.scrub(issues.join('; ') + more), answer.status);
    }
    return result.data;
  }

  /** Sends one request, retrying on 429 as the API asks; returns a 2xx answer or throws. */
  private async send(spec: RequestSpec): Promise<Answer> {
    const call = this.call(spec);
    const url = new URL(this.baseUrl + spec.path);
    for (const [k, v] of Object.entries(spec.query ?? {})) url.searchParams.set(k, v);
    const headers: Record<string, string> = {
      Accept: 'application/json',
      Authorization: `Bearer ${this.#token}`,
      'User-Agent': `wowza-exporter/${BUILD.version}`,
    };
    if (spec.body !== undefined) headers['Content-Type'] = 'application/json';
    const payload = spec.body === undefined ? undefined : JSON.stringify(spec.body);

    for (let attempt = 0; ; attempt++) {
      await this.waitForRateLimit(call, spec.signal);
      const answer = await this.exchange(spec, call, url, headers, payload);
      if (answer.status >= 200 && answer.status < 300) return answer;
      if (answer.status >= 300 && answer.status < 400) {
        throw new VideoHttpError(call, answer.status, {}, undefined, `the API redirected${answer.location ? ` to ${answer.location}` : ''}; check the video URL`);
      }
      const { meta, text } = this.errorBody(answer.text);
      if (answer.status !== 429) throw new VideoHttpError(call, answer.status, meta, text);

      const now = this.now();
      const asked = parseRetryAfter(answer.retryAfter, now);
      // Without Retry-After: 1 s, 2 s, 4 s ... within the same bound. Either way every call of this client waits.
      this.notBefore = Math.max(this.notBefore, now + (asked ?? Math.min(1000 * 2 ** attempt, this.maxRetryDelayMs)));
      if (attempt >= this.maxRetries) {
        throw new VideoRateLimitError(call, meta, text, `still HTTP 429 after ${this.maxRetries} ${this.maxRetries === 1 ? 'retry' : 'retries'}`);
      }
      if (asked !== undefined && asked > this.maxRetryDelayMs) {
        throw new VideoRateLimitError(call, meta, text, `asked to wait ${Math.ceil(asked / 1000)} s, longer than the ${this.maxRetryDelayMs / 1000} s this client waits`);
      }
    }
  }

  /**
   * Holds a request until the wait the API last asked for has passed. A wait longer than this client's bound
   * fails at once, without sending (a later call, e.g. the next poll, tries again once the time has come).
   */
  private async waitForRateLimit(call: string, signal: AbortSignal | undefined): Promise<void> {
    const wait = this.notBefore - this.now();
    if (wait <= 0) return;
    if (wait > this.maxRetryDelayMs) {
      throw new VideoRateLimitError(call, {}, undefined, `not sent: the API asked (Retry-After) not to be called before ${new Date(this.notBefore).toISOString()}`);
    }
    await this.sleep(wait, signal);
    if (signal?.aborted) throw new VideoAbortedError(call);
  }

  /** One HTTP round trip within the deadline, body read and size-bounded. */
  private async exchange(
    spec: RequestSpec,
    call: string,
    url: URL,
    headers: Record<string, string>,
    payload: string | undefined,
  ): Promise<Answer & { retryAfter: string | null; location?: string }> {
    if (spec.signal?.aborted) throw new VideoAbortedError(call);
    const started = performance.now();
    const deadline = new RequestDeadline(this.timeoutMs, spec.signal);
    const observe = (code: string) => this.onRequest?.(spec.endpoint, code, (performance.now() - started) / 1000);
    try {
      const res = await fetch(url, { method: spec.method, headers, body: payload, signal: deadline.signal, redirect: 'manual' });
      const text = await this.readBody(res, call);
      observe(String(res.status));
      const location = res.headers.get('location');
      return {
        status: res.status,
        text,
        retryAfter: res.headers.get('retry-after'),
        location: location ? this.scrub(location.split('?')[0]!) : undefined,
      };
    } catch (err) {
      if (err instanceof VideoTooLargeError) {
        observe(err.kind);
        throw err;
      }
      if (spec.signal?.aborted) {
        observe('aborted');
        throw new VideoAbortedError(call);
      }
      if (deadline.timedOut) {
        observe('timeout');
        throw new VideoTimeoutError(call, this.timeoutMs);
      }
      observe('network');
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const detail = cause?.code ?? cause?.message ?? (err as Error).message ?? String(err);
      throw new VideoNetworkError(call, url.origin, this.scrub(String(detail)));
    } finally {
      deadline.release();
    }
  }

  private async readBody(res: Response, call: string): Promise<string> {
    const declared = Number(res.headers.get('content-length'));
    if (declared > this.maxResponseBytes) {
      await res.body?.cancel().catch(() => {});
      throw new VideoTooLargeError(call, this.maxResponseBytes);
    }
    if (!res.body) return '';
    const reader = res.body.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > this.maxResponseBytes) {
        await reader.cancel().catch(() => {});
        throw new VideoTooLargeError(call, this.maxResponseBytes);
      }
      chunks.push(value);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  /** The error envelope's fields, or a short excerpt of whatever else came back; all scrubbed. */
  private errorBody(text: string): { meta: VideoErrorMeta; text?: string } {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { meta: {}, text: excerpt(this.scrub(text)) };
    }
    const obj = (json && typeof json === 'object' ? json : {}) as Record<string, unknown>;
    const meta = (obj.meta && typeof obj.meta === 'object' ? obj.meta : undefined) as Record<string, unknown> | undefined;
    if (meta) {
      const clean = (v: unknown) => {
        const s = str(v);
        return s === undefined ? undefined : this.scrub(s);
      };
      const status = Number(meta.status);
      return {
        meta: {
          status: Number.isInteger(status) ? status : undefined,
          code: clean(meta.code),
          title: clean(meta.title),
          message: clean(meta.message),
          description: clean(meta.description),
        },
      };
    }
    // Not the documented envelope: take a message-like field if there is one, else the raw text.
    const message = str(obj.message) ?? str(obj.error) ?? str(obj.error_description);
    return { meta: {}, text: excerpt(this.scrub(message ?? text)) };
  }
}
