import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, Agent as HttpAgent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../src/index.js';

const MACHINE = '/v2/machine/monitoring/current';
const APPS = '/v2/servers/_defaultServer_/vhosts/_defaultVHost_/applications';

async function get(sim: Simulator, path: string, headers: Record<string, string> = {}, method = 'GET') {
  const res = await request(sim.url + path, { method: method as 'GET', headers });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ auth: 'none', frozen: true });
});
afterAll(() => sim.close());

describe('simulator content negotiation', () => {
  it('answers XML unless JSON is asked for', async () => {
    const xml = await get(sim, MACHINE);
    expect(xml.status).toBe(200);
    expect(xml.headers['content-type']).toMatch(/^text\/xml/);
    expect(xml.text).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"/);
    expect(xml.text).toMatch(/<CurrentMachineStatistics><ServerName>_defaultServer_<\/ServerName><Version>\d+<\/Version>/);
    expect(xml.text).toContain(`<ServerUptime>${sim.values.machine().serverUptime}</ServerUptime>`);
    expect(xml.text).toContain(`<CpuIdle>${sim.values.machine().cpuIdle}</CpuIdle>`);

    const json = await get(sim, MACHINE, { accept: 'application/json' });
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(json.text)).toEqual({ serverName: '_defaultServer_', version: expect.any(String), ...sim.values.machine() });

    expect((await get(sim, MACHINE, { accept: 'text/html, application/json;q=0.9' })).headers['content-type']).toMatch(/json/);
    expect((await get(sim, MACHINE, { accept: 'application/json;q=0' })).headers['content-type']).toMatch(/xml/);
    expect((await get(sim, MACHINE, { accept: '*/*' })).headers['content-type']).toMatch(/xml/);
  });

  it('renders lists, nulls and maps as XML elements', async () => {
    const apps = (await get(sim, APPS)).text;
    expect(apps).toMatch(/<Applications><ServerName>_defaultServer_<\/ServerName><Version>\d+<\/Version><Applications><Application><Id>live<\/Id>/);
    expect(apps).toContain('<Id>cameras</Id><Href>/v2/servers/_defaultServer_/vhosts/_defaultVHost_/applications/cameras</Href><AppType/>');
    const vhost = (await get(sim, '/v2/servers/_defaultServer_/vhosts/_defaultVHost_/monitoring/current')).text;
    expect(vhost).toMatch(/<ConnectionCount><RTMP>\d+<\/RTMP>.*<CUPERTINO>\d+<\/CUPERTINO>.*<\/ConnectionCount>/);
    const instances = (await get(sim, `${APPS}/cameras/instances`)).text;
    expect(instances).toContain('<SourceIp>rtsp://camuser:campass@192.0.2.10:554/live</SourceIp>');
    expect(instances).toMatch(/<InstanceList><ApplicationInstance><Name>_definst_<\/Name><IncomingStreams><IncomingStream>/);
  });

  it('answers errors in the negotiated format', async () => {
    const xml = await get(sim, `${APPS}/nope/monitoring/current`);
    expect(xml.status).toBe(404);
    expect(xml.text).toContain('<WMSResponse><Success>false</Success><Message>Application (nope) not found.</Message><Code>404</Code>');
    const json = await get(sim, `${APPS}/nope/monitoring/current`, { accept: 'application/json' });
    expect(JSON.parse(json.text)).toMatchObject({ success: false, code: '404' });
  });

  it('answers XML even to JSON clients when xmlOnly is set', async () => {
    const s = await startSimulator({ auth: 'none', xmlOnly: true });
    try {
      const r = await get(s, MACHINE, { accept: 'application/json' });
      expect(r.headers['content-type']).toMatch(/xml/);
      expect(r.text).toContain('<CurrentMachineStatistics>');
    } finally {
      await s.close();
    }
  });
});

describe('simulator routing', () => {
  it('answers 404 for unknown paths, 405 for other methods, 400 for broken escapes', async () => {
    const unknown = await get(sim, '/v2/nothing/here', { accept: 'application/json' });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.text)).toMatchObject({ success: false, code: '404' });
    const post = await get(sim, MACHINE, { accept: 'application/json' }, 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET');
    const broken = await get(sim, `${APPS}/%E0%A4%A/monitoring/current`, { accept: 'application/json' });
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.text).message).toMatch(/malformed escape/);
    expect((await get(sim, `${APPS}/`, { accept: 'application/json' })).status).toBe(200);
  });

  it('decodes path segments', async () => {
    sim.topology.addStream('_defaultVHost_', 'live', 'my stream+ü');
    try {
      const r = await get(sim, `${APPS}/live/instances/_definst_/incomingstreams/${encodeURIComponent('my stream+ü')}/monitoring/current`, { accept: 'application/json' });
      expect(JSON.parse(r.text)).toMatchObject({ name: 'my stream+ü' });
      expect(JSON.parse(r.text).bytesIn).toBe(sim.values.stream('_defaultVHost_', 'live', '_definst_', 'my stream+ü')!.bytesIn);
    } finally {
      sim.topology.removeStream('_defaultVHost_', 'live', 'my stream+ü');
    }
  });

  it('names itself like WSE and lists its routes', async () => {
    expect((await get(sim, MACHINE)).headers.server).toBe('WowzaStreamingEngine/4.9.4');
    expect(sim.routes).toContain('GET /v2/servers/{server}/vhosts/{vhost}/applications/{app}/monitoring/current');
    expect(sim.routes).toContain('GET /v2/servers/{server}/logfiles/{logName}');
  });
});

describe('simulator server', () => {
  it('adds the configured latency to every response', async () => {
    const s = await startSimulator({ auth: 'none', latencyMs: 120 });
    try {
      const t0 = Date.now();
      await get(s, MACHINE);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(115);
    } finally {
      await s.close();
    }
  });

  it('serves HTTPS with the given certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-tls-'));
    try {
      execFileSync('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
        '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
        '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
      ], { stdio: 'ignore' });
      const cert = readFileSync(join(dir, 'cert.pem'));
      const s = await startSimulator({ auth: 'none', tls: { cert, key: readFileSync(join(dir, 'key.pem')) } });
      const agent = new Agent({ connect: { ca: cert } });
      try {
        expect(s.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
        const res = await request(s.url + MACHINE, { dispatcher: agent, headers: { accept: 'application/json' } });
        expect(res.statusCode).toBe(200);
        expect(await res.body.json()).toMatchObject({ cpuIdle: expect.any(Number) });
      } finally {
        await agent.close();
        await s.close();
      }
      await expect(startSimulator({ tls: { cert: 'not a cert', key: 'nor a key' } })).rejects.toThrow(/invalid TLS certificate or key/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('closes at once with a hung request and an idle keep-alive connection', async () => {
    const s = await startSimulator({ auth: 'none' });
    const agent = new HttpAgent({ keepAlive: true });
    // An idle keep-alive socket...
    await new Promise<void>((resolve, reject) => {
      httpRequest(s.url + MACHINE, { agent }, (res) => {
        res.resume();
        res.on('end', resolve);
      })
        .on('error', reject)
        .end();
    });
    // ...and a request that never gets an answer.
    s.faults.inject('*', 'hang');
    const hung = new Promise<string>((resolve) => {
      httpRequest(s.url + MACHINE, (res) => resolve(`answered ${res.statusCode}`))
        .on('error', (err) => resolve(`failed: ${err.message}`))
        .end();
    });
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    await s.close();
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(await hung).toMatch(/^failed/);
    agent.destroy();
    await s.close(); // idempotent
  });

  it('says why it cannot listen', async () => {
    await expect(startSimulator({ port: sim.port })).rejects.toThrow(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${sim.port}: address already in use`));
  });

  it('refuses bad options with a message naming the option', async () => {
    await expect(startSimulator({ vhosts: -1 })).rejects.toThrow(/option vhosts must be an integer/);
    await expect(startSimulator({ auth: 'kerberos' as 'basic' })).rejects.toThrow(/option auth must be basic, digest or none/);
    await expect(startSimulator({ digestAlgorithms: [] })).rejects.toThrow(/digestAlgorithms/);
    await expect(startSimulator({ username: 'a:b' })).rejects.toThrow(/username/);
    await expect(startSimulator({ port: 70000 })).rejects.toThrow(/option port/);
    await expect(startSimulator({ latencyMs: Number.NaN })).rejects.toThrow(/option latencyMs/);
    await expect(startSimulator({ vhosts: 1000, apps: 1000, streams: 10 })).rejects.toThrow(/over the limit/);
  });
});

describe('simulator latency', () => {
  it('lets many requests wait at once without a listener-leak warning', async () => {
    const slow = await startSimulator({ auth: 'none', frozen: true, latencyMs: 200 });
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    const agent = new Agent({ connections: 30 });
    try {
      const statuses = await Promise.all(
        Array.from({ length: 30 }, async () => {
          const res = await request(slow.url + MACHINE, { dispatcher: agent });
          await res.body.dump();
          return res.statusCode;
        }),
      );
      expect(statuses.every((s) => s === 200)).toBe(true);
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await agent.close();
      await slow.close();
    }
  });
});
