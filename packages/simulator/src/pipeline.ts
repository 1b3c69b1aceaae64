import { sleep as abortableSleep } from './sleep.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from './logger.js';
import type { AuthGate } from './auth.js';
import type { RequestCounters } from './counters.js';
import { faultReply, sendHuge, type FaultInjector } from './faults.js';
import { encodeReply, htmlPage, wantsJson, wowzaError, writeEncoded, type EncodedReply, type RenderSettings, type Reply } from './reply.js';
import { BadPathError, type RequestContext, type Router } from './router.js';
import type { WorkerPool } from './worker-pool.js';

/**
 * One request's way through the simulator: count it, wait for a free worker, take the configured latency,
 * authenticate, apply an injected fault, route, and render JSON or XML. Nothing a client sends can make it
 * throw past here.
 */

export interface PipelineSettings {
  router: Router;
  auth: AuthGate;
  faults: FaultInjector;
  counters: RequestCounters;
  latencyMs: number;
  /** The REST worker pool every request waits for before it is served (auth challenges included). */
  workers: WorkerPool;
  /** Answer XML even when JSON is asked for. */
  xmlOnly: boolean;
  render: Omit<RenderSettings, 'json'>;
  /** Aborted when the simulator closes: pending waits end and their requests are dropped. */
  signal: AbortSignal;
  logger: Logger;
}

const MAX_BODY_BYTES = 1024 * 1024;

/** Resolves true after `ms`, false as soon as `signal` aborts. */
async function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  await abortableSleep(ms, signal);
  return !signal.aborted;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`request body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export function createRequestHandler(p: PipelineSettings): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const started = Date.now();
    handle(p, req, res)
      .then((routeKey) => p.logger.debug({ method: req.method, route: routeKey, status: res.statusCode, ms: Date.now() - started }, 'request'))
      .catch((err: unknown) => {
        p.logger.error({ err: (err as Error).message, method: req.method }, 'simulator request failed');
        if (!res.headersSent && !res.destroyed) writeEncoded(res, encodeReply(wowzaError(500, 'Internal error'), { ...p.render, json: true }));
        else res.destroy();
      });
  };
}

async function handle(p: PipelineSettings, req: IncomingMessage, res: ServerResponse): Promise<string> {
  const method = (req.method ?? 'GET').toUpperCase();
  const target = req.url ?? '/';
  const json = !p.xmlOnly && wantsJson(req.headers.accept);
  const render: RenderSettings = { ...p.render, json };

  let url: URL | undefined;
  let match: ReturnType<Router['match']> | undefined;
  let badPath: string | undefined;
  try {
    url = new URL(target, 'http://simulator.invalid');
    match = p.router.match(method, url.pathname);
  } catch (err) {
    badPath = err instanceof BadPathError ? err.message : 'malformed request target';
  }
  const template = match?.kind === 'found' ? match.route.template : match?.kind === 'method' ? match.template : undefined;
  const routeKey = template ? `${method} ${template}` : `${method} (unmatched)`;
  p.counters.recordRequest(routeKey);
  res.on('finish', () => p.counters.recordStatus(res.statusCode));

  const release = await p.workers.acquire(p.signal);
  if (!release) return routeKey;
  // A hung answer keeps its worker, as a stuck handler thread would, until the connection goes.
  res.on('close', release);
  if (!(await sleep(p.latencyMs, p.signal))) return routeKey;

  const verdict = p.auth.check(method, target, req.headers.authorization);
  if (!verdict.ok) {
    if (verdict.status === 400) {
      writeEncoded(res, encodeReply(wowzaError(400, verdict.reason), render));
      return routeKey;
    }
    p.counters.recordChallenge(verdict.stale);
    // Real servers answer a failed login with a page, not the REST error envelope; JSON clients get JSON.
    const denied: Reply = json
      ? wowzaError(401, 'Unauthorized', { 'www-authenticate': verdict.challenges })
      : { kind: 'raw', status: 401, contentType: 'text/html', body: htmlPage(401, 'Unauthorized'), headers: { 'www-authenticate': verdict.challenges } };
    writeEncoded(res, encodeReply(denied, render));
    return routeKey;
  }

  const fault = p.faults.take(method, template);
  let forceXml = false;
  if (fault) {
    p.counters.recordFault();
    if (fault.type === 'hang') return routeKey; // answered never; close() destroys the socket
    if (fault.type === 'reset') {
      req.socket.destroy();
      return routeKey;
    }
    if (fault.type === 'slow' && !(await sleep(fault.ms, p.signal))) return routeKey;
    if (fault.type === 'before') await fault.run();
    if (fault.type === 'xml') forceXml = true;
  }

  let reply: Reply;
  if (badPath !== undefined || !url || !match) {
    reply = wowzaError(400, badPath ?? 'malformed request');
  } else if (match.kind === 'none') {
    reply = wowzaError(404, `No resource at ${url.pathname}`);
  } else if (match.kind === 'method') {
    reply = wowzaError(405, `Method ${method} is not allowed on ${url.pathname}`, { allow: match.allowed.join(', ') });
  } else {
    const ctx: RequestContext = {
      method,
      path: url.pathname,
      params: match.params,
      query: url.searchParams,
      headers: req.headers,
      readBody: () => readBody(req),
    };
    reply = await match.route.handler(ctx);
  }

  const finalRender = forceXml ? { ...render, json: false } : render;
  const normal = (): EncodedReply => encodeReply(reply, finalRender);
  if (fault) {
    const replaced = faultReply(fault, normal);
    if (replaced) {
      writeEncoded(res, encodeReply(replaced, finalRender));
      return routeKey;
    }
    if (fault.type === 'huge') {
      await sendHuge(res, normal(), fault.bytes, fault.chunked ?? false);
      return routeKey;
    }
  }
  writeEncoded(res, normal());
  return routeKey;
}
