import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { LISTENER_CLASS as SIMULATOR_LISTENER_CLASS, startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { LISTENER_CLASS } from '../../src/webhooks/config-api.js';
import { verifyHs256 } from '../../src/webhooks/jwt.js';
import { setupWebhooks } from '../../src/webhooks/setup.js';
import { WowzaClient } from '../../src/wowza/client.js';

/**
 * The exporter's webhook code against the simulator, which has its own listener class name and HS256 signer
 * (packages/simulator/test/webhooks.test.ts tests the simulator alone): each side checks the other.
 */

const W = '/v2/servers/_defaultServer_/webhooks';
const NEW = 'Wowza Streaming Engine 4.9.6 build20250620000000';
const SECRET = 'shared-hook-secret';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are checked field by field
async function api(sim: Simulator, method: string, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(sim.url + path, {
    method,
    headers: { accept: 'application/json', authorization: 'Basic ' + Buffer.from(`${sim.username}:${sim.password}`).toString('base64') },
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

function clientFor(sim: Simulator): WowzaClient {
  return new WowzaClient({
    name: 'wse',
    url: sim.url,
    username: sim.username,
    password: sim.password,
    auth: 'basic',
    timeoutMs: 2000,
    maxResponseBytes: 1 << 20,
    serverName: '_defaultServer_',
    connections: 2,
  });
}

it('the simulator delivers webhooks with the server listener the exporter installs', () => {
  expect(SIMULATOR_LISTENER_CLASS).toBe(LISTENER_CLASS);
});

it('lets the exporter set up delivery once, and a second run writes nothing', async () => {
  const fresh = await startSimulator({ serverVersion: NEW, frozen: true });
  const client = clientFor(fresh);
  try {
    const o = { targetUrl: 'http://127.0.0.1:9935/webhooks/wowza', secret: SECRET };
    expect((await setupWebhooks(client, o)).map((c) => c.kind)).toEqual(['create', 'create', 'create']);
    const written = (await api(fresh, 'GET', W)).body.webhooks;
    expect(written.targets).toEqual([{ id: 'wowza-exporter', url: o.targetUrl, headers: null, auth: { type: 'jwt', secret: SECRET } }]);
    expect(written.filters).toEqual([expect.objectContaining({ id: 'wowza-exporter', criteria: 'vHost.>', targetRef: 'wowza-exporter', enabled: true })]);
    fresh.counters.reset();
    expect((await setupWebhooks(client, o)).map((c) => c.kind)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    const writes = Object.keys(fresh.counters.byRoute).filter((k) => !k.startsWith('GET '));
    expect(writes).toEqual([]);

    // Switching to a static header: the target is updated (auth gone, the header in), and again only once.
    const header = { ...o, auth: 'header' as const };
    const changed = await setupWebhooks(client, header);
    expect(changed.map((c) => c.kind)).toEqual(['update', 'unchanged', 'unchanged']);
    expect(changed[0]!.diff.join('\n')).not.toContain(SECRET);
    expect((await api(fresh, 'GET', `${W}/targets/wowza-exporter`)).body).toMatchObject({ auth: null, headers: [{ name: 'Authorization', value: `Bearer ${SECRET}` }] });
    fresh.counters.reset();
    expect((await setupWebhooks(client, header)).map((c) => c.kind)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(Object.keys(fresh.counters.byRoute).filter((k) => !k.startsWith('GET '))).toEqual([]);
  } finally {
    await client.close();
    await fresh.close();
  }
});

it("the exporter's verifier accepts the token of an event the simulator signed, and refuses it with another secret", async () => {
  const authorization: string[] = [];
  const rx = createServer((req, res) => {
    authorization.push(String(req.headers.authorization));
    req.resume().on('end', () => res.writeHead(200).end('{}'));
  });
  await new Promise<void>((resolve) => rx.listen(0, '127.0.0.1', resolve));
  const sim = await startSimulator({ serverVersion: NEW, frozen: true });
  const client = clientFor(sim);
  try {
    await setupWebhooks(client, { targetUrl: `http://127.0.0.1:${(rx.address() as AddressInfo).port}/hook`, secret: SECRET });
    const [outcome] = await sim.webhooks.fire({ name: 'stream.stopped', context: { vhost: '_defaultVHost_', app: 'live', appInstance: '_definst_', stream: 'stream1' } });
    expect(outcome).toMatchObject({ delivered: true });
    const token = /^Bearer (\S+)$/.exec(authorization[0] ?? '')![1]!;
    const claims = verifyHs256(token, SECRET);
    expect(claims).toMatchObject({ iss: '_defaultServer_' });
    expect((claims.exp as number) - (claims.iat as number)).toBe(60);
    expect(() => verifyHs256(token, 'another-secret')).toThrow(/signature/);
  } finally {
    await client.close();
    await sim.close();
    rx.closeAllConnections();
    await new Promise<void>((resolve) => rx.close(() => resolve()));
  }
});
