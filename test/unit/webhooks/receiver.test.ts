import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/base/logger.js';
import type { WebhookEvent } from '../../../src/webhooks/event.js';
import { signHs256, verifyHs256 } from '../../../src/webhooks/jwt.js';
import { createWebhookReceiver, lifetimeProblem } from '../../../src/webhooks/receiver.js';

const SECRET = 'hook-secret-123';
let server: Server;
let url: string;
const registry = new Registry();
const received: Array<[string, WebhookEvent]> = [];

beforeAll(async () => {
  const handler = createWebhookReceiver({
    secret: SECRET,
    registry,
    logger: silentLogger(),
    resolveServer: () => 'wse-1',
    knownApplications: () => new Set(['live', 'a']),
    onEvent: (s, e) => {
      received.push([s, e]);
    },
  });
  server = createServer((req, res) => void handler(req, res, new URL(req.url!, 'http://x')));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/wowza`;
});
afterAll(() => new Promise((r) => server.close(r)));

const now = () => Math.floor(Date.now() / 1000);
const event = (id: string, over: Record<string, unknown> = {}) => ({
  id,
  timestamp: Date.now(),
  name: 'stream.stopped',
  source: 'wse-1',
  version: '1.0',
  context: { vhost: '_defaultVHost_', app: 'live', appInstance: '_definst_', stream: 'cam1', state: 'stopped' },
  data: {},
  ...over,
});
const post = (body: string, token?: string, contentType = 'application/json', to = url) =>
  fetch(to, { method: 'POST', body, headers: { 'content-type': contentType, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
let nonce = 0;
/** A token as a webhook target signs one: fresh for each event, living a minute. */
const tok = (claims: Record<string, unknown> = {}, secret = SECRET) => signHs256({ iat: now(), exp: now() + 60, jti: `t${nonce++}`, ...claims }, secret);

async function metric(name: string): Promise<string> {
  return (await registry.getSingleMetricAsString(name)) ?? '';
}

describe('JWT', () => {
  it('verifies HS256 and rejects tampering, other algorithms and expiry', () => {
    const token = signHs256({ iat: now(), exp: now() + 60, custom: 'ok' }, SECRET);
    expect(verifyHs256(token, SECRET).custom).toBe('ok');
    expect(() => verifyHs256(token, 'other')).toThrow(/signature/);
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{}').toString('base64url')}.`;
    expect(() => verifyHs256(none, SECRET)).toThrow(/not HS256/);
    expect(() => verifyHs256(signHs256({ exp: now() - 120 }, SECRET), SECRET)).toThrow(/expired/);
    expect(verifyHs256(signHs256({ exp: now() - 10 }, SECRET), SECRET)).toBeTruthy(); // within the skew
    expect(() => verifyHs256(signHs256({ nbf: now() + 120 }, SECRET), SECRET)).toThrow(/not valid yet/);
    expect(() => verifyHs256('abc', SECRET)).toThrow(/not a JWT/);
  });
});

describe('webhook receiver', () => {
  it('accepts a signed event, counts it and hands it on', async () => {
    const res = await post(JSON.stringify(event('e1')), tok());
    expect(res.status).toBe(202);
    await new Promise((r) => setTimeout(r, 20));
    expect(received.map(([s, e]) => [s, e.name, e.context.stream])).toEqual([['wse-1', 'stream.stopped', 'cam1']]);
    expect(await metric('wowza_webhook_events_total')).toContain('wowza_webhook_events_total{server="wse-1",event="stream.stopped",application="live"} 1');
    expect(await metric('wowza_stream_last_event_timestamp_seconds')).toContain('stream="cam1",state="stopped"}');
  });

  it('drops a redelivered id (the same event may come with its token again)', async () => {
    const token = tok();
    // A sender's retry sends the same bytes.
    const body = JSON.stringify(event('dup'));
    await post(body, token);
    const again = await post(body, token);
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('duplicate');
    expect(received.filter(([, e]) => e.id === 'dup')).toHaveLength(1);
  });

  it('keeps only the latest state per stream', async () => {
    await post(JSON.stringify(event('s1', { name: 'stream.started', context: { vhost: 'v', app: 'a', appInstance: 'i', stream: 'z', state: 'started' } })), tok());
    await post(JSON.stringify(event('s2', { context: { vhost: 'v', app: 'a', appInstance: 'i', stream: 'z', state: 'stopped' } })), tok());
    const text = await metric('wowza_stream_last_event_timestamp_seconds');
    expect(text).toContain('stream="z",state="stopped"');
    expect(text).not.toContain('stream="z",state="started"');
  });

  it('rejects bad deliveries with the right status and counts them', async () => {
    const replayed = tok();
    expect((await post(JSON.stringify(event('r1')), replayed)).status).toBe(202);
    const cases: Array<[() => Promise<Response>, number, string]> = [
      [() => post(JSON.stringify(event('x1'))), 401, 'unauthorized'],
      [() => post(JSON.stringify(event('x2')), tok({}, 'wrong')), 401, 'unauthorized'],
      [() => post(JSON.stringify(event('x3')), tok({ iat: now() - 3700, exp: now() - 3600 })), 401, 'expired'],
      // A token that never ends, or says so in a string, or lives for a day, is worth too much to whoever sniffs it.
      [() => post(JSON.stringify(event('x8')), signHs256({ iat: now() }, SECRET)), 401, 'unauthorized'],
      [() => post(JSON.stringify(event('x9')), signHs256({ iat: now(), exp: String(now() + 60) }, SECRET)), 401, 'unauthorized'],
      [() => post(JSON.stringify(event('x10')), tok({ exp: now() + 86_400 })), 401, 'unauthorized'],
      [() => post(JSON.stringify(event('x11')), signHs256({ exp: now() + 86_400 }, SECRET)), 401, 'unauthorized'],
      // The same token with a new event id: a replay.
      [() => post(JSON.stringify(event('x12')), replayed), 401, 'replayed'],
      // The raw secret is a static token, which this receiver (webhooks.auth: jwt) does not take.
      [() => post(JSON.stringify(event('x7')), SECRET), 401, 'unauthorized'],
      // What a page on another site can make a browser send without asking first.
      [() => post(JSON.stringify(event('x13')), tok(), 'text/plain;charset=UTF-8'), 415, 'unsupported_media_type'],
      [() => post('a=b', tok(), 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type'],
      [() => post('{"id": ', tok()), 400, 'malformed_json'],
      [() => post(JSON.stringify([event('x4')]), tok()), 400, 'invalid'],
      [() => post(JSON.stringify({ ...event('x5'), pad: 'x'.repeat(70 * 1024) }), tok()), 413, 'too_large'],
      [() => fetch(url), 405, 'method'],
    ];
    for (const [send, status, reason] of cases) expect((await send()).status, reason).toBe(status);
    const text = await metric('wowza_webhook_rejected_total');
    for (const [, , reason] of cases) expect(text).toContain(`reason="${reason}"`);
    expect(received.some(([, e]) => e.id.startsWith('x'))).toBe(false);
  });

  it('label values come from bounded sets: 300 made-up event names and applications add a few series, not 300', async () => {
    const series = async () => (await metric('wowza_webhook_events_total')).split('\n').filter((l) => l.startsWith('wowza_webhook_events_total{')).length;
    const before = await series();
    for (let i = 0; i < 300; i++) {
      const name = i % 2 ? `recording.made_up_${i}` : `evil ${i}`;
      expect((await post(JSON.stringify(event(`m${i}`, { name, context: { vhost: 'v', app: `app${i}`, appInstance: 'i', stream: `s${i}` } })), tok())).status).toBe(202);
    }
    expect((await series()) - before).toBeLessThanOrEqual(40);
    const text = await metric('wowza_webhook_events_total');
    expect(text).toContain('event="other",application="other"');
    expect(text).not.toContain('app299');
    // Streams of applications discovery does not know get no series of their own either.
    expect(await metric('wowza_stream_last_event_timestamp_seconds')).not.toContain('s299');
  });

  it('reads an unexpected shape leniently and counts what it could not read, instead of answering 400', async () => {
    const good = () => tok();
    const take = async (body: Record<string, unknown>) => {
      const res = await post(JSON.stringify(body), good());
      expect(res.status).toBe(202);
      return received.at(-1)![1];
    };
    // Timestamps as epoch seconds, ms (number or digits) and ISO 8601 all become epoch ms.
    expect((await take(event('t-s', { timestamp: 1_700_000_000 }))).timestamp).toBe(1_700_000_000_000);
    expect((await take(event('t-ms', { timestamp: 1_700_000_000_123 }))).timestamp).toBe(1_700_000_000_123);
    expect((await take(event('t-digits', { timestamp: '1700000000123' }))).timestamp).toBe(1_700_000_000_123);
    expect((await take(event('t-iso', { timestamp: '2026-11-24T10:00:00.500Z' }))).timestamp).toBe(Date.parse('2026-11-24T10:00:00.500Z'));
    // Names of any characters, stream names with dots.
    const dotted = await take(event('n-1', { name: 'stream.state.changed v2', context: { vhost: '_defaultVHost_', app: 'live', appInstance: '_definst_', stream: 'cam1.sdp' } }));
    expect(dotted.name).toBe('stream.state.changed v2');
    expect(dotted.context.stream).toBe('cam1.sdp');
    // No id: one derived from the body, so the same body delivered twice is still a duplicate.
    const { id: _id, ...noId } = event('unused');
    const derived = await take(noId);
    expect(derived.id).toMatch(/^sha256:[0-9a-f]{32}$/);
    const again = await post(JSON.stringify(noId), good());
    expect(await again.text()).toContain('duplicate');
    // Unreadable fields: the arrival time, "unknown", and each counted by field.
    const before = Date.now();
    const odd = await take({ id: 'odd-1', timestamp: 'soon', name: 42, context: 'live' });
    expect(odd.timestamp).toBeGreaterThanOrEqual(before);
    expect(odd.name).toBe('42');
    const bare = await take({ id: 'odd-2', timestamp: 'soon' });
    expect(bare.name).toBe('unknown');
    const text = await metric('wowza_webhook_unreadable_fields_total');
    expect(text).toMatch(/wowza_webhook_unreadable_fields_total\{field="timestamp"\} 2/);
    expect(text).toMatch(/wowza_webhook_unreadable_fields_total\{field="name"\} 1/);
    expect(text).toMatch(/wowza_webhook_unreadable_fields_total\{field="context"\} 1/);
  });
});

describe('webhook receiver with webhooks.auth: token', () => {
  it('takes the secret itself as a static Bearer token (webhooks setup --auth header), and nothing else', async () => {
    const got: WebhookEvent[] = [];
    const handler = createWebhookReceiver({ secret: SECRET, auth: 'token', registry: new Registry(), logger: silentLogger(), resolveServer: () => 'wse-1', onEvent: (_s, e) => void got.push(e) });
    const srv = createServer((req, res) => void handler(req, res, new URL(req.url!, 'http://x')));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const to = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/`;
    try {
      expect((await post(JSON.stringify(event('static-1')), SECRET, 'application/json', to)).status).toBe(202);
      expect((await post(JSON.stringify(event('static-2')), SECRET, 'application/json', to)).status).toBe(202);
      expect((await post(JSON.stringify(event('static-3')), SECRET + 'x', 'application/json', to)).status).toBe(401);
      // A JWT, even a good one, is not the configured kind.
      expect((await post(JSON.stringify(event('static-4')), tok(), 'application/json', to)).status).toBe(401);
      expect(got.map((e) => e.id)).toEqual(['static-1', 'static-2']);
    } finally {
      await new Promise((r) => srv.close(r));
    }
  });
});

describe('webhooks setup against answers the simulator does not give', () => {
  it('treats success:false inside a 2xx save answer as a failure, and a wrapper without "webhooks" as unparsable', async () => {
    let wrapper: unknown = { serverName: '_defaultServer_', webhooks: { debugLog: false, source: 'x', filters: [], targets: [] } };
    const api = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.method === 'GET' && req.url!.endsWith('/webhooks')) res.end(JSON.stringify(wrapper));
      else if (req.method === 'GET') res.end(JSON.stringify({ serverName: '_defaultServer_', serverListeners: { serverListeners: [] } }));
      else res.end(JSON.stringify({ success: false, message: 'Target could not be saved', data: null }));
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    const { WowzaClient } = await import('../../../src/wowza/client.js');
    const { setupWebhooks } = await import('../../../src/webhooks/setup.js');
    const client = new WowzaClient({
      name: 'wse',
      url: `http://127.0.0.1:${(api.address() as AddressInfo).port}`,
      auth: 'basic',
      username: 'admin',
      password: 'admin',
      timeoutMs: 2000,
      maxResponseBytes: 1 << 20,
      serverName: '_defaultServer_',
      connections: 1,
    });
    try {
      await expect(setupWebhooks(client, { targetUrl: 'http://127.0.0.1:9935/webhooks/wowza', secret: SECRET })).rejects.toThrow(
        /write target wowza-exporter: the server answered without saving: Target could not be saved/,
      );
      wrapper = { serverName: '_defaultServer_', filters: [], targets: [] };
      await expect(setupWebhooks(client, { targetUrl: 'http://127.0.0.1:9935/webhooks/wowza', secret: SECRET })).rejects.toThrow(/returned an unusable body: field webhooks: Invalid input: expected object, received undefined/);
    } finally {
      await client.close();
      await new Promise((r) => api.close(r));
    }
  });
});

describe('what the receiver remembers is bounded in count and in time', () => {
  // With webhooks.auth: token (no jti). With JWTs, an id is kept as long as its token's jti: see the replays below.
  it('an event id is forgotten after dedupe_window newer ones, or after its time: the same id is then taken again', async () => {
    const bounded = new Registry();
    const taken: string[] = [];
    const handler = createWebhookReceiver({
      secret: SECRET,
      auth: 'token',
      registry: bounded,
      logger: silentLogger(),
      dedupeWindow: 3,
      dedupeTtlMs: 2000,
      resolveServer: () => 'wse-1',
      onEvent: (_s, e) => {
        taken.push(e.id);
      },
    });
    const srv = createServer((req, res) => void handler(req, res, new URL(req.url!, 'http://x')));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const to = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hook`;
    const send = async (id: string) => (await post(JSON.stringify(event(id)), SECRET, 'application/json', to)).status;
    try {
      expect(await send('b0')).toBe(202);
      expect(await send('b0')).toBe(200); // remembered
      for (const id of ['b1', 'b2', 'b3']) expect(await send(id)).toBe(202);
      expect(await send('b0')).toBe(202); // three newer ids pushed it out
      await new Promise((r) => setTimeout(r, 2100));
      expect(await send('b3')).toBe(202); // its time passed
      expect(taken).toEqual(['b0', 'b1', 'b2', 'b3', 'b0', 'b3']);
      expect(await bounded.getSingleMetricAsString('wowza_webhook_duplicates_total')).toMatch(/^wowza_webhook_duplicates_total 1$/m);
    } finally {
      await new Promise((r) => srv.close(r));
    }
  });
});

/**
 * Issue 47: three replays the receiver took. A jti bound only the event id, and event ids were forgotten sooner than
 * jtis; a lifetime measured from `iat` let a token dated ahead live until then; long jtis were cut and collided.
 */
describe('replays (issue 47)', () => {
  let srv: Server;
  let to: string;
  let reg: Registry;
  const taken: WebhookEvent[] = [];
  beforeAll(async () => {
    reg = new Registry();
    const handler = createWebhookReceiver({ secret: SECRET, registry: reg, logger: silentLogger(), resolveServer: () => 'wse-1', knownApplications: () => new Set(['live']), onEvent: (_s, e) => void taken.push(e) });
    srv = createServer((req, res) => void handler(req, res, new URL(req.url!, 'http://x')));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    to = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hook`;
  });
  afterAll(() => new Promise((r) => srv.close(r)));

  const send = (body: string, token: string) => post(body, token, 'application/json', to);
  /** A sample's value, or undefined when the series is absent. */
  const value = async (name: string, labels = '') => {
    const line = ((await reg.getSingleMetricAsString(name)) ?? '').split('\n').find((l) => l.startsWith(`${name}${labels} `));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  };
  const refusal = async (res: Response) => ({ status: res.status, error: ((await res.json()) as { error: string }).error });

  it("a sender's retry (the same token, event id and body) is acknowledged and counted once", async () => {
    const token = tok({ jti: 'retry-1' });
    const body = JSON.stringify(event('retry-1'));
    expect((await send(body, token)).status).toBe(202);
    const again = await send(body, token);
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('duplicate');
    expect(taken.filter((e) => e.id === 'retry-1')).toHaveLength(1);
    expect(await value('wowza_webhook_events_total', '{server="wse-1",event="stream.stopped",application="live"}')).toBe(1);
    expect(await value('wowza_webhook_duplicates_total')).toBe(1);
    expect(await reg.getSingleMetricAsString('wowza_webhook_rejected_total')).not.toContain('reason=');
  });

  it('a token with its event id and a new body is refused after 10,008 other events, and its retry is still a duplicate', async () => {
    const token = tok({ jti: 'victim' });
    const original = JSON.stringify(event('victim'));
    expect((await send(original, token)).status).toBe(202);
    // 10,008 other events, each with its own token: more than the 10,000 event ids remembered before issue 47.
    for (let i = 0; i < 10_008; i += 48) {
      const batch = Array.from({ length: Math.min(48, 10_008 - i) }, (_, k) => send(JSON.stringify(event(`other-${i + k}`)), tok()).then((r) => r.status));
      expect(new Set(await Promise.all(batch))).toEqual(new Set([202]));
    }
    const replay = await send(JSON.stringify(event('victim', { name: 'app.shutdown', context: { vhost: '_defaultVHost_', app: 'live', appInstance: '_definst_' } })), token);
    expect(await refusal(replay)).toEqual({ status: 401, error: 'this token (its jti) already came with another event (another id or another body)' });
    expect(await value('wowza_webhook_rejected_total', '{reason="replayed"}')).toBe(1);
    expect(await value('wowza_webhook_events_total', '{server="wse-1",event="app.shutdown",application="live"}')).toBeUndefined();
    expect(taken.filter((e) => e.id === 'victim').map((e) => e.name)).toEqual(['stream.stopped']);
    // The sender's own retry of the first delivery, that late, is still acknowledged and not counted again.
    const duplicatesBefore = (await value('wowza_webhook_duplicates_total')) ?? 0;
    expect((await send(original, token)).status).toBe(200);
    expect(await value('wowza_webhook_duplicates_total')).toBe(duplicatesBefore + 1);
    expect(taken.filter((e) => e.id === 'victim')).toHaveLength(1);
  }, 120_000);

  it('a token whose iat is ahead of the clock by more than webhooks.clock_skew is refused; within the skew it is taken', async () => {
    const year = 365 * 86_400;
    const ahead = await send(JSON.stringify(event('ahead-year')), tok({ iat: now() + year, exp: now() + year + 60 }));
    expect(ahead.status).toBe(401);
    expect((await refusal(ahead)).error).toMatch(/^the token's iat \(issued at\) is 3153\d{4} s ahead of this clock, more than the 30 s taken \(webhooks\.clock_skew\)$/);
    // Five minutes ahead, ending within the 10 minutes taken from now: only its iat tells.
    const minutes = await send(JSON.stringify(event('ahead-5min')), tok({ iat: now() + 300, exp: now() + 360 }));
    expect((await refusal(minutes)).error).toMatch(/iat \(issued at\) is (?:29|30)\d s ahead/);
    expect(minutes.status).toBe(401);
    expect(await value('wowza_webhook_rejected_total', '{reason="expired"}')).toBe(2);
    expect((await send(JSON.stringify(event('ahead-10s')), tok({ iat: now() + 10, exp: now() + 70 }))).status).toBe(202);
    expect(taken.map((e) => e.id).filter((id) => id.startsWith('ahead-'))).toEqual(['ahead-10s']);
  });

  it('the lifetime is measured from now: a token good for longer than webhooks.max_token_lifetime is refused, whatever its iat says', () => {
    const t = 1_800_000_000;
    expect(lifetimeProblem({ iat: t + 86_400, exp: t + 86_460 }, t, 600, 30)).toBe('the token is good for 86460 s more, longer than the 600 s taken (webhooks.max_token_lifetime)');
    expect(lifetimeProblem({ iat: t - 86_400, exp: t + 60 }, t, 600, 30)).toBe('the token lives 86460 s, longer than the 600 s taken (webhooks.max_token_lifetime)');
    expect(lifetimeProblem({ exp: t + 630 }, t, 600, 30)).toBeUndefined();
    expect(lifetimeProblem({ iat: t, exp: t + 60 }, t, 600, 30)).toBeUndefined();
  });

  it('a jti over 256 characters is refused, not cut (two cut ones were the same)', async () => {
    const long = 'j'.repeat(300);
    const unauthorizedBefore = (await value('wowza_webhook_rejected_total', '{reason="unauthorized"}')) ?? 0;
    for (const [id, jti] of [['long-a', `${long}a`], ['long-b', `${long}b`]] as const) {
      const res = await send(JSON.stringify(event(id)), tok({ jti }));
      expect(await refusal(res)).toEqual({ status: 401, error: "the token's jti is 301 characters long, more than the 256 taken" });
    }
    expect(await value('wowza_webhook_rejected_total', '{reason="unauthorized"}')).toBe(unauthorizedBefore + 2);
    expect((await send(JSON.stringify(event('long-256')), tok({ jti: 'k'.repeat(256) }))).status).toBe(202);
    expect(taken.map((e) => e.id).filter((id) => id.startsWith('long-'))).toEqual(['long-256']);
  });
});
