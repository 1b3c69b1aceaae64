import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionCap, RESERVE, RESERVE_REQUEST_MS, RESERVE_WAIT_MS, SLOW_READER_MS, WRITE_DEADLINE_MS } from '../../../src/http/connection-cap.js';
import { missingOpenssl, selfSignedCert } from '../../helpers/faults-tls.js';
import { waitFor } from '../../helpers/ports.js';

/** Larger than what loopback's socket buffers take from a client that reads nothing (about 4 MB). */
const BODY = Buffer.alloc(16 * 1024 * 1024, 'a');

/** `/big` answers BODY; `/hang` never answers; `/-/healthy` answers OK; anything else answers its path. */
function routes(calls: string[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    calls.push(req.url ?? '');
    const path = (req.url ?? '').split('?')[0];
    if (path === '/hang') return;
    const body = path === '/big' ? BODY : Buffer.from(path === '/-/healthy' ? 'OK\n' : `${path}\n`);
    res.writeHead(200, { 'content-length': body.length });
    res.end(body);
  };
}

interface Client {
  s: Socket;
  /** Its local port (read once connected: a closed socket forgets it). */
  port: number;
  received: () => number;
  /** Starts or stops reading. */
  reading: (on: boolean) => void;
}

/**
 * A raw client: sends `path` (if any) and reads nothing until told to. Not reading, it does not notice its connection
 * closed: tests look at the server's side of it instead.
 */
async function client(port: number, path?: string, tls = false): Promise<Client> {
  const s: Socket = tls ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }) : connect(port, '127.0.0.1');
  let received = 0;
  let reading = false;
  s.on('error', () => undefined);
  s.on('data', (d: Buffer) => {
    received += d.length;
    // Reads nothing more until a test says so (a chunk or two is already on its way).
    if (!reading) s.pause();
  });
  s.pause();
  await new Promise((r) => s.once(tls ? 'secureConnect' : 'connect', r));
  if (path) s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  return {
    s,
    port: s.localPort!,
    received: () => received,
    reading: (on) => {
      reading = on;
      if (on) s.resume();
    },
  };
}

/** GET over a connection of its own (as kubelet probes do): status, connection header and body. */
function fetchOwn(port: number, path: string): Promise<{ status: number; connection: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    });
    req.on('error', reject);
  });
}

/** Bytes the server still has to send on `socket` (its writes not yet taken by the kernel). */
const queuedOn = (socket: Socket) => socket.writableLength + ((socket as Socket & { _handle?: { writeQueueSize?: number } })._handle?.writeQueueSize ?? 0);

describe('the connection cap and clients that do not read', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** A server with a cap on a clock the test moves, and the server's side of each connection. */
  async function start(max: number, opts: { tls?: { key: Buffer; cert: Buffer } } = {}) {
    let now = 1_000_000;
    const shed: string[] = [];
    const calls: string[] = [];
    const cap = new ConnectionCap(max, (r) => shed.push(r), () => now);
    const server: Server = opts.tls ? createHttpsServer(opts.tls, routes(calls)) : createServer(routes(calls));
    // By the client's port, read while the connection is open (a destroyed socket forgets it).
    const byPort = new Map<number | undefined, Socket>();
    server.on('connection', (s: Socket) => byPort.set(s.remotePort, s));
    cap.attach(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const clients: Client[] = [];
    cleanups.push(async () => {
      clients.forEach((c) => c.s.destroy());
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });
    const port = (server.address() as AddressInfo).port;
    /** The server's side of `c`'s connection. */
    const serverSide = (c: Client) => byPort.get(c.port);
    return {
      server,
      side: serverSide,
      /** `c`'s connection was closed by the server. */
      gone: (c: Client) => serverSide(c)?.destroyed === true,
      /** Waits until the server has closed `c`'s connection. */
      closed: (c: Client) => waitFor('the server to close the connection', () => (serverSide(c)?.destroyed ? true : undefined), 30_000, 20),
      cap,
      shed,
      calls,
      port,
      advance: (ms: number) => (now += ms),
      client: async (path?: string) => {
        const c = await client(port, path, opts.tls !== undefined);
        clients.push(c);
        return c;
      },
    };
  }

  /** Waits until the server's side of `c`'s connection has answer bytes the kernel no longer takes. */
  const stuck = async (side: (c: Client) => Socket | undefined, c: Client) => {
    let last = -1;
    await waitFor('a connection stuck with bytes to send', () => {
      const socket = side(c);
      const queued = socket ? queuedOn(socket) : 0;
      const same = queued > 0 && queued === last;
      last = queued;
      return same ? true : undefined;
    }, 30_000, 100);
  };

  for (const tls of [false, true]) {
    it.skipIf(tls && missingOpenssl('the write deadline over TLS'))(
      `${tls ? 'over TLS, ' : ''}an answer none of whose bytes are taken for ${WRITE_DEADLINE_MS / 1000} s is cut off; one that is read slowly is not`,
      async () => {
        let dir = '';
        const cert = tls ? await selfSignedCert((dir = mkdtempSync(join(tmpdir(), 'cap-tls-'))), 'cap') : undefined;
        if (dir) cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
        const x = await start(10, cert ? { tls: cert } : {});
        const reader = await x.client('/big');
        const sink = await x.client('/big');
        await stuck(x.side, reader);
        await stuck(x.side, sink);
        x.cap.checkWrites();
        // Halfway to the deadline, the reader takes a few MB: the server's queue for it moves, that of the sink does not.
        x.advance(WRITE_DEADLINE_MS / 2);
        const before = queuedOn(x.side(reader)!);
        const goal = reader.received() + 2 * 1024 * 1024;
        reader.reading(true);
        await waitFor('the reader to take 2 MB', () => (reader.received() >= goal ? true : undefined), 30_000, 5);
        reader.reading(false);
        await waitFor('the server to send the reader more', () => (queuedOn(x.side(reader)!) !== before ? true : undefined), 30_000, 20);
        x.cap.checkWrites();
        x.advance(WRITE_DEADLINE_MS / 2);
        x.cap.checkWrites();
        await x.closed(sink);
        expect(x.shed).toEqual(['slow_reader']);
        expect(x.gone(reader)).toBe(false);
        // Read to the end, the reader's answer completes: nothing more is shed.
        reader.reading(true);
        await waitFor('the whole body', () => (reader.received() > BODY.length ? true : undefined), 30_000, 20);
        x.advance(WRITE_DEADLINE_MS);
        x.cap.checkWrites();
        expect(x.shed).toEqual(['slow_reader']);
        expect(x.gone(reader)).toBe(false);
      },
      60_000,
    );
  }

  it(`with the cap reached, a request makes room from the answer stuck longest (${SLOW_READER_MS / 1000} s or more); a connection that sends nothing does not`, async () => {
    const x = await start(2);
    const sink = await x.client('/big');
    await x.client('/hang');
    await stuck(x.side, sink);
    await waitFor('both requests under way', () => (x.calls.length === 2 ? true : undefined));
    x.cap.checkWrites();
    x.advance(SLOW_READER_MS);
    await x.client();
    await waitFor('the silent one in the reserve', () => (x.cap.reserved === 1 ? true : undefined));
    expect(x.gone(sink)).toBe(false);
    const newcomer = await x.client('/x');
    newcomer.reading(true);
    await waitFor('the non-reader shed', () => (x.shed.length > 0 ? true : undefined));
    await x.closed(sink);
    // (The silent one is refused in its turn once it has sent nothing for 2 s.)
    expect(x.shed.filter((r) => r !== 'refused')).toEqual(['slow_reader']);
    await waitFor('the newcomer answered', () => (newcomer.received() > 0 ? true : undefined));
    expect(x.cap.size).toBe(2);
  });

  it('with every slot busy, health checks are answered from the reserve; other requests wait for a slot, then get a 503 and never reach the handler', async () => {
    const x = await start(1);
    const busy = await x.client('/hang');
    await waitFor('the busy request', () => (x.calls.length === 1 ? true : undefined));
    for (const path of ['/-/healthy', '/-/healthy?x=1']) {
      const health = await fetchOwn(x.port, path);
      expect(health).toEqual({ status: 200, connection: 'close', body: 'OK\n' });
    }
    await waitFor('the reserve empty again', () => (x.cap.reserved === 0 ? true : undefined));
    // A request that is not a health check waits: when the busy connection goes, it gets its slot.
    const waiting = fetchOwn(x.port, '/waits');
    await waitFor('the request waiting in the reserve', () => (x.cap.reserved === 1 ? true : undefined));
    expect(x.calls).not.toContain('/waits');
    busy.s.destroy();
    expect(await waiting).toMatchObject({ status: 200, body: '/waits\n' });
    expect(x.shed).toEqual([]);
    await waitFor('its connection closed after the answer', () => (x.cap.size === 0 ? true : undefined));
    // With no slot freed, it is refused after RESERVE_WAIT_MS, its handler never run.
    await x.client('/hang');
    await waitFor('the second busy request', () => (x.calls.filter((c) => c === '/hang').length === 2 ? true : undefined));
    const started = Date.now();
    const refused = await fetchOwn(x.port, '/refused');
    expect(Date.now() - started).toBeGreaterThanOrEqual(RESERVE_WAIT_MS - 100);
    expect(refused).toMatchObject({ status: 503, connection: 'close' });
    expect(x.calls).not.toContain('/refused');
    expect(x.shed).toEqual(['refused']);
  }, 30_000);

  it(`the reserve holds ${RESERVE} connections at most, each closed when it sends no request within ${RESERVE_REQUEST_MS / 1000} s`, async () => {
    const x = await start(1);
    await x.client('/hang');
    await waitFor('the busy request', () => (x.calls.length === 1 ? true : undefined));
    // The most connections open at once, as each newcomer has been let in or refused.
    let peak = 0;
    x.server.on('connection', () => (peak = Math.max(peak, x.cap.size + x.cap.reserved)));
    const flood = await Promise.all(Array.from({ length: RESERVE + 10 }, () => x.client()));
    await Promise.all(flood.map((c) => x.closed(c)));
    expect(peak).toBe(1 + RESERVE);
    expect(x.shed).toEqual(Array(RESERVE + 10).fill('refused'));
    expect(x.cap.reserved).toBe(0);
  }, 30_000);

  it('a connection in the reserve gets one request: a second one on it closes it', async () => {
    const x = await start(1);
    await x.client('/hang');
    await waitFor('the busy request', () => (x.calls.length === 1 ? true : undefined));
    const c = await x.client();
    c.s.write('GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\nGET /big HTTP/1.1\r\nHost: x\r\n\r\n');
    await x.closed(c);
    expect(x.calls).not.toContain('/big');
  });
});
