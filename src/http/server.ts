import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Logger } from '../logger.js';

const gzipAsync = promisify(gzip);
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;

export interface ExporterServerOptions {
  listenAddress: string;
  logger: Logger;
  routes: Map<string, RouteHandler>;
  /** Links on the landing page. */
  links: Array<{ path: string; text: string }>;
  /** Checks every request (basic auth of the web config); resolves false when it already answered. */
  guard?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
  /** Builds the server (https when the web config has TLS); plain http by default. */
  createWith?: (options: ServerOptions, handler: RequestListener) => Server;
  /** Whether createWith makes a TLS server, for the URL it reports. */
  tls?: boolean;
}

/** `:9935`, `0.0.0.0:9935`, `[::1]:9935`, `127.0.0.1:0` -> host and port. */
export function parseListenAddress(addr: string): { host?: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*))?:(\d+)$/.exec(addr.trim());
  if (!m) throw new Error(`invalid listen address "${addr}": expected [host]:port, e.g. :9935 or 127.0.0.1:9935`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`invalid listen address "${addr}": port out of range`);
  const host = m[1] ?? (m[2] || undefined);
  return { host, port };
}

export function sendText(res: ServerResponse, status: number, body: string, contentType = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Sends a scrape body, gzipped when the client asks for it. */
export async function sendMetrics(req: IncomingMessage, res: ServerResponse, body: string): Promise<void> {
  const accept = String(req.headers['accept-encoding'] ?? '');
  if (/\bgzip\b/.test(accept)) {
    const zipped = await gzipAsync(body);
    res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE, 'content-encoding': 'gzip', 'content-length': zipped.length, vary: 'Accept-Encoding' });
    res.end(zipped);
    return;
  }
  sendText(res, 200, body, METRICS_CONTENT_TYPE);
}

function landingPage(links: ExporterServerOptions['links']): string {
  const items = links.map((l) => `<li><a href="${l.path}">${l.text}</a></li>`).join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Wowza Exporter</title></head><body><h1>Wowza Exporter</h1><ul>${items}</ul></body></html>`;
}

/** The exporter's HTTP server: fixed routes, bounded header/request time (slowloris), no crash on bad input. */
export async function startExporterServer(o: ExporterServerOptions): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const { host, port } = parseListenAddress(o.listenAddress);
  const log = o.logger.child({ component: 'http' });
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      sendText(res, 400, 'bad request URL\n');
      return;
    }
    if (o.guard && !(await o.guard(req, res))) return;
    if (url.pathname === '/') {
      sendText(res, 200, landingPage(o.links), 'text/html; charset=utf-8');
      return;
    }
    const route = o.routes.get(url.pathname);
    if (!route) {
      sendText(res, 404, `not found: ${url.pathname.slice(0, 100)}\n`);
      return;
    }
    await route(req, res, url);
  };
  const server = (o.createWith ?? createServer)({ requestTimeout: 60_000, headersTimeout: 10_000, maxHeaderSize: 16 * 1024 }, (req, res) => {
    handler(req, res).catch((err: unknown) => {
      log.error({ err: (err as Error).message, path: req.url?.split('?')[0] }, 'request failed');
      if (!res.headersSent) sendText(res, 500, 'internal error\n');
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address === '::' ? '::1' : addr.address}]` : addr.address === '0.0.0.0' ? '127.0.0.1' : addr.address;
  return {
    server,
    url: `${o.tls ? 'https' : 'http'}://${shownHost}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
