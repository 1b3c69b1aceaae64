import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import { parseListenAddress } from '../config/listen-address.js';
import type { Logger } from '../base/logger.js';
import { AllowedHosts } from './allowed-hosts.js';
import { ConnectionCap, defaultMaxConnections, type ShedReason } from './connection-cap.js';
import { gzipJoined, gzipText, type EncodedText } from '../metrics/metrics-body.js';

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;

/** Where the exporter listens: an address (`[host]:port`), or a socket inherited from systemd. */
export type Listener = { address: string } | { fd: number };

export interface ExporterServerOptions {
  /** Every one answers the same routes. */
  listen: Listener[];
  logger: Logger;
  routes: Map<string, RouteHandler>;
  /** Links on the landing page. */
  links: Array<{ path: string; text: string }>;
  /** Checks every request (basic auth of the web config) but those of `open`; resolves false when it already answered. */
  guard?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
  /** Paths answered without the guard (TLS still applies). */
  open?: ReadonlySet<string>;
  /** Builds the server (https when the web config has TLS); plain http by default. */
  createWith?: (options: ServerOptions, handler: RequestListener) => Server;
  /** Whether createWith makes a TLS server, for the URL it reports. */
  tls?: boolean;
  /**
   * With the lifecycle API on: names (besides the listen addresses and localhost) a state-changing request to a
   * `/-/` endpoint may carry in its Host header. Undefined: Host is not checked.
   */
  lifecycleHosts?: readonly string[];
  /** Inbound connections at most, over all listeners (default from the open-file limit: see connection-cap.ts). */
  maxConnections?: number;
  /** Told of each connection the cap closes or refuses (see connection-cap.ts). */
  onConnectionShed?: (reason: ShedReason) => void;
}

/** Methods that change nothing: the Host check of the lifecycle endpoints leaves them alone. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function sendText(res: ServerResponse, status: number, body: string, contentType = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * A scrape body in two parts: `cached`, large and encoded (and compressed) once until it changes, then
 * `fresh`, small and rendered per request. Sent one after the other, never joined into one string.
 */
export interface MetricsParts {
  cached: EncodedText;
  fresh: string;
}

/** Whether the client takes a gzip answer. */
export const wantsGzip = (req: IncomingMessage) => /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));

function sendGzipped(res: ServerResponse, zipped: Buffer): void {
  res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE, 'content-encoding': 'gzip', 'content-length': zipped.length, vary: 'Accept-Encoding' });
  res.end(zipped);
}

/** Sends a scrape body, gzipped when the client asks for it. */
export async function sendMetrics(req: IncomingMessage, res: ServerResponse, body: string | MetricsParts): Promise<void> {
  if (typeof body === 'string') {
    if (wantsGzip(req)) sendGzipped(res, await gzipText(body));
    else sendText(res, 200, body, METRICS_CONTENT_TYPE);
    return;
  }
  const fresh = Buffer.from(body.fresh);
  if (wantsGzip(req)) {
    sendGzipped(res, await gzipJoined(body.cached, fresh));
    return;
  }
  res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE, 'content-length': body.cached.length + fresh.length });
  // Corked: the parts leave in one writev, not one packet each.
  res.cork();
  for (const part of body.cached.parts) res.write(part);
  res.end(fresh);
  res.uncork();
}

function landingPage(links: ExporterServerOptions['links']): string {
  const items = links.map((l) => `<li><a href="${l.path}">${l.text}</a></li>`).join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Wowza Exporter</title></head><body><h1>Wowza Exporter</h1><ul>${items}</ul></body></html>`;
}

/** The exporter's HTTP server: fixed routes, bounded header/request time (slowloris), no crash on bad input. */
export async function startExporterServer(o: ExporterServerOptions): Promise<{ servers: Server[]; urls: string[]; url: string; close(): Promise<void> }> {
  const log = o.logger.child({ component: 'http' });
  const hosts =
    o.lifecycleHosts === undefined ? undefined : new AllowedHosts(o.listen.flatMap((l) => ('address' in l ? [parseListenAddress(l.address).host ?? ''] : [])), o.lifecycleHosts);
  const cap = new ConnectionCap(o.maxConnections ?? defaultMaxConnections(), o.onConnectionShed);
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    // On every answer, errors and 404s included: no browser is to guess a type for what this server sends.
    res.setHeader('x-content-type-options', 'nosniff');
    let url: URL;
    try {
      // Origin-form targets are paths: `//metrics` must not be read as a URL with host "metrics".
      const target = req.url ?? '/';
      url = target.startsWith('/') ? new URL(`http://localhost${target}`) : new URL(target);
    } catch {
      sendText(res, 400, 'bad request URL\n');
      return;
    }
    // Before the credentials: a page that rebound its name to this exporter gets no further than this.
    if (hosts && url.pathname.startsWith('/-/') && !SAFE_METHODS.has(req.method ?? 'GET')) {
      const refusal = hosts.refusal(req);
      if (refusal) {
        req.resume();
        log.warn({ reason: refusal, path: url.pathname }, 'refused a lifecycle request for another host name (DNS rebinding?)');
        sendText(res, 403, `refused: ${refusal}\n`);
        return;
      }
    }
    if (o.guard && !o.open?.has(url.pathname) && !(await o.guard(req, res))) return;
    const route = o.routes.get(url.pathname);
    if (!route && url.pathname === '/') {
      sendText(res, 200, landingPage(o.links), 'text/html; charset=utf-8');
      return;
    }
    if (!route) {
      sendText(res, 404, `not found: ${url.pathname.slice(0, 100)}\n`);
      return;
    }
    await route(req, res, url);
  };
  // Node checks the header and request deadlines only every connectionsCheckingInterval (30 s by default):
  // checked each second, a client trickling its headers is cut off at 10 s, not up to 40 s.
  const limits: ServerOptions = { requestTimeout: 60_000, headersTimeout: 10_000, connectionsCheckingInterval: 1_000, maxHeaderSize: 16 * 1024 };
  const listener: RequestListener = (req, res) => {
    handler(req, res).catch((err: unknown) => {
      const path = req.url?.split('?')[0]?.slice(0, 200);
      // A client that hangs up mid-request is not a server failure; it must not fill the error log.
      if ((err as NodeJS.ErrnoException).code === 'ECONNRESET' || req.socket.destroyed) {
        log.debug({ err: (err as Error).message, path }, 'client went away');
        res.destroy();
        return;
      }
      log.error({ err: (err as Error).message, path }, 'request failed');
      if (!res.headersSent) sendText(res, 500, 'internal error\n');
      else res.destroy();
    });
  };
  const servers: Server[] = [];
  const closeAll = () =>
    Promise.all(
      servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      ),
    ).then(() => undefined);
  const urls: string[] = [];
  try {
    for (const l of o.listen) {
      const server = (o.createWith ?? createServer)(limits, listener);
      server.keepAliveTimeout = 65_000;
      // A connection with nothing going either way for this long is closed: one that never sends a byte no longer stays
      // open for ever (the header deadline starts with the first byte). Longer than the keep-alive, which ends first.
      server.timeout = 70_000;
      cap.attach(server);
      await listen(server, l);
      servers.push(server);
      urls.push(urlOf(server, o.tls === true));
    }
  } catch (err) {
    await closeAll();
    throw err;
  }
  return { servers, urls, url: urls[0]!, close: closeAll };
}

function listen(server: Server, l: Listener): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (err: Error) => reject(new Error(`cannot listen on ${'fd' in l ? `the socket systemd passed (fd ${l.fd})` : l.address}: ${err.message}`));
    server.once('error', failed);
    const done = () => {
      server.off('error', failed);
      resolve();
    };
    if ('fd' in l) server.listen({ fd: l.fd }, done);
    else {
      const { host, port } = parseListenAddress(l.address);
      server.listen(port, host, done);
    }
  });
}

function urlOf(server: Server, tls: boolean): string {
  const addr = server.address();
  if (addr === null || typeof addr === 'string') return `${tls ? 'https' : 'http'}+unix://${addr ?? 'socket'}`;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address === '::' ? '::1' : addr.address}]` : addr.address === '0.0.0.0' ? '127.0.0.1' : addr.address;
  return `${tls ? 'https' : 'http'}://${shownHost}:${addr.port}`;
}
