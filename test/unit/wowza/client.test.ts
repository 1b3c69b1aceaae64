import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WowzaClient, type WowzaTarget } from '../../../src/wowza/client.js';
import {
  WowzaAuthError,
  WowzaHttpError,
  WowzaNetworkError,
  WowzaTimeoutError,
  WowzaTooLargeError,
  WowzaUnparsableError,
} from '../../../src/wowza/errors.js';
import { freePort } from '../../helpers/ports.js';
import { WriteAnswer } from '../../../src/webhooks/config-api.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = () => {};
let server: Server;
let base: string;
const sockets = new Set<import('node:net').Socket>();

beforeAll(async () => {
  server = createServer((req, res) => handler(req, res));
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
});

function target(over: Partial<WowzaTarget> = {}): WowzaTarget {
  return {
    name: 'test',
    url: base,
    username: 'admin',
    password: 'pa55-w0rd',
    auth: 'basic',
    timeoutMs: 1000,
    maxResponseBytes: 1024,
    serverName: '_defaultServer_',
    connections: 4,
    ...over,
  };
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

function expectNoSecret(err: unknown) {
  const text = `${(err as Error).message} ${JSON.stringify(err)}`;
  expect(text).not.toContain('pa55-w0rd');
  expect(text).not.toContain(Buffer.from('admin:pa55-w0rd').toString('base64'));
}

describe('WowzaClient', () => {
  it('always asks for JSON and sends basic credentials', async () => {
    const seen: Array<string | undefined> = [];
    handler = (req, res) => {
      seen.push(req.headers.accept, req.headers.authorization);
      json(res, 200, { cpuIdle: 80, cpuUser: 15, cpuSystem: 5 });
    };
    const codes: string[] = [];
    const c = new WowzaClient(target(), { onRequest: (ep, code) => codes.push(`${ep} ${code}`) });
    expect(await c.machineCurrent()).toMatchObject({ cpuIdle: 80 });
    expect(seen).toEqual(['application/json', 'Basic ' + Buffer.from('admin:pa55-w0rd').toString('base64')]);
    expect(codes).toEqual(['/v2/machine/monitoring/current 200']);
    await c.close();
  });

  it('auto mode learns Basic from the challenge and then sends it up front', async () => {
    let requests = 0;
    handler = (req, res) => {
      requests++;
      if (!req.headers.authorization) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="Wowza"' });
        res.end();
        return;
      }
      json(res, 200, { vhosts: [{ id: '_defaultVHost_' }] });
    };
    const c = new WowzaClient(target({ auth: 'auto' }));
    await c.vhosts();
    await c.vhosts();
    expect(requests).toBe(3);
    expect(c.auth.activeScheme).toBe('basic');
    await c.close();
  });

  it('a wrong password is one clear message naming the user and URL, not the password', async () => {
    handler = (_req, res) => {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="Wowza"' });
      res.end('<html><body>401</body></html>');
    };
    const c = new WowzaClient(target());
    const err = await c.serverStatus().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WowzaAuthError);
    expect((err as Error).message).toBe(`authentication failed for user "admin" at ${base}/v2/servers/_defaultServer_/status: wrong username or password (Basic rejected)`);
    expectNoSecret(err);
    await c.close();
  });

  it('forcing basic against a digest-only server says which scheme to use', async () => {
    handler = (_req, res) => {
      res.writeHead(401, { 'www-authenticate': 'Digest realm="Wowza", nonce="abc", algorithm=MD5, qop="auth"' });
      res.end();
    };
    const c = new WowzaClient(target());
    await expect(c.serverStatus()).rejects.toThrow(/asks for Digest authentication but auth is set to basic/);
    await c.close();
  });

  it('HTTP errors carry the Wowza message', async () => {
    handler = (_req, res) => json(res, 404, { success: false, message: 'Application (nope) not found.', code: '404', data: null, wowzaServer: '4.9.4' });
    const c = new WowzaClient(target());
    const err = await c.applicationCurrent('_defaultVHost_', 'nope').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WowzaHttpError);
    expect((err as WowzaHttpError).status).toBe(404);
    expect((err as Error).message).toContain('HTTP 404: Application (nope) not found.');
    await c.close();
  });

  it('XML answers and garbage are unparsable, with the endpoint and field path', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end('<?xml version="1.0"?><Root/>');
    };
    const c = new WowzaClient(target());
    await expect(c.machineCurrent()).rejects.toThrow(/answered XML\/HTML although JSON was requested/);
    handler = (_req, res) => json(res, 200, { cpuIdle: 'lots' });
    const err = await c.machineCurrent().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WowzaUnparsableError);
    expect((err as Error).message).toContain('/v2/machine/monitoring/current returned an unusable body: field cpuIdle');
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"cpuIdle": 1');
    };
    await expect(c.machineCurrent()).rejects.toThrow(/invalid JSON/);
    await c.close();
  });

  it('an answer without its list key fails loudly naming the key; a missing item field does not', async () => {
    handler = (_req, res) => json(res, 200, { serverName: '_defaultServer_', version: '1' });
    const c = new WowzaClient(target());
    const err = await c.instances('_defaultVHost_', 'live').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WowzaUnparsableError);
    expect((err as Error).message).toContain('/instances returned an unusable body: field instanceList: missing: the answer has no "instanceList" list');
    await expect(c.vhosts()).rejects.toThrow(/field vhosts: missing: the answer has no "vhosts" list/);
    await expect(c.applications('_defaultVHost_')).rejects.toThrow(/field applications: missing/);
    await expect(c.logFiles('newestFirst')).rejects.toThrow(/field serverLogFiles: missing/);
    handler = (_req, res) => json(res, 200, { instanceList: [{ name: '_definst_', incomingStreams: [{ name: 'cam1' }] }] });
    const ok = await c.instances('_defaultVHost_', 'live');
    expect(ok.instanceList[0]!.incomingStreams[0]!.name).toBe('cam1');
    await c.close();
  });

  it('a request cut by the poll deadline is a timeout (the server is not up) and says so, apart from its own timeout', async () => {
    handler = () => {}; // never answers
    const c = new WowzaClient(target({ timeoutMs: 5000 }));
    const err = await c.machineCurrent(AbortSignal.timeout(200)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WowzaTimeoutError);
    expect((err as Error).message).toMatch(/did not answer before the poll deadline/);
    // Marked as such, so the poller can tell a request its budget held back (see heldBackFailure).
    expect((err as WowzaTimeoutError).cutByPollDeadline).toBe(true);
    // Cancelled for another reason (a probe whose caller hung up): aborted, not a timeout.
    const gone = new AbortController();
    setTimeout(() => gone.abort(), 100);
    expect(((await c.machineCurrent(gone.signal).catch((e: unknown) => e)) as { kind: string }).kind).toBe('aborted');
    const quick = new WowzaClient(target({ timeoutMs: 200 }));
    const own = await quick.machineCurrent(AbortSignal.timeout(5000)).catch((e: unknown) => e);
    expect(own).toBeInstanceOf(WowzaTimeoutError);
    expect((own as WowzaTimeoutError).cutByPollDeadline).toBe(false);
    await Promise.all([c.close(), quick.close()]);
  });

  it('the deadline covers a body that never finishes', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"cpuIdle":');
    };
    const c = new WowzaClient(target({ timeoutMs: 300 }));
    const started = Date.now();
    const err = await c.machineCurrent().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WowzaTimeoutError);
    expect(Date.now() - started).toBeLessThan(2000);
    await c.close();
  });

  it('refuses bodies over the size limit, declared or streamed', async () => {
    handler = (_req, res) => json(res, 200, { pad: 'x'.repeat(5000) });
    const c = new WowzaClient(target());
    await expect(c.machineCurrent()).rejects.toBeInstanceOf(WowzaTooLargeError);
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"pad":"');
      res.write('y'.repeat(4000));
      res.end('"}');
    };
    await expect(c.machineCurrent()).rejects.toThrow(/larger than the 1024 byte limit/);
    await c.close();
  });

  it('a closed port is a network error with a hint', async () => {
    const port = await freePort();
    const c = new WowzaClient(target({ url: `http://127.0.0.1:${port}` }));
    const err = await c.machineCurrent().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WowzaNetworkError);
    expect((err as Error).message).toMatch(/connection refused .*REST port/);
    await c.close();
  });

  it('refuses credentials inside the URL', () => {
    expect(() => new WowzaClient(target({ url: 'http://a:b@127.0.0.1:1' }))).toThrow(/not in the URL/);
  });
});

describe('WowzaClient.write: writes the server models as void', () => {
  const schema = WriteAnswer;

  it.each([
    ['an empty body', 204, '', undefined],
    ['an empty 200', 200, '', undefined],
    ['plain text', 200, 'OK', undefined],
    ['a save result', 200, '{"success":true,"message":"saved"}', { success: true, message: 'saved' }],
    ['a refusal under 200', 200, '{"success":false,"message":"locked"}', { success: false, message: 'locked' }],
  ])('takes %s as what the server answered', async (_what, status, body, expected) => {
    handler = (_req, res) => {
      res.writeHead(status, body.startsWith('{') ? { 'content-type': 'application/json' } : {});
      res.end(body);
    };
    const c = new WowzaClient(target());
    expect(await c.write('PUT', '/v2/servers/{server}', {}, schema, { body: { serverName: '_defaultServer_' } })).toEqual(expected);
    await c.close();
  });

  it('an error status is still an error', async () => {
    handler = (_req, res) => json(res, 500, { success: false, message: 'boom' });
    const c = new WowzaClient(target());
    await expect(c.write('PUT', '/v2/servers/{server}', {}, schema, { body: {} })).rejects.toBeInstanceOf(WowzaHttpError);
    await c.close();
  });
});

describe('WowzaClient: answers that cannot be weaponised', () => {
  it('refuses JSON nested deeper than 64 levels before parsing it', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('['.repeat(500) + ']'.repeat(500));
    };
    const c = new WowzaClient(target({ maxResponseBytes: 64 * 1024 }));
    const err = await c.vhosts().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WowzaUnparsableError);
    expect((err as Error).message).toMatch(/nested deeper than 64 levels/);
    await c.close();
  });

  it('caps a fixed-size resource far below max_response_size', async () => {
    handler = (_req, res) => json(res, 200, { cpuIdle: 1, padding: 'x'.repeat(300 * 1024) });
    const c = new WowzaClient(target({ maxResponseBytes: 32 * 1024 * 1024 }));
    const err = await c.machineCurrent().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WowzaTooLargeError);
    expect((err as Error).message).toMatch(/larger than the 262144 byte limit/);
    await c.close();
  });
});

describe('authentication per origin (issue 41)', () => {
  let provider: Server;
  let providerUrl: string;
  const seen: Array<string | undefined> = [];
  const COUNTS = '<WowzaStreamingEngine><Stream vhostName="v" applicationName="a" appInstanceName="i" streamName="s" sessionsFlash="2" sessionsTotal="2"/></WowzaStreamingEngine>';
  beforeAll(async () => {
    provider = createServer((req, res) => {
      seen.push(req.headers.authorization);
      if (req.headers.authorization !== `Basic ${Buffer.from('admin:pw').toString('base64')}`) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="Wowza"' }).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/xml' }).end(COUNTS);
    });
    await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
    providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/connectioncounts`;
  });
  afterAll(async () => {
    provider.closeAllConnections();
    await new Promise((r) => provider.close(r));
  });
  const restOnBasic: Handler = (req, res) => {
    if (!req.headers.authorization) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="Wowza"' }).end();
      return;
    }
    json(res, 200, { vhosts: [{ id: '_defaultVHost_' }] });
  };

  it('a provider the exporter found on its own never gets Basic over plain HTTP; REST keeps its own scheme', async () => {
    handler = restOnBasic;
    seen.length = 0;
    const c = new WowzaClient(target({ auth: 'auto', password: 'pw', connectionCountsUrl: providerUrl, connectionCountsAuto: true }));
    await c.vhosts();
    const err = await c.connectionCounts().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WowzaAuthError);
    expect((err as Error).message).toMatch(/asks for Basic authentication over plain HTTP.*the password is not sent in clear/);
    expect((err as Error).message).not.toContain('pw');
    expect(seen).toEqual([undefined]);
    await c.vhosts();
    expect(c.schemes).toEqual([
      { origin: new URL(base).origin, scheme: 'basic' },
      { origin: new URL(providerUrl).origin, scheme: undefined },
    ]);
    await c.close();
  });

  it('a provider URL the user configured gets Basic when it asks for it', async () => {
    handler = restOnBasic;
    seen.length = 0;
    const c = new WowzaClient(target({ auth: 'auto', password: 'pw', connectionCountsUrl: providerUrl }));
    const counts = await c.connectionCounts();
    expect(counts.size).toBe(1);
    expect(seen[0]).toBeUndefined(); // nothing before the challenge
    expect(seen[1]).toMatch(/^Basic /);
    await c.close();
  });

  it('REST on Basic and the provider on Digest, interleaved: both keep working', async () => {
    const { startSimulator } = await import('@wowza-exporter/simulator');
    const sim = await startSimulator({ auth: 'basic', adminAuth: 'digest', apps: 1, streams: 2 });
    try {
      const c = new WowzaClient(target({ url: sim.url, auth: 'auto', password: sim.password, connectionCountsUrl: sim.countsUrl, connectionCountsAuto: true, maxResponseBytes: 1 << 20 }));
      for (let i = 0; i < 3; i++) {
        const [counts, status] = await Promise.all([c.connectionCounts(), c.serverStatus(), c.vhosts()]);
        expect(counts.size).toBeGreaterThan(0);
        expect(status.serverVersion).toMatch(/Wowza/);
      }
      expect(c.schemes.map((s) => s.scheme)).toEqual(['basic', 'digest']);
      await c.close();
    } finally {
      await sim.close();
    }
  });
});

it('answers whose Content-Length is over the cap, several at once, are refused without an uncaught error', async () => {
  const { startSimulator } = await import('@wowza-exporter/simulator');
  const sim = await startSimulator({ auth: 'basic', apps: 1, streams: 1 });
  try {
    // The status answer (~1.5 KB) is over a 1 KiB cap; the vhost list is under it.
    const c = new WowzaClient(target({ url: sim.url, auth: 'auto', password: sim.password, maxResponseBytes: 1024 }));
    const outcomes = await Promise.allSettled([c.serverStatus(), c.serverStatus(), c.vhosts()]);
    expect(outcomes.map((o) => o.status === 'rejected' && o.reason instanceof WowzaTooLargeError)).toEqual([true, true, false]);
    // An 'error' the aborted bodies emit after this fails the run as an unhandled error (and a serve process with it).
    await new Promise((r) => setTimeout(r, 300));
    await c.close();
  } finally {
    await sim.close();
  }
});
