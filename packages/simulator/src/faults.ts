import { STATUS_CODES, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { htmlPage, JSON_TYPE, type EncodedReply, type Reply } from './reply.js';

/**
 * Failures to inject, per route template or for every route (`*`). They apply to requests that passed
 * authentication, so `times: 1` means one answered request, not a challenge round trip.
 */
export type Fault =
  /** This status with the Wowza JSON error envelope (default 500). */
  | { type: 'status'; status?: number; message?: string }
  /** Never answers; the socket stays open until the client gives up or the simulator closes. */
  | { type: 'hang' }
  /** Answers normally after `ms` more. */
  | { type: 'slow'; ms: number }
  /** Destroys the connection without an answer. */
  | { type: 'reset' }
  /** 200 with a JSON content type and a body that is not JSON. */
  | { type: 'garbage' }
  /** The normal answer in XML even when JSON was asked for. */
  | { type: 'xml' }
  /** The normal answer padded to `bytes` (still valid); `chunked` hides the size until it streams. */
  | { type: 'huge'; bytes: number; chunked?: boolean }
  /** An HTML error page, as a proxy in front of the server sends (default 502). */
  | { type: 'html'; status?: number }
  /** A plain-text error (default 500). */
  | { type: 'text'; status?: number; body?: string }
  /**
   * Runs `run` first, then answers normally: a lever for in-process tests that must change the server (rotate a
   * log, append lines) at an exact point of a client's request sequence instead of after a sleep.
   */
  | { type: 'before'; run: () => void | Promise<void> };

export type FaultName = 'hang' | 'reset' | 'garbage' | 'xml' | 'html' | 'text';
/** A fault, its bare name, or a status code (shorthand for `{ type: 'status', status }`). */
export type FaultInput = Fault | FaultName | number;

export interface FaultRule {
  readonly route: string;
  readonly fault: Fault;
  /** Applications left; undefined = until removed. */
  remaining: number | undefined;
}

export class FaultError extends Error {}

function normalise(input: FaultInput): Fault {
  const fault: Fault = typeof input === 'number' ? { type: 'status', status: input } : typeof input === 'string' ? ({ type: input } as Fault) : input;
  const status = (s: number | undefined) => {
    if (s !== undefined && (!Number.isInteger(s) || s < 100 || s > 599)) throw new FaultError(`fault status must be an integer HTTP status (100-599), got ${s}`);
  };
  switch (fault.type) {
    case 'status':
    case 'html':
    case 'text':
      status(fault.status);
      break;
    case 'slow':
      if (!Number.isFinite(fault.ms) || fault.ms < 0) throw new FaultError(`slow fault needs ms >= 0, got ${fault.ms}`);
      break;
    case 'huge':
      if (!Number.isInteger(fault.bytes) || fault.bytes <= 0) throw new FaultError(`huge fault needs a positive integer of bytes, got ${fault.bytes}`);
      break;
    case 'before':
      if (typeof fault.run !== 'function') throw new FaultError('before fault needs a function to run');
      break;
    case 'hang':
    case 'reset':
    case 'garbage':
    case 'xml':
      break;
    default:
      throw new FaultError(`unknown fault ${JSON.stringify(input)}: use status, hang, slow, reset, garbage, xml, huge, html, text or before`);
  }
  return fault;
}

export class FaultInjector {
  private rules: FaultRule[] = [];

  /** `routeKeys` lists `GET /v2/...` for every route, to refuse a fault for a route that does not exist. */
  constructor(private readonly routeKeys: () => string[]) {}

  /**
   * Adds a fault for `route`: `*`, a template (`/v2/machine/monitoring/current`, any method) or a method
   * and template (`GET /v2/...`). Route-specific faults win over `*`; among equals the oldest applies.
   * Returns a function that removes it.
   */
  inject(route: string, fault: FaultInput, opts: { times?: number } = {}): () => void {
    const keys = this.routeKeys();
    if (route !== '*' && !keys.includes(route) && !keys.some((k) => k.slice(k.indexOf(' ') + 1) === route)) {
      throw new FaultError(`no route ${JSON.stringify(route)}; use "*" or one of:\n  ${keys.join('\n  ')}`);
    }
    if (opts.times !== undefined && (!Number.isInteger(opts.times) || opts.times < 1)) throw new FaultError(`fault times must be a positive integer, got ${opts.times}`);
    const rule: FaultRule = { route, fault: normalise(fault), remaining: opts.times };
    this.rules.push(rule);
    return () => {
      this.rules = this.rules.filter((r) => r !== rule);
    };
  }

  clear(): void {
    this.rules = [];
  }

  /** The faults still armed. */
  active(): ReadonlyArray<Readonly<FaultRule>> {
    return this.rules.map((r) => ({ ...r }));
  }

  /** The fault for this request, if any, counting it against its `times`. */
  take(method: string, template: string | undefined): Fault | undefined {
    const specific = template === undefined ? undefined : this.rules.find((r) => r.route === `${method} ${template}` || r.route === template);
    const rule = specific ?? this.rules.find((r) => r.route === '*');
    if (!rule) return undefined;
    if (rule.remaining !== undefined && --rule.remaining <= 0) this.rules = this.rules.filter((r) => r !== rule);
    return rule.fault;
  }
}

/** The answer a terminal fault sends instead of the route's (hang, reset, slow, xml and huge are handled by the pipeline). */
export function faultReply(fault: Fault, normal: () => EncodedReply): Reply | undefined {
  switch (fault.type) {
    case 'status': {
      const status = fault.status ?? 500;
      return { kind: 'error', status, message: fault.message ?? STATUS_CODES[status] ?? 'Error' };
    }
    case 'html': {
      const status = fault.status ?? 502;
      return { kind: 'raw', status, contentType: 'text/html', body: htmlPage(status, STATUS_CODES[status] ?? 'Error') };
    }
    case 'text': {
      const status = fault.status ?? 500;
      return { kind: 'raw', status, contentType: 'text/plain', body: fault.body ?? `${status} ${STATUS_CODES[status] ?? 'Error'}\n` };
    }
    case 'garbage': {
      // A body cut in half, as a proxy that drops the connection mid-response leaves it.
      const text = normal().body.toString('utf8');
      return { kind: 'raw', status: 200, contentType: JSON_TYPE, body: text.slice(0, Math.max(1, Math.floor(text.length / 2))) + '\u0000<!-- truncated' };
    }
    default:
      return undefined;
  }
}

const PAD_CHUNK = Buffer.alloc(64 * 1024, 'x');

/** Streams the normal answer padded to `bytes`: a `padding` field in JSON, a comment in XML. */
export async function sendHuge(res: ServerResponse, normal: EncodedReply, bytes: number, chunked: boolean): Promise<void> {
  const text = normal.body.toString('utf8');
  const isJson = String(normal.headers['content-type'] ?? '').includes('json') && text.startsWith('{');
  let prefix: string;
  let suffix: string;
  if (isJson) {
    const rest = text.slice(1);
    prefix = '{"padding":"';
    suffix = rest.trim() === '}' ? '"' + rest : '",' + rest;
  } else {
    const cut = text.indexOf('?>') + 2;
    prefix = text.slice(0, cut) + '<!--';
    suffix = '-->' + text.slice(cut);
  }
  let pad = Math.max(0, bytes - Buffer.byteLength(prefix) - Buffer.byteLength(suffix));
  const headers = { ...normal.headers, ...(chunked ? {} : { 'content-length': Buffer.byteLength(prefix) + pad + Buffer.byteLength(suffix) }) };
  res.writeHead(normal.status, headers);
  res.write(prefix);
  while (pad > 0 && !res.destroyed) {
    const chunk = pad >= PAD_CHUNK.length ? PAD_CHUNK : PAD_CHUNK.subarray(0, pad);
    pad -= chunk.length;
    if (!res.write(chunk)) {
      // The listener that loses the race must go, or every drain leaves one behind.
      const settled = new AbortController();
      await Promise.race([once(res, 'drain', { signal: settled.signal }), once(res, 'close', { signal: settled.signal })]).catch(() => undefined);
      settled.abort();
    }
  }
  if (!res.destroyed) res.end(suffix);
}
