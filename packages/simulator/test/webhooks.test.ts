import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LISTENER_CLASS, startSimulator, WebhookEventError, type Simulator } from '../src/index.js';
import { criteriaMatch, parseCriteria } from '../src/webhooks/criteria.js';

const S = '/v2/servers/_defaultServer_';
const W = `${S}/webhooks`;
const V = '_defaultVHost_';
const NEW = 'Wowza Streaming Engine 4.9.6 build20250620000000';
const SECRET = 'shared-hook-secret';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A loopback webhook target: records every request and answers with `reply` (default 200). */
async function startReceiver() {
  const requests: Received[] = [];
  let reply: (req: Received, res: ServerResponse) => void = (_r, res) => res.writeHead(200).end('{}');
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(r);
      reply(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    requests,
    answer(fn: typeof reply) {
      reply = fn;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are checked field by field
async function api(sim: Simulator, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(sim.url + path, {
    method,
    headers: {
      accept: 'application/json',
      authorization: 'Basic ' + Buffer.from(`${sim.username}:${sim.password}`).toString('base64'),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const target = (url: string, over: Record<string, unknown> = {}) => ({ id: 't1', url, headers: [{ name: 'X-Team', value: 'video' }], auth: { type: 'jwt', secret: SECRET }, ...over });
const filter = (over: Record<string, unknown> = {}) => ({
  id: 'f1',
  enabled: true,
  criteria: '>',
  targetRef: 't1',
  maxRetryAttempts: 0,
  retryDelay: 10,
  retryDelayUnit: 'ms',
  ...over,
});

async function installListener(sim: Simulator): Promise<void> {
  const current = (await api(sim, 'GET', S)).body;
  const listeners = current.serverListeners.serverListeners;
  const res = await api(sim, 'PUT', S, { ...current, serverListeners: { ...current.serverListeners, serverListeners: [...listeners, { baseClass: LISTENER_CLASS, order: listeners.length }] } });
  expect(res.status).toBe(200);
}

describe('webhook filter criteria', () => {
  const subject = { vHost: V, app: 'live', appInstance: '_definst_', stream: 'cam1.sdp', state: 'stopped' };
  const matches = (text: string, s: Record<string, string | undefined> = subject) => {
    const parsed = parseCriteria(text);
    if (!parsed.ok) throw new Error(parsed.message);
    return criteriaMatch(parsed.criteria, s);
  };

  it('matches token by token: * is one token, > one or more to the end (reference, "Webhooks", Filter)', () => {
    expect(matches('vHost.*.app.live.appInstance.*.stream.cam1.sdp.state.stopped')).toBe(true);
    expect(matches('vHost.*.app.live.>')).toBe(true);
    expect(matches('vHost.>')).toBe(true);
    expect(matches('>')).toBe(true);
    expect(matches('vHost.*.app.vod.>')).toBe(false);
    // A dotted stream name is two tokens: one * cannot stand for it. This is why the exporter's default is vHost.>.
    expect(matches('vHost.*.app.*.appInstance.*.stream.*.state.*')).toBe(false);
    expect(matches('vHost.*.app.*.appInstance.*.stream.*.*.state.*')).toBe(true);
    expect(matches('vHost.*.app.*.appInstance.*.stream.cam1.state.*')).toBe(false);
    const plain = { ...subject, stream: 'cam1' };
    expect(matches('vHost.*.app.*.appInstance.*.stream.*.state.*', plain)).toBe(true);
    expect(matches('vHost.*.app.*.appInstance.*.stream.*.state.started', plain)).toBe(false);
    // An application event has no stream part: patterns that spell one miss it, > does not.
    const appEvent = { vHost: V, app: 'live', appInstance: '_definst_', state: 'shutdown' };
    expect(matches('vHost.*.app.live.appInstance.*.stream.*.state.*', appEvent)).toBe(false);
    expect(matches('vHost.*.app.live.appInstance.*.state.*', appEvent)).toBe(true);
    expect(matches('vHost.>', appEvent)).toBe(true);
    // > needs at least one token.
    expect(matches('vHost.*.app.live.appInstance.*.state.shutdown.>', appEvent)).toBe(false);
  });

  it('rejects malformed criteria with a reason', () => {
    const reason = (text: string) => {
      const p = parseCriteria(text);
      return p.ok ? 'accepted' : p.message;
    };
    expect(reason('')).toMatch(/empty/);
    expect(reason('vHost.*.>.app')).toMatch(/">" must be the last token/);
    expect(reason('vHost..app')).toMatch(/empty token/);
    expect(reason('vHost.*.app.*.appInstance.*.stream.cam*.state.*')).toMatch(/whole tokens, not part of "cam\*"/);
    expect(reason('vHost.*.app.*')).toBe('accepted'); // a prefix; it matches only subjects of exactly that length
  });
});

describe('webhook configuration API', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ serverVersion: NEW, frozen: true });
  });
  afterAll(() => sim.close());

  it('starts empty, creates targets then filters, and refuses duplicates with 409', async () => {
    expect((await api(sim, 'GET', W)).body).toEqual({ serverName: '_defaultServer_', version: expect.any(String), webhooks: { debugLog: false, source: '_defaultServer_', filters: [], targets: [] } });
    // POST answers the created item (reference section 4), with its envelope.
    const created = await api(sim, 'POST', `${W}/targets`, { serverName: '_defaultServer_', ...target('http://127.0.0.1:9/hook') });
    expect(created).toEqual({ status: 201, body: { serverName: '_defaultServer_', version: expect.any(String), ...target('http://127.0.0.1:9/hook') } });
    const dup = await api(sim, 'POST', `${W}/targets`, target('http://127.0.0.1:9/other'));
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ success: false, code: '409', message: expect.stringContaining('t1') });

    expect((await api(sim, 'POST', `${W}/filters`, filter({ targetRef: 'nope' }))).body).toMatchObject({ code: '400', message: expect.stringMatching(/Target \(nope\) not found/) });
    expect(await api(sim, 'POST', `${W}/filters`, { serverName: '_defaultServer_', ...filter() })).toEqual({ status: 201, body: { serverName: '_defaultServer_', version: expect.any(String), ...filter() } });
    expect((await api(sim, 'POST', `${W}/filters`, filter())).body).toMatchObject({ code: '409' });

    const config = (await api(sim, 'GET', W)).body.webhooks;
    expect(config.targets).toEqual([{ id: 't1', url: 'http://127.0.0.1:9/hook', headers: [{ name: 'X-Team', value: 'video' }], auth: { type: 'jwt', secret: SECRET } }]);
    expect(config.filters).toEqual([filter()]);
    expect((await api(sim, 'GET', `${W}/filters/f1`)).body).toEqual({ serverName: '_defaultServer_', version: expect.any(String), ...filter() });
    expect((await api(sim, 'GET', `${W}/filters`)).body).toEqual({ serverName: '_defaultServer_', version: expect.any(String), filters: [filter()] });
    expect((await api(sim, 'GET', `${W}/targets`)).body).toMatchObject({ serverName: '_defaultServer_', targets: [{ id: 't1' }] });
    // A target without headers or auth: both null in the answer (reference section 4).
    const bare = await api(sim, 'POST', `${W}/targets`, { id: 't2', url: 'http://127.0.0.1:9/bare' });
    expect(bare.body).toMatchObject({ id: 't2', headers: null, auth: null });
    expect((await api(sim, 'DELETE', `${W}/targets/t2`)).body).toEqual({ success: true, message: 'Deleted', data: null });
  });

  it('takes the list form of POST, PUT of the whole config, and GET/PUT of the source', async () => {
    const list = await api(sim, 'POST', `${W}/targets`, { serverName: '_defaultServer_', targets: [{ id: 'l1', url: 'http://127.0.0.1:9/a' }, { id: 'l2', url: 'http://127.0.0.1:9/b' }] });
    expect(list.status).toBe(201);
    expect(list.body.targets.map((t: { id: string }) => t.id)).toEqual(['l1', 'l2']);
    expect((await api(sim, 'GET', `${W}/source`)).body).toEqual({ serverName: '_defaultServer_', version: expect.any(String), source: '_defaultServer_' });
    expect((await api(sim, 'PUT', `${W}/source`, { source: 'edge-7' })).body).toMatchObject({ source: 'edge-7' });
    const whole = (await api(sim, 'GET', W)).body;
    // PUT answers the webhooks object; a filter pointing at a target not in the body refuses the whole body.
    const refused = await api(sim, 'PUT', W, { ...whole, webhooks: { ...whole.webhooks, targets: [], filters: whole.webhooks.filters } });
    expect(refused.status).toBe(400);
    expect((await api(sim, 'GET', W)).body.webhooks.targets).toHaveLength(3);
    const kept = whole.webhooks.targets.filter((t: { id: string }) => t.id === 't1');
    const put = await api(sim, 'PUT', W, { ...whole, webhooks: { ...whole.webhooks, debugLog: true, source: '_defaultServer_', targets: kept } });
    expect(put).toEqual({ status: 200, body: { debugLog: true, source: '_defaultServer_', filters: whole.webhooks.filters, targets: kept } });
  });

  it('refuses bodies that are not JSON with 415 and incomplete ones with 400 naming the fields', async () => {
    const noType = await fetch(`${sim.url}${W}/targets`, {
      method: 'POST',
      headers: { accept: 'application/json', authorization: 'Basic ' + Buffer.from('admin:admin').toString('base64'), 'content-type': 'text/plain' },
      body: JSON.stringify(target('http://127.0.0.1:9/x', { id: 't9' })),
    });
    expect(noType.status).toBe(415);
    expect(await noType.json()).toMatchObject({ success: false, code: '415' });
    expect((await api(sim, 'POST', `${W}/targets`, '{"id": "t9",')).status).toBe(415);

    const missing = await api(sim, 'POST', `${W}/filters`, { id: 'f9' });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toBe('missing required fields: enabled, criteria, targetRef');
    expect((await api(sim, 'POST', `${W}/targets`, { id: 't9' })).body.message).toBe('missing required field: url');
    expect((await api(sim, 'POST', `${W}/filters`, filter({ id: 'f9', criteria: 'vHost..app.>' }))).body.message).toMatch(/invalid criteria "vHost\.\.app\.>"/);
    expect((await api(sim, 'POST', `${W}/filters`, filter({ id: 'f9', retryDelayUnit: 'h' }))).body.message).toMatch(/retryDelayUnit/);
    expect((await api(sim, 'POST', `${W}/targets`, target('ftp://x', { id: 't9' }))).body.message).toMatch(/http or https/);
    expect((await api(sim, 'POST', `${W}/targets`, target('http://x', { id: 't9', auth: { type: 'basic' } }))).body.message).toMatch(/auth.type must be "jwt"/);
    expect((await api(sim, 'GET', W)).body.webhooks.targets.map((t: { id: string }) => t.id)).toEqual(['t1']);
  });

  it('updates with PUT, deletes with DELETE, and keeps a target that a filter uses', async () => {
    expect(await api(sim, 'PUT', `${W}/targets/t1`, target('http://127.0.0.1:9/moved'))).toEqual({ status: 200, body: { serverName: '_defaultServer_', version: expect.any(String), ...target('http://127.0.0.1:9/moved') } });
    expect((await api(sim, 'GET', `${W}/targets/t1`)).body.url).toBe('http://127.0.0.1:9/moved');
    expect((await api(sim, 'PUT', `${W}/targets/zz`, target('http://x', { id: 'zz' }))).status).toBe(404);
    expect((await api(sim, 'PUT', `${W}/targets/t1`, target('http://x', { id: 'other' }))).body.message).toMatch(/does not match/);
    expect((await api(sim, 'PUT', `${W}/filters/f1`, filter({ enabled: false }))).status).toBe(200);
    expect((await api(sim, 'PUT', `${W}/filters/f1`, filter({ targetRef: 'gone' }))).status).toBe(400);

    expect((await api(sim, 'DELETE', `${W}/targets/t1`)).body).toMatchObject({ code: '409', message: expect.stringContaining('f1') });
    expect((await api(sim, 'DELETE', `${W}/filters/f1`)).status).toBe(200);
    expect((await api(sim, 'DELETE', `${W}/targets/t1`)).status).toBe(200);
    expect((await api(sim, 'DELETE', `${W}/targets/t1`)).status).toBe(404);
    expect((await api(sim, 'GET', W)).body.webhooks).toMatchObject({ filters: [], targets: [] });
  });

  it('serves the server config and replaces its listener list on PUT', async () => {
    const before = (await api(sim, 'GET', S)).body;
    expect(before).toMatchObject({ serverName: '_defaultServer_', serverListeners: { serverListeners: [expect.objectContaining({ baseClass: expect.any(String), order: 0 })] } });
    await installListener(sim);
    const after = (await api(sim, 'GET', S)).body;
    expect(after.serverListeners.serverListeners.map((l: { baseClass: string }) => l.baseClass)).toContain(LISTENER_CLASS);
    const bad = await api(sim, 'PUT', S, { serverListeners: { serverListeners: [{ order: 1 }] } });
    expect(bad.body).toMatchObject({ code: '400', message: 'missing required field: serverListeners.serverListeners[0].baseClass' });
    expect((await api(sim, 'GET', S)).body.serverListeners).toEqual(after.serverListeners);
    expect((await api(sim, 'PUT', S, { serverName: 'other' })).status).toBe(400);
  });

  it('answers 404 on servers before 4.9.6, whose server config still exists', async () => {
    const old = await startSimulator({ serverVersion: 'Wowza Streaming Engine 4.9.4 build20250114124522' });
    try {
      const res = await api(old, 'GET', W);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false, code: '404' });
      expect((await api(old, 'POST', `${W}/targets`, target('http://x'))).status).toBe(404);
      expect((await api(old, 'GET', S)).status).toBe(200);
      expect(old.webhooks.supported).toBe(false);
      expect(await old.webhooks.fire({ name: 'stream.stopped' })).toEqual([]);
    } finally {
      await old.close();
    }
  });
});

describe('webhook delivery', () => {
  let sim: Simulator;
  let rx: Receiver;
  beforeEach(async () => {
    rx = await startReceiver();
    sim = await startSimulator({ serverVersion: NEW, frozen: true, webhookTimeoutMs: 300 });
  });
  afterEach(async () => {
    await sim.close();
    await rx.close();
  });

  async function configure(over: Record<string, unknown> = {}, listener = true) {
    expect((await api(sim, 'POST', `${W}/targets`, target(rx.url))).status).toBe(201);
    expect((await api(sim, 'POST', `${W}/filters`, filter(over))).status).toBe(201);
    if (listener) await installListener(sim);
  }
  const bodies = () => rx.requests.map((r) => JSON.parse(r.body) as { id: string; name: string; context: Record<string, string> });

  it('delivers nothing without the WebhookListener server listener', async () => {
    await configure({}, false);
    expect(await sim.webhooks.fire({ name: 'stream.started', context: { vhost: V, app: 'live', appInstance: '_definst_', stream: 'x' } })).toEqual([]);
    sim.topology.stopStream(V, 'cameras', 'cam3');
    await sim.webhooks.settled();
    expect(rx.requests).toHaveLength(0);
    expect(sim.webhooks.deliveries).toHaveLength(0);
  });

  it('posts the event signed with the target secret, with the target headers', async () => {
    await configure();
    const before = Date.now();
    const [outcome] = await sim.webhooks.fire({ name: 'stream.stopped', context: { vhost: V, app: 'live', appInstance: '_definst_', stream: 'stream1' } });
    expect(outcome).toMatchObject({ filter: 'f1', target: 't1', delivered: true, attempts: 1 });
    expect(rx.requests).toHaveLength(1);
    const { headers, body } = rx.requests[0]!;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['x-team']).toBe('video');
    // An HS256 JWT keyed with the target's secret (test/unit/simulator-webhooks.test.ts has the exporter verify one).
    const token = /^Bearer (\S+)$/.exec(String(headers.authorization))![1]!;
    const [h, p, sig] = token.split('.') as [string, string, string];
    expect(JSON.parse(Buffer.from(h, 'base64url').toString('utf8'))).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(sig).toBe(createHmac('sha256', SECRET).update(`${h}.${p}`).digest('base64url'));
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>;
    expect(claims).toMatchObject({ iss: '_defaultServer_' });
    expect((claims.exp as number) - (claims.iat as number)).toBe(60);
    const payload = JSON.parse(body);
    expect(payload).toEqual({
      id: outcome!.eventId,
      timestamp: expect.any(Number),
      name: 'stream.stopped',
      source: '_defaultServer_',
      version: '1.0',
      context: { vhost: V, app: 'live', appInstance: '_definst_', stream: 'stream1', state: 'stopped' },
      data: {},
    });
    expect(payload.timestamp).toBeGreaterThanOrEqual(before);
    expect(sim.webhooks.deliveries).toEqual([expect.objectContaining({ eventId: payload.id, url: rx.url, status: 200, ok: true, attempt: 1 })]);
    // Every event gets its own id.
    await sim.webhooks.fire({ name: 'stream.started', context: { vhost: V, app: 'live', appInstance: '_definst_', stream: 'stream1' } });
    expect(new Set(bodies().map((b) => b.id)).size).toBe(2);
  });

  it('sends only what an enabled filter matches', async () => {
    await configure({ criteria: 'vHost.*.app.cameras.>' });
    await sim.webhooks.fire({ name: 'stream.stopped', context: { vhost: V, app: 'live', appInstance: '_definst_', stream: 's' } });
    await sim.webhooks.fire({ name: 'stream.stopped', context: { vhost: V, app: 'cameras', appInstance: '_definst_', stream: 's' } });
    expect(bodies().map((b) => b.context.app)).toEqual(['cameras']);
    await api(sim, 'PUT', `${W}/filters/f1`, filter({ criteria: 'vHost.*.app.cameras.>', enabled: false }));
    expect(await sim.webhooks.fire({ name: 'stream.stopped', context: { vhost: V, app: 'cameras', appInstance: '_definst_', stream: 's' } })).toEqual([]);
    expect(rx.requests).toHaveLength(1);
  });

  it('announces topology changes after they are made', async () => {
    await configure();
    // What the API says at the moment each event arrives.
    const seen: Array<[string, string, boolean | undefined]> = [];
    rx.answer((r, res) => {
      const e = JSON.parse(r.body) as { name: string; context: { app: string; stream?: string } };
      const stream = sim.topology.streams().find((s) => s.app === e.context.app && s.stream === e.context.stream);
      seen.push([e.name, e.context.stream ?? '', stream?.connected]);
      res.writeHead(204).end();
    });
    sim.topology.stopStream(V, 'cameras', 'cam3');
    await sim.webhooks.settled();
    sim.topology.startStream(V, 'cameras', 'cam3');
    await sim.webhooks.settled();
    expect(seen).toEqual([
      ['stream.stopped', 'cam3', false],
      ['stream.started', 'cam3', true],
    ]);

    seen.length = 0;
    sim.topology.stopApp(V, 'cameras');
    await sim.webhooks.settled();
    expect(seen.map(([name, stream]) => `${name} ${stream}`).sort()).toEqual(['app.shutdown ', 'stream.stopped cam1', 'stream.stopped cam2', 'stream.stopped cam3']);
    const shutdown = bodies().find((b) => b.name === 'app.shutdown')!;
    expect(shutdown.context).toEqual({ vhost: V, app: 'cameras', appInstance: '_definst_', state: 'shutdown' });

    seen.length = 0;
    sim.topology.addStream(V, 'cameras', 'cam9');
    await sim.webhooks.settled();
    expect(seen.map(([name, stream]) => `${name} ${stream}`)).toEqual(['app.started ', 'stream.started cam9']);
  });

  it('retries a failed delivery with the same event id, then succeeds', async () => {
    await configure({ maxRetryAttempts: 3, retryDelay: 20, retryDelayUnit: 'ms' });
    let calls = 0;
    rx.answer((_r, res) => res.writeHead(++calls <= 2 ? 500 : 200).end());
    const started = Date.now();
    const [outcome] = await sim.webhooks.fire({ name: 'stream.started', context: { vhost: V, app: 'live', appInstance: '_definst_', stream: 'x' } });
    expect(outcome).toMatchObject({ delivered: true, attempts: 3 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
    expect(sim.webhooks.deliveries.map((d) => [d.attempt, d.status, d.ok])).toEqual([
      [1, 500, false],
      [2, 500, false],
      [3, 200, true],
    ]);
    expect(new Set(bodies().map((b) => b.id)).size).toBe(1);
  });

  it('gives up after maxRetryAttempts, and records timeouts and refused connections without throwing', async () => {
    await configure({ maxRetryAttempts: 1, retryDelay: 5 });
    rx.answer((_r, res) => res.writeHead(503).end());
    expect((await sim.webhooks.fire({ name: 'stream.stopped' }))[0]).toMatchObject({ delivered: false, attempts: 2 });

    rx.answer(() => {}); // never answers
    const [timedOut] = await sim.webhooks.fire({ name: 'stream.stopped' });
    expect(timedOut).toMatchObject({ delivered: false, attempts: 2 });
    expect(sim.webhooks.deliveries.at(-1)).toMatchObject({ ok: false, error: 'no answer within 300 ms' });
    expect(sim.webhooks.deliveries.at(-1)!.status).toBeUndefined();

    await rx.close();
    expect(() => sim.topology.stopStream(V, 'cameras', 'cam3')).not.toThrow();
    await sim.webhooks.settled();
    expect(sim.webhooks.deliveries.at(-1)).toMatchObject({ ok: false, error: 'ECONNREFUSED' });
    expect(sim.topology.streams().find((s) => s.stream === 'cam3')!.connected).toBe(false);
  });

  it('close() cancels retries that are waiting', async () => {
    await configure({ maxRetryAttempts: 5, retryDelay: 1, retryDelayUnit: 'm' });
    rx.answer((_r, res) => res.writeHead(500).end());
    const outcome = sim.webhooks.fire({ name: 'stream.stopped' });
    await new Promise<void>((resolve, reject) => {
      const until = Date.now() + 2000;
      const check = () => (sim.webhooks.deliveries.length > 0 ? resolve() : Date.now() > until ? reject(new Error('no attempt')) : setTimeout(check, 5));
      check();
    });
    const started = Date.now();
    await sim.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await outcome)[0]).toMatchObject({ delivered: false, attempts: 1 });
    expect(rx.requests).toHaveLength(1);
  });

  it('refuses an event that is not well formed', () => {
    expect(() => sim.webhooks.fire({ name: 'not an event' })).toThrow(WebhookEventError);
    expect(() => sim.webhooks.fire({ name: 'stream.stopped', context: { stream: 5 as never } })).toThrow(/context.stream must be a string/);
  });
});
