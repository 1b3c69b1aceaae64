import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import type { ExpectedStream } from './expected-stream.js';
import { Authenticator, type AuthMode, type ChallengeKind, type DigestSession } from './auth.js';
import { ENDPOINT_MAX_BYTES, EP, fillPath, MAX_JSON_DEPTH } from './endpoints.js';
import {
  WowzaAbortedError,
  WowzaAuthError,
  WowzaError,
  WowzaHttpError,
  WowzaNetworkError,
  WowzaTimeoutError,
  WowzaTooLargeError,
  WowzaUnparsableError,
  type CallSite,
  type ErrorPage,
} from './errors.js';
import { isManagerPage } from './failure-advice.js';
import type { StreamSessions } from './connection-counts.js';
import { RequestDeadline } from '../base/request-deadline.js';
import { redactUrl } from '../base/redact.js';
import { scrubReceived } from '../base/secret-scrubber.js';
import {
  ApplicationList,
  CurrentStats,
  ErrorBody,
  InstanceList,
  MapEntryList,
  StreamRecorderList,
  LogFileList,
  LogPageBody,
  LogTypeList,
  MachineCurrent,
  ServerStatus,
  VHostList,
} from './schemas.js';
import { apiUrl } from './api-url.js';
import { BodyTooLargeError, ByteBudget, createAgent, exchange, JsonDepthGuard, RefusedBodyError, type TlsSettings } from './transport.js';
import { XmlGuard } from './xml-guard.js';
import { answerParser } from './answer-parser.js';
import { DEFAULT_MAX_LIST_ITEMS } from './list-cap.js';

export interface WowzaTarget {
  /** Configured server name: the `server` label. */
  name: string;
  /** Base URL, e.g. `http://127.0.0.1:8087`. */
  url: string;
  username?: string;
  password?: string;
  auth: AuthMode;
  timeoutMs: number;
  maxResponseBytes: number;
  /** Items one list of an answer may hold; the rest are left out and reported (default DEFAULT_MAX_LIST_ITEMS). */
  maxListItems?: number;
  tls?: TlsSettings;
  /** The `{serverName}` path segment, `_defaultServer_` in practice. */
  serverName: string;
  /** Connection cap for this server's pool. */
  connections: number;
  /** The server's `HTTPConnectionCountsXML` provider (`http://host:8086/connectioncounts`), when viewers are read there. */
  connectionCountsUrl?: string;
  /** No connectioncounts_url was set (nor `off`): the default provider is looked for, and used when it answers. */
  connectionCountsAuto?: boolean;
  /** Labels added to every series of this server (from its target file). */
  labels?: Readonly<Record<string, string>>;
  /** Streams that must always be live: exported as wowza_stream_expected whatever the server says. */
  expectedStreams?: readonly ExpectedStream[];
  /** Zone of its log lines without a `tz` column, over the one their file's header names (servers[].log_time_zone). */
  logTimeZone?: string;
}

/** Called once per HTTP request sent (retries included); `code` is the status or an error kind. */
export type RequestObserver = (endpoint: string, code: string, seconds: number) => void;

export interface LogQueryParams {
  startOffset?: number;
  lineCount?: number;
  filter?: string[];
  search?: string;
  regexSearch?: string;
  head?: number;
  tail?: number;
  startDate?: number;
  endDate?: number;
}

const MAX_ATTEMPTS = 3;

/** The `endpoint` label of connectioncounts requests. */
export const CONNECTION_COUNTS_ENDPOINT = '/connectioncounts';

/** Typed calls to the WSE REST API for one server. */
export class WowzaClient {
  /** The REST API's authentication; other origins (the connectioncounts provider) each have their own. */
  readonly auth: Authenticator;
  private readonly authByOrigin = new Map<string, Authenticator>();
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly base: URL;
  private readonly budget: ByteBudget;
  private restCount = 0;

  constructor(
    readonly target: WowzaTarget,
    private readonly options: {
      onRequest?: RequestObserver;
      dispatcher?: Dispatcher;
      /** A 401 the server answered, by kind. */
      onChallenge?: (kind: ChallengeKind) => void;
      /** An answer had lists longer than max_list_items: `dropped` items were left out. */
      onListCapped?: (endpoint: string, dropped: number, max: number) => void;
    } = {},
  ) {
    this.base = new URL(target.url);
    // Credentials in the URL would end up in logs and labels; they belong in username/password_file.
    if (this.base.username || this.base.password) {
      throw new Error(`server ${target.name}: put credentials in username/password_file, not in the URL`);
    }
    this.auth = new Authenticator(target.auth, target.username, target.password);
    this.authByOrigin.set(this.base.origin, this.auth);
    // Twice the biggest single answer, and never less than 64 MiB: room for a large list beside the small answers.
    this.budget = new ByteBudget(Math.max(2 * target.maxResponseBytes, 64 * 1024 * 1024));
    this.ownsDispatcher = !options.dispatcher;
    this.dispatcher = options.dispatcher ?? createAgent({ connections: target.connections, tls: target.tls });
  }

  get name(): string {
    return this.target.name;
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  machineCurrent(signal?: AbortSignal) {
    return this.get(EP.machineCurrent, {}, MachineCurrent, signal);
  }
  serverStatus(signal?: AbortSignal) {
    return this.get(EP.serverStatus, {}, ServerStatus, signal);
  }
  vhosts(signal?: AbortSignal) {
    return this.get(EP.vhosts, {}, VHostList, signal);
  }
  vhostCurrent(vhost: string, signal?: AbortSignal) {
    return this.get(EP.vhostCurrent, { vhost }, CurrentStats, signal);
  }
  applications(vhost: string, signal?: AbortSignal) {
    return this.get(EP.applications, { vhost }, ApplicationList, signal);
  }
  applicationCurrent(vhost: string, app: string, signal?: AbortSignal) {
    return this.get(EP.applicationCurrent, { vhost, app }, CurrentStats, signal);
  }
  instances(vhost: string, app: string, signal?: AbortSignal) {
    return this.get(EP.instances, { vhost, app }, InstanceList, signal);
  }
  streamCurrent(vhost: string, app: string, instance: string, stream: string, signal?: AbortSignal) {
    return this.get(EP.streamCurrent, { vhost, app, instance, stream }, CurrentStats, signal);
  }
  streamRecorders(vhost: string, app: string, instance: string, signal?: AbortSignal) {
    return this.get(EP.streamRecorders, { vhost, app, instance }, StreamRecorderList, signal);
  }
  mapEntries(vhost: string, app: string, signal?: AbortSignal) {
    return this.get(EP.mapEntries, { vhost, app }, MapEntryList, signal);
  }
  async logTypes(signal?: AbortSignal): Promise<string[]> {
    const body = await this.get(EP.logTypes, {}, LogTypeList, signal);
    return body.serverLogType.filter((t) => t !== '');
  }
  logFiles(order: 'newestFirst' | 'oldestFirst', signal?: AbortSignal) {
    return this.get(EP.logFiles, {}, LogFileList, signal, { order });
  }
  logPage(logType: string, q: LogQueryParams, signal?: AbortSignal) {
    return this.get(EP.logCurrent, { logType }, LogPageBody, signal, logQuery(q));
  }
  logFile(logName: string, q: LogQueryParams, signal?: AbortSignal) {
    const { startDate: _s, endDate: _e, ...rest } = q; // date bounds only apply to /logs/{logType}
    return this.get(EP.logFile, { logName }, LogPageBody, signal, logQuery(rest));
  }

  /**
   * Every stream's viewer sessions from the connectioncounts provider (another port of the same server, the
   * same credentials), in the flat form, which costs one element per stream.
   */
  async connectionCounts(signal?: AbortSignal): Promise<Map<string, StreamSessions>> {
    if (!this.target.connectionCountsUrl) throw new Error(`server ${this.target.name} has no connectioncounts_url`);
    const url = new URL(this.target.connectionCountsUrl);
    if (url.search === '') url.search = '?flat';
    const site: CallSite = { server: this.target.name, endpoint: CONNECTION_COUNTS_ENDPOINT, url: redactUrl(url.toString()) };
    const raw = await this.send('GET', url, site, signal, undefined, 'text/xml');
    // The XML parser is loaded with the first document: most servers have no connectioncounts provider.
    const { parseConnectionCounts } = await import('./connection-counts.js');
    const maxBytes = this.maxBytesFor(site.endpoint);
    try {
      // The answer passed an XmlGuard as it arrived (send): the parse need not read it again for the caps.
      return await parseConnectionCounts(raw.body, { signal, maxBytes, guarded: true });
    } catch (err) {
      // The poll's deadline, or a shutdown, stopped the parse between two of its slices.
      if (signal?.aborted) throw isTimeout(signal.reason) ? new WowzaTimeoutError(site, this.target.timeoutMs, 'before the poll deadline (its document was still being read)') : new WowzaAbortedError(site, 'while its document was read');
      if ((err as { tooLarge?: unknown }).tooLarge === true) throw new WowzaTooLargeError(site, maxBytes);
      throw new WowzaUnparsableError(site, scrubCredentials((err as Error).message, this.target)!);
    }
  }

  /** GET a templated endpoint and validate the JSON body against its schema. */
  get<S extends z.ZodType>(
    endpoint: string,
    values: Record<string, string>,
    schema: S,
    signal?: AbortSignal,
    query?: Record<string, string>,
  ): Promise<z.infer<S>> {
    return this.call('GET', endpoint, values, schema, { signal, query });
  }

  /** Any method on a templated endpoint; a JSON body is sent with `Content-Type: application/json`. */
  async call<S extends z.ZodType>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    endpoint: string,
    values: Record<string, string>,
    schema: S,
    opts: { signal?: AbortSignal; query?: Record<string, string>; body?: unknown } = {},
  ): Promise<z.infer<S>> {
    const path = fillPath(endpoint, { server: this.target.serverName, ...values });
    const url = apiUrl(this.base, path);
    for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
    const site: CallSite = { server: this.target.name, endpoint, url: redactUrl(url.toString()) };
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const raw = await this.send(method, url, site, opts.signal, body);
    const notJson = notJsonReason(raw.body, raw.contentType);
    if (notJson) {
      // XML that is no web page is what WSE answers when the Accept header was dropped on the way: Wowza answered.
      const wowzaXml = !isWebPage(raw.body, raw.contentType) && raw.body.toString('utf8', 0, 64).trimStart().startsWith('<');
      if (wowzaXml) this.restAnswered();
      throw new WowzaUnparsableError(site, notJson, wowzaXml);
    }
    const parsed = await this.parseJson(raw.body, schema, site);
    this.restAnswered();
    return parsed;
  }

  /**
   * The answer's JSON, its lists cut to max_list_items, validated: on the parser's thread when it is big (the event
   * loop also answers /metrics and the health checks), else here.
   */
  private async parseJson<S extends z.ZodType>(body: Buffer, schema: S, site: CallSite): Promise<z.infer<S>> {
    const max = this.target.maxListItems ?? DEFAULT_MAX_LIST_ITEMS;
    let outcome;
    try {
      outcome = await answerParser().parse(body, schema, max);
    } catch (err) {
      throw new WowzaUnparsableError(site, (err as Error).message);
    }
    if (!outcome.ok) {
      if (outcome.problem === 'schema') throw new WowzaUnparsableError(site, `field ${outcome.at}: ${outcome.message}`);
      // Scrubbed whole, then cut: a cut first could leave the start of a secret that no longer matches.
      const start = scrubCredentials(outcome.head, this.target)!.slice(0, 40);
      throw new WowzaUnparsableError(site, `invalid JSON (${outcome.bytes} bytes, starting ${JSON.stringify(start)})`);
    }
    if (outcome.dropped > 0) this.options.onListCapped?.(site.endpoint, outcome.dropped, max);
    return outcome.data as z.infer<S>;
  }

  /**
   * How many answers had the REST API's shape (a body its schema accepts, Wowza's JSON error envelope, credentials
   * accepted after a challenge): a server none of whose answers has it is not the WSE REST API (`wowza_up` 0).
   */
  get restAnswers(): number {
    return this.restCount;
  }

  private restAnswered(): void {
    this.restCount++;
  }

  /** The body cap of one endpoint: its own where it has one, never above max_response_size. */
  private maxBytesFor(endpoint: string): number {
    return Math.min(this.target.maxResponseBytes, ENDPOINT_MAX_BYTES[endpoint] ?? Infinity);
  }

  /**
   * A write whose answer may be empty: the server's own model of `PUT {S}` answers `void` (wse-swagger-4.9.0), so any
   * 2xx is a success; a JSON object in the body is still read (`success: false` means not saved). An empty body or
   * one that is not JSON (text, XML) under a 2xx gives undefined.
   */
  async write<S extends z.ZodType>(
    method: 'POST' | 'PUT' | 'DELETE',
    endpoint: string,
    values: Record<string, string>,
    schema: S,
    opts: { signal?: AbortSignal; body?: unknown } = {},
  ): Promise<z.infer<S> | undefined> {
    const url = apiUrl(this.base, fillPath(endpoint, { server: this.target.serverName, ...values }));
    const site: CallSite = { server: this.target.name, endpoint, url: redactUrl(url.toString()) };
    const raw = await this.send(method, url, site, opts.signal, opts.body === undefined ? undefined : JSON.stringify(opts.body));
    const text = raw.body.toString('utf8').trim();
    if (text === '' || (text[0] !== '{' && text[0] !== '[')) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return undefined;
    }
    const parsed = schema.safeParse(json);
    return parsed.success ? parsed.data : undefined;
  }

  /** The scheme each origin of this server negotiated so far (`undefined` before its first challenge), REST first. */
  get schemes(): Array<{ origin: string; scheme: 'basic' | 'digest' | undefined }> {
    return [...this.authByOrigin].map(([origin, a]) => ({ origin, scheme: a.activeScheme }));
  }

  /**
   * The authentication of `url`'s origin, made at its first request. Only the REST origin takes the configured scheme
   * as it is: another origin negotiates its own (`digest` stays digest, so nothing goes in clear). Basic, which hands
   * the password to whoever asks, goes to another origin only over TLS or when the user configured that URL; a
   * provider the exporter found on its own gets credentials only in answer to a Digest challenge.
   */
  private authFor(url: URL): Authenticator {
    const known = this.authByOrigin.get(url.origin);
    if (known) return known;
    const t = this.target;
    const configured = !t.connectionCountsAuto && t.connectionCountsUrl !== undefined && new URL(t.connectionCountsUrl).origin === url.origin;
    const basicRefused =
      configured || url.protocol === 'https:'
        ? undefined
        : `${url.origin} asks for Basic authentication over plain HTTP, and the exporter found this address on its own: the password is not sent in clear to it (set connectioncounts_url to this URL to allow it, or connectioncounts_url: off)`;
    const made = new Authenticator(t.auth === 'digest' ? 'digest' : 'auto', t.username, t.password, basicRefused);
    this.authByOrigin.set(url.origin, made);
    return made;
  }

  private async send(method: string, url: URL, site: CallSite, signal?: AbortSignal, body?: string, accept = 'application/json') {
    const auth = this.authFor(url);
    // The digest session is this request's alone while it runs, retries included.
    const session = auth.acquire();
    try {
      return await this.sendIn(auth, session, method, url, site, signal, body, accept);
    } finally {
      auth.release(session);
    }
  }

  private async sendIn(auth: Authenticator, session: DigestSession, method: string, url: URL, site: CallSite, signal: AbortSignal | undefined, body: string | undefined, accept: string) {
    const uri = url.pathname + url.search;
    for (let attempt = 1; ; attempt++) {
      const headers: Record<string, string> = { accept };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const authorization = auth.header(method, uri, session);
      if (authorization) headers.authorization = authorization;
      const started = performance.now();
      const deadline = new RequestDeadline(this.target.timeoutMs, signal);
      let res;
      try {
        res = await exchange(this.dispatcher, url, {
          method,
          headers,
          body,
          signal: deadline.signal,
          maxBytes: this.maxBytesFor(site.endpoint),
          budget: this.budget,
          // Refused at the first bytes past a cap: JSON nested too deep (any answer: error bodies are parsed too), a
          // connectioncounts document past the XML caps (a 2xx only: a proxy's error page is not the document).
          guard: (status) => (accept === 'application/json' ? new JsonDepthGuard(MAX_JSON_DEPTH) : status >= 200 && status < 300 ? new XmlGuard() : undefined),
        });
      } catch (err) {
        const failure = this.classify(err, site, deadline, signal);
        this.observe(site.endpoint, failure.kind, started);
        throw failure;
      } finally {
        deadline.release();
      }
      this.observe(site.endpoint, String(res.status), started);
      if (res.status === 401) {
        const verdict = auth.onUnauthorized(res.headers['www-authenticate'], attempt, authorization !== undefined, session);
        this.options.onChallenge?.(verdict.challenge);
        if (verdict.retry && attempt < MAX_ATTEMPTS) continue;
        throw new WowzaAuthError(site, this.target.username ?? '', verdict.retry ? 'the server kept rejecting fresh challenges' : verdict.reason);
      }
      if (res.status < 200 || res.status >= 300) {
        const page = errorPage(res.body, String(res.headers['content-type'] ?? ''));
        if (page === 'wowza') this.restAnswered();
        throw new WowzaHttpError(site, res.status, scrubCredentials(errorMessage(res.body), this.target), page);
      }
      // Credentials accepted after a challenge: the REST API's own authentication answered (unless what it let in to is
      // a web page: a site behind HTTP auth is not the REST API).
      if (attempt > 1 && url.origin === this.base.origin && !isWebPage(res.body, res.contentType)) this.restAnswered();
      return res;
    }
  }

  private observe(endpoint: string, code: string, started: number) {
    this.options.onRequest?.(endpoint, code, (performance.now() - started) / 1000);
  }

  private classify(err: unknown, site: CallSite, deadline: RequestDeadline, caller?: AbortSignal): WowzaError {
    if (err instanceof WowzaError) return err;
    if (err instanceof RefusedBodyError) return new WowzaUnparsableError(site, err.message);
    if (err instanceof BodyTooLargeError) {
      return err.budgetBytes === undefined ? new WowzaTooLargeError(site, this.maxBytesFor(site.endpoint)) : new WowzaTooLargeError(site, err.budgetBytes, 'answers in flight');
    }
    // The request's own timeout first: when both fired, "did not answer within" is the better account.
    if (deadline.timedOut) return new WowzaTimeoutError(site, this.target.timeoutMs);
    // The poll's (or probe's) deadline passed while the server had not answered: as much a timeout as the request's
    // own, and a server that answers nothing in time is not up.
    if (caller?.aborted && isTimeout(caller.reason)) return new WowzaTimeoutError(site, this.target.timeoutMs, 'before the poll deadline', true);
    if (caller?.aborted) return new WowzaAbortedError(site);
    const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
    const code = e.code && e.code !== 'UND_ERR_SOCKET' ? e.code : (e.cause?.code ?? e.code);
    const detail = describeNetworkError(code, e.cause?.message ?? e.message ?? String(err));
    return new WowzaNetworkError(site, code, detail);
  }
}

/** The reason `AbortSignal.timeout()` aborts with: a poll deadline rather than a shutdown. */
function isTimeout(reason: unknown): boolean {
  return (reason as { name?: unknown } | null)?.name === 'TimeoutError';
}

function describeNetworkError(code: string | undefined, message: string): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused (is the REST API enabled, and is this the REST port, usually 8087?)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name does not resolve';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection reset by the server';
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
      return 'TLS certificate is not trusted (set tls.ca_file, or tls.insecure_skip_verify for a test server)';
    case 'CERT_HAS_EXPIRED':
      return 'TLS certificate has expired';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return 'TLS certificate does not match the host name';
    default:
      return message.replace(/\s+/g, ' ').slice(0, 200);
  }
}

function logQuery(q: LogQueryParams): Record<string, string> {
  const out: Record<string, string> = {};
  if (q.startOffset !== undefined) out.startOffset = String(q.startOffset);
  if (q.lineCount !== undefined) out.lineCount = String(q.lineCount);
  if (q.filter && q.filter.length > 0) out.filter = q.filter.join('|');
  if (q.search) out.search = q.search;
  if (q.regexSearch) out.regexSearch = q.regexSearch;
  if (q.head !== undefined) out.head = String(q.head);
  if (q.tail !== undefined) out.tail = String(q.tail);
  if (q.startDate !== undefined) out.startDate = String(q.startDate);
  if (q.endDate !== undefined) out.endDate = String(q.endDate);
  return out;
}

/**
 * Error bodies come from the server or a proxy and may quote the request (its Authorization header):
 * the password, its Basic encoding and any credentials after an auth scheme are blanked.
 */
function scrubCredentials(text: string | undefined, t: WowzaTarget): string | undefined {
  if (text === undefined) return undefined;
  // Every configured secret in every form, and this target's own; `cut`: errorMessage keeps 200 characters of a body.
  return scrubReceived(text, { cut: true, own: t });
}

/** The Wowza `message` of an error body when it is the usual JSON envelope, else a short text excerpt. */
function errorMessage(body: Buffer): string | undefined {
  const text = body.toString('utf8').trim();
  if (text === '') return undefined;
  try {
    const parsed = ErrorBody.safeParse(JSON.parse(text));
    if (parsed.success && parsed.data.message) return parsed.data.message;
  } catch {
    // not JSON: fall through to the excerpt
  }
  if (text.startsWith('<')) {
    const title = /<title>([^<]*)<\/title>/i.exec(text)?.[1] ?? /<message>([^<]*)<\/message>/i.exec(text)?.[1];
    return title ? title.trim() : 'non-JSON (HTML/XML) error page';
  }
  return text.replace(/\s+/g, ' ').slice(0, 200);
}

/** What an error answer is: Wowza's JSON envelope (`wowzaServer`, or `success: false` with a code), a web page, or else. */
function errorPage(body: Buffer, contentType: string): ErrorPage {
  const text = body.toString('utf8', 0, Math.min(body.length, 65_536)).trim();
  if (text.startsWith('{')) {
    try {
      const parsed = ErrorBody.safeParse(JSON.parse(body.toString('utf8')));
      if (parsed.success && (parsed.data.wowzaServer != null || (parsed.data.success === false && parsed.data.code != null))) return 'wowza';
    } catch {
      // not JSON
    }
    return 'other';
  }
  if (isWebPage(body, contentType)) return isManagerPage(text) ? 'manager' : 'html';
  return 'other';
}

/** An HTML page (a web server's, the Manager's), not an API answer. */
function isWebPage(body: Buffer, contentType: string): boolean {
  return /html/i.test(contentType) || /^\s*<(!doctype|html)/i.test(body.toString('utf8', 0, 256));
}

/**
 * Why a body is not the JSON that was asked for (XML or HTML), or undefined. Nesting deeper than MAX_JSON_DEPTH was
 * refused while the body streamed in (send): JSON.parse of deep nesting is slow and memory-hungry.
 */
function notJsonReason(body: Buffer, contentType: string): string | undefined {
  const head = body.toString('utf8', 0, Math.min(body.length, 1024)).trimStart().slice(0, 1);
  if (head !== '<' && !/xml|html/i.test(contentType)) return undefined;
  const why = isWebPage(body, contentType)
    ? 'is this the WSE REST port?'
    : 'WSE answers XML when the Accept header is dropped on the way: a proxy between here and the server may drop it (connect to the REST port directly, or make the proxy pass Accept)';
  return `the server answered XML/HTML although JSON was requested (Accept: application/json); ${why}`;
}
