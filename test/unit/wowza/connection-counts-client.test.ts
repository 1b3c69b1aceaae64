import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WowzaClient, type WowzaTarget } from '../../../src/wowza/client.js';
import { WowzaAbortedError, WowzaHttpError, WowzaTimeoutError, WowzaTooLargeError, WowzaUnparsableError } from '../../../src/wowza/errors.js';

/** connectioncounts documents past the XML caps, through the client: refused early, as the JSON failures are. */

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = () => {};
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => handler(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function client(over: Partial<WowzaTarget> = {}): WowzaClient {
  return new WowzaClient({
    name: 'test',
    url: base,
    username: 'admin',
    password: 'pw',
    auth: 'basic',
    timeoutMs: 10_000,
    maxResponseBytes: 32 * 1024 * 1024,
    serverName: '_defaultServer_',
    connections: 2,
    connectionCountsUrl: `${base}/connectioncounts`,
    ...over,
  });
}

const flat = (streams: number) =>
  `<WowzaStreamingEngine>${Array.from({ length: streams }, (_, i) => `<Stream vhostName="_defaultVHost_" applicationName="live" appInstanceName="_definst_" streamName="s${i}" sessionsFlash="1" sessionsTotal="1"/>`).join('')}</WowzaStreamingEngine>`;

describe('the connectioncounts document through the client', () => {
  it('refuses a document nested too deep at its first bytes, without waiting for the rest (which never comes)', async () => {
    let closed!: () => void;
    const cut = new Promise<void>((r) => (closed = r));
    handler = (req, res) => {
      req.resume();
      res.on('close', closed);
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.write(`<WowzaStreamingEngine>${'<Stream>'.repeat(10_000)}`);
    };
    const c = client();
    const err = await c.connectionCounts().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WowzaUnparsableError);
    expect((err as Error).message).toBe(`/connectioncounts returned an unusable body: XML nested deeper than 32 levels (${base}/connectioncounts?flat)`);
    await cut;
    await c.close();
  });

  it('past the document size cap (max_response_size) it is too large; a cap it passes once read is unparsable', async () => {
    handler = (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end(flat(100));
    };
    const small = client({ maxResponseBytes: 1024 });
    await expect(small.connectionCounts()).rejects.toBeInstanceOf(WowzaTooLargeError);
    await small.close();
    handler = (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end(`<WowzaStreamingEngine><Stream streamName="${'x'.repeat(9000)}"/></WowzaStreamingEngine>`);
    };
    const c = client();
    await expect(c.connectionCounts()).rejects.toThrow(/unusable body: an XML attribute value longer than 8192 bytes/);
    await c.close();
  });

  it('an error page is not held to the XML caps: it stays an HTTP error', async () => {
    handler = (req, res) => {
      req.resume();
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end(`<html><head><title>Down for maintenance</title></head><body>${'<br>'.repeat(100)}</body></html>`);
    };
    const c = client();
    const err = await c.connectionCounts().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WowzaHttpError);
    expect((err as Error).message).toContain('HTTP 503: Down for maintenance');
    await c.close();
  });

  it('a large document being read ends when the poll deadline passes (a timeout) or the exporter stops (cancelled)', async () => {
    const body = Buffer.from(flat(100_000));
    let sent: (() => void) | undefined;
    handler = (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end(body, () => sent?.());
    };
    const c = client();
    // Stopped once the document is out: the client is reading or parsing it.
    const stop = new AbortController();
    sent = () => setTimeout(() => stop.abort(), 10);
    expect(await c.connectionCounts(stop.signal).catch((e: unknown) => e)).toBeInstanceOf(WowzaAbortedError);
    const deadline = new AbortController();
    sent = () => setTimeout(() => deadline.abort(new DOMException('poll deadline', 'TimeoutError')), 10);
    const timedOut = await c.connectionCounts(deadline.signal).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(WowzaTimeoutError);
    expect((timedOut as Error).message).toMatch(/did not answer before the poll deadline/);
    await c.close();
  });
});
