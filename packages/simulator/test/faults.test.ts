import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../src/index.js';

const MACHINE = '/v2/machine/monitoring/current';
const STATUS = '/v2/servers/_defaultServer_/status';
const APP_TEMPLATE = '/v2/servers/{server}/vhosts/{vhost}/applications/{app}/monitoring/current';
const APP = '/v2/servers/_defaultServer_/vhosts/_defaultVHost_/applications/live/monitoring/current';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ frozen: true });
});
afterAll(() => sim.close());
afterEach(() => {
  sim.faults.clear();
  sim.counters.reset();
});

const auth = () => 'Basic ' + Buffer.from(`${sim.username}:${sim.password}`).toString('base64');

async function get(path: string, opts: { accept?: string; authorized?: boolean; timeoutMs?: number } = {}) {
  const headers: Record<string, string> = { accept: opts.accept ?? 'application/json' };
  if (opts.authorized !== false) headers.authorization = auth();
  const res = await request(sim.url + path, { headers, signal: opts.timeoutMs ? AbortSignal.timeout(opts.timeoutMs) : undefined });
  const body = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body };
}

describe('simulator faults', () => {
  it('answers a status with the Wowza error envelope, `times` times, then recovers', async () => {
    sim.faults.inject('*', 500, { times: 2 });
    for (let i = 0; i < 2; i++) {
      const r = await get(MACHINE);
      expect(r.status).toBe(500);
      expect(JSON.parse(r.body)).toEqual({ success: false, message: 'Internal Server Error', code: '500', data: null, wowzaServer: '4.9.4' });
    }
    expect((await get(MACHINE)).status).toBe(200);
    expect(sim.faults.active()).toEqual([]);

    sim.faults.inject('/v2/servers/{server}/status', { type: 'status', status: 402, message: 'License expired' });
    expect(JSON.parse((await get(STATUS)).body)).toMatchObject({ code: '402', message: 'License expired' });
    expect((await get(MACHINE)).status).toBe(200);
  });

  it('prefers a route fault over a `*` fault, and matches templates with or without the method', async () => {
    sim.faults.inject('*', 503);
    sim.faults.inject(`GET ${APP_TEMPLATE}`, 'text');
    expect((await get(APP)).headers['content-type']).toMatch(/text\/plain/);
    expect((await get(MACHINE)).status).toBe(503);
    sim.faults.clear();
    const remove = sim.faults.inject(APP_TEMPLATE, 'html');
    const html = await get(APP);
    expect(html.status).toBe(502);
    expect(html.body).toContain('<title>502 Bad Gateway</title>');
    remove();
    expect((await get(APP)).status).toBe(200);
  });

  it('refuses a fault for a route that does not exist, or a fault it does not know', () => {
    expect(() => sim.faults.inject('/v2/nope', 500)).toThrow(/no route "\/v2\/nope"; use "\*" or one of:\n {2}GET \/v2\/machine\/monitoring\/current/);
    expect(() => sim.faults.inject('*', 42)).toThrow(/fault status must be an integer HTTP status/);
    expect(() => sim.faults.inject('*', 'explode' as 'hang')).toThrow(/unknown fault/);
    expect(() => sim.faults.inject('*', { type: 'huge', bytes: -1 })).toThrow(/huge fault/);
    expect(() => sim.faults.inject('*', 'hang', { times: 0 })).toThrow(/times must be a positive integer/);
  });

  it('applies to authenticated requests only: a 401 challenge does not use up `times`', async () => {
    sim.faults.inject('*', 500, { times: 1 });
    expect((await get(MACHINE, { authorized: false })).status).toBe(401);
    expect((await get(MACHINE)).status).toBe(500);
  });

  it('hangs until the client gives up', async () => {
    sim.faults.inject(MACHINE, 'hang', { times: 1 });
    await expect(get(MACHINE, { timeoutMs: 200 })).rejects.toThrow(/timed? ?out|abort/i);
    expect((await get(MACHINE)).status).toBe(200);
  });

  it('slows one answer down', async () => {
    sim.faults.inject('*', { type: 'slow', ms: 150 }, { times: 1 });
    const t0 = Date.now();
    expect((await get(MACHINE)).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(145);
  });

  it('resets the connection', async () => {
    sim.faults.inject('*', 'reset', { times: 1 });
    await expect(get(MACHINE)).rejects.toThrow(/socket|closed|reset/i);
  });

  it('sends garbage with a 200 and a JSON content type', async () => {
    sim.faults.inject('*', 'garbage', { times: 1 });
    const r = await get(MACHINE);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/application\/json/);
    expect(() => JSON.parse(r.body)).toThrow();
  });

  it('answers XML to a JSON client', async () => {
    sim.faults.inject('*', 'xml', { times: 1 });
    const r = await get(MACHINE);
    expect(r.headers['content-type']).toMatch(/xml/);
    expect(r.body).toContain('<CurrentMachineStatistics>');
  });

  it('pads an answer to a huge size, with or without a Content-Length', async () => {
    sim.faults.inject('*', { type: 'huge', bytes: 300_000 }, { times: 1 });
    const r = await get(MACHINE);
    expect(Buffer.byteLength(r.body)).toBe(300_000);
    expect(r.headers['content-length']).toBe('300000');
    expect(JSON.parse(r.body)).toMatchObject(sim.values.machine());

    sim.faults.inject('*', { type: 'huge', bytes: 200_000, chunked: true }, { times: 1 });
    const chunked = await get(MACHINE, { accept: 'text/xml' });
    expect(chunked.headers['content-length']).toBeUndefined();
    expect(Buffer.byteLength(chunked.body)).toBe(200_000);
    expect(chunked.body).toContain('<CpuIdle>');
  });
});

describe('simulator counters', () => {
  it('count requests by route template and by status, challenges, and reset', async () => {
    await get(APP);
    await get(APP);
    await get('/v2/servers/_defaultServer_/vhosts/_defaultVHost_/applications/nope/monitoring/current');
    await get(MACHINE, { authorized: false });
    await get('/not/a/route');
    sim.faults.inject('*', 'reset', { times: 1 });
    await get(MACHINE).catch(() => undefined);
    expect(sim.counters.total).toBe(6);
    expect(sim.counters.byRoute).toEqual({ [`GET ${APP_TEMPLATE}`]: 3, [`GET ${MACHINE}`]: 2, 'GET (unmatched)': 1 });
    expect(sim.counters.route(`GET ${APP_TEMPLATE}`)).toBe(3);
    expect(sim.counters.byStatus).toEqual({ 200: 2, 404: 2, 401: 1 });
    expect(sim.counters.status(404)).toBe(2);
    expect(sim.counters.authChallenges).toBe(1);
    expect(sim.counters.faultsApplied).toBe(1);
    sim.counters.reset();
    expect(sim.counters.total).toBe(0);
    expect(sim.counters.byRoute).toEqual({});
  });
});
