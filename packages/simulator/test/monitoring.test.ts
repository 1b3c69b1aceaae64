import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PULLED_SOURCE_WITH_CREDENTIALS, startSimulator, type Simulator } from '../src/index.js';

const S = '/v2/servers/_defaultServer_';
const V = `${S}/vhosts/_defaultVHost_`;
const A = (app: string) => `${V}/applications/${app}`;
const I = (app: string) => `${A(app)}/instances/_definst_`;
const streamPath = (app: string, stream: string) => `${I(app)}/incomingstreams/${encodeURIComponent(stream)}/monitoring/current`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are checked by value, field by field
async function get(sim: Simulator, path: string): Promise<{ status: number; body: any }> {
  const res = await request(sim.url + path, {
    headers: { accept: 'application/json', authorization: 'Basic ' + Buffer.from(`${sim.username}:${sim.password}`).toString('base64') },
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: JSON.parse(text) };
}

const HOST_KEYS = ['RTMP', 'MPEGDASH', 'CUPERTINO', 'SANJOSE', 'SMOOTH', 'RTP', 'WEBM', 'DVRCHUNKS'];
const sum = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0);

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ frozen: true, seed: 7 });
});
afterAll(() => sim.close());

describe('simulator monitoring resources', () => {
  it('serves machine values as plain numbers: integer CPU percentages summing to at most 100', async () => {
    const { status, body } = await get(sim, '/v2/machine/monitoring/current');
    expect(status).toBe(200);
    for (const k of ['serverUptime', 'cpuIdle', 'cpuUser', 'cpuSystem', 'memoryFree', 'memoryUsed', 'heapFree', 'heapUsed', 'diskFree', 'diskUsed', 'connectionCount']) {
      expect(typeof body[k], k).toBe('number');
      expect(body[k], k).toBeGreaterThanOrEqual(0);
    }
    for (const k of ['cpuIdle', 'cpuUser', 'cpuSystem']) expect(Number.isInteger(body[k])).toBe(true);
    expect(body.cpuIdle + body.cpuUser + body.cpuSystem).toBeLessThanOrEqual(100);
    expect(body).toEqual({ serverName: '_defaultServer_', version: expect.any(String), ...sim.values.machine() });
  });

  it('serves the server status with every documented field', async () => {
    const { body } = await get(sim, `${S}/status`);
    expect(body).toMatchObject({
      serverVersion: 'Wowza Streaming Engine 4.9.4 build20250114124522',
      serverBuild: expect.any(String),
      licenseType: expect.any(String),
      licenseExpireDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      serverMode: expect.any(String),
      totalMemory: expect.any(Number),
      availableMemory: expect.any(Number),
      processorCores: expect.any(Number),
      javaMaxHeapSize: expect.stringMatching(/^\d+MB$/),
      timeRunning: expect.any(Number),
      currentConnections: expect.any(Number),
      maxConnections: 0,
      maxIncommingStreams: expect.any(Number),
      transcoderLicenses: expect.any(Number),
      transcoderLicensesInUse: expect.any(Number),
      // The feature fields of the server's own model (wse-swagger-4.9.0, ServerStatusConfig), not `*Enabled` ones.
      transcoderLicensed: true,
      transcoderApplications: ['live'],
      dvrLicensed: true,
      dvrInUse: true,
      dvrApplications: ['live'],
      drmLicensed: false,
      drmInUse: false,
      drmApplications: [],
    });
    for (const made of ['dvrEnabled', 'drmEnabled', 'transcoderEnabled']) expect(body).not.toHaveProperty(made);
    expect(Number.isInteger(body.timeRunning)).toBe(false);
    // Heap used never exceeds the configured maximum.
    const machine = sim.values.machine();
    expect(machine.heapUsed + machine.heapFree).toBeLessThanOrEqual(Number(body.javaMaxHeapSize.replace('MB', '')) * 1024 * 1024);
    expect(body.currentConnections).toBe(machine.connectionCount);
    expect((await get(sim, '/v2/servers/_defaultServer_/monitoring/current')).status).toBe(404);
  });

  it('lists vhosts and applications, one of them with appType null', async () => {
    expect((await get(sim, `${S}/vhosts`)).body.vhosts).toEqual([
      { id: '_defaultVHost_', href: `${S}/vhosts/_defaultVHost_`, connectingIPAddress: expect.any(String), connectingPort: 1935, connectingSSLEnable: false },
    ]);
    const apps = (await get(sim, `${V}/applications`)).body.applications;
    expect(apps.map((a: { id: string }) => a.id)).toEqual(['live', 'cameras', 'vod']);
    expect(apps[1]).toEqual({ id: 'cameras', href: A('cameras'), appType: null, dvrEnabled: false, drmEnabled: false, transcoderEnabled: false, streamTargetsEnabled: false });
    expect(apps[0]).toMatchObject({ appType: 'Live', transcoderEnabled: true });
  });

  it('serves vhost totals without rates and with every protocol key', async () => {
    const { body } = await get(sim, `${V}/monitoring/current`);
    expect(body).not.toHaveProperty('bytesInRate');
    expect(body).not.toHaveProperty('bytesOutRate');
    expect(Object.keys(body.connectionCount)).toEqual(expect.arrayContaining(HOST_KEYS));
    expect(body.totalConnections).toBe(sum(body.connectionCount));
    const apps = await Promise.all(['live', 'cameras', 'vod'].map((a) => get(sim, `${A(a)}/monitoring/current`)));
    expect(body.bytesIn).toBe(apps.reduce((s, a) => s + a.body.bytesIn, 0));
    expect(body.bytesOut).toBe(apps.reduce((s, a) => s + a.body.bytesOut, 0));
    expect(body.totalConnections).toBe(apps.reduce((s, a) => s + a.body.totalConnections, 0));
  });

  it('serves application totals that are the sum of their streams', async () => {
    const { body } = await get(sim, `${A('live')}/monitoring/current`);
    expect(Object.keys(body.connectionCount)).toEqual(expect.arrayContaining(HOST_KEYS));
    const names = sim.topology.streams().filter((s) => s.app === 'live').map((s) => s.stream);
    const streams = await Promise.all(names.map((n) => get(sim, streamPath('live', n))));
    for (const k of ['bytesIn', 'bytesOut', 'bytesInRate', 'bytesOutRate', 'totalConnections']) {
      expect(body[k], k).toBe(streams.reduce((s, x) => s + x.body[k], 0));
    }
    expect(body.bytesInRate).toBeGreaterThan(0);
  });

  it('answers 404 with the Wowza error envelope (string code) for an unknown application or vhost', async () => {
    const app = await get(sim, `${A('nope')}/monitoring/current`);
    expect(app.status).toBe(404);
    expect(app.body).toEqual({ success: false, message: 'Application (nope) not found.', code: '404', data: null, wowzaServer: '4.9.4' });
    expect((await get(sim, `${S}/vhosts/other/monitoring/current`)).body.message).toBe('VHost (other) not found.');
    expect((await get(sim, `${A('nope')}/instances`)).status).toBe(404);
    expect((await get(sim, streamPath('nope', 'x'))).status).toBe(404);
    expect((await get(sim, '/v2/servers/otherServer/status')).status).toBe(404);
  });

  it('lists instances with every incoming stream field, renditions and a credentialed pulled source', async () => {
    const live = (await get(sim, `${A('live')}/instances`)).body.instanceList;
    expect(live).toHaveLength(1);
    expect(live[0]).toMatchObject({ name: '_definst_', outgoingStreams: [], streamGroups: [] });
    const names = live[0].incomingStreams.map((s: { name: string }) => s.name);
    expect(names).toEqual(expect.arrayContaining(['stream1', 'stream1_160p', 'stream1_720p', 'stream3_720p']));
    expect(names).toHaveLength(9);
    for (const s of live[0].incomingStreams) {
      expect(Object.keys(s).sort()).toEqual(
        [
          'applicationInstance',
          'isConnected',
          'isPTZEnabled',
          'isPublishedToVOD',
          'isRecordingSet',
          'isStreamManagerStream',
          'name',
          'ptzPollingInterval',
          'ptzPollingIntervalMinimum',
          'sourceIp',
        ].sort(),
      );
    }
    expect(live[0].incomingStreams[0].sourceIp).toMatch(/^wowz:\/\/198\.51\.100\.\d+:\d+$/);
    expect(live[0].recorders).toHaveLength(1);

    const cams = (await get(sim, `${A('cameras')}/instances`)).body.instanceList[0].incomingStreams;
    expect(cams[0]).toMatchObject({ name: 'cam1', sourceIp: PULLED_SOURCE_WITH_CREDENTIALS, isStreamManagerStream: true, isConnected: true });
    expect(PULLED_SOURCE_WITH_CREDENTIALS).toBe('rtsp://camuser:campass@192.0.2.10:554/live');

    expect((await get(sim, `${A('vod')}/instances`)).body.instanceList).toEqual([]);
    const unknownInstance = await get(sim, `${A('live')}/instances/other`);
    expect(unknownInstance.status).toBe(200);
    expect(unknownInstance.body).toMatchObject({ name: 'other', incomingStreams: [], outgoingStreams: [], recorders: [], streamGroups: [] });
  });

  it('serves stream statistics without WEBM/DVRCHUNKS, and 200 with zeros for an unknown stream', async () => {
    const { status, body } = await get(sim, streamPath('live', 'stream1'));
    expect(status).toBe(200);
    expect(body).toMatchObject({ applicationInstance: '_definst_', name: 'stream1' });
    for (const k of ['uptime', 'bytesIn', 'bytesOut', 'bytesInRate', 'bytesOutRate', 'totalConnections']) expect(typeof body[k], k).toBe('number');
    expect(body.uptime).toBeGreaterThan(0);
    expect(body.connectionCount).not.toHaveProperty('WEBM');
    expect(body.connectionCount).not.toHaveProperty('DVRCHUNKS');
    expect(body.totalConnections).toBe(sum(body.connectionCount));
    expect(body).toEqual({ version: expect.any(String), ...sim.values.stream('_defaultVHost_', 'live', '_definst_', 'stream1') });

    const ghost = await get(sim, streamPath('live', 'ghost'));
    expect(ghost.status).toBe(200);
    expect(ghost.body).toMatchObject({ name: 'ghost', uptime: 0, bytesIn: 0, bytesOut: 0, bytesInRate: 0, bytesOutRate: 0, totalConnections: 0 });
    expect((await get(sim, streamPath('vod', 'x'))).body.bytesIn).toBe(0);
  });

  it('renditions carry a share of their source bitrate', () => {
    const rate = (s: string) => sim.values.stream('_defaultVHost_', 'live', '_definst_', s)!.bytesInRate;
    expect(rate('stream1_160p')).toBeLessThan(rate('stream1_720p'));
    expect(rate('stream1_720p')).toBeLessThan(rate('stream1') * 1.5);
  });

  it('serves an entries envelope on monitoring/historic', async () => {
    const { body } = await get(sim, `${A('live')}/monitoring/historic`);
    expect(body.entries).toHaveLength(5);
    const stamps = body.entries.map((e: { timestamp: number }) => e.timestamp);
    expect([...stamps].sort((a, b) => a - b)).toEqual(stamps);
    expect((await get(sim, `${A('nope')}/monitoring/historic`)).status).toBe(404);
    expect((await get(sim, `${I('live')}/incomingstreams/stream1/monitoring/historic`)).body.entries).toHaveLength(5);
  });
});

describe('simulator values over time', () => {
  it('are a function of the seed and the value clock', async () => {
    const a = await startSimulator({ frozen: true, seed: 42 });
    const b = await startSimulator({ frozen: true, seed: 42 });
    const c = await startSimulator({ frozen: true, seed: 43 });
    try {
      expect(a.values.machine()).toEqual(b.values.machine());
      expect(a.values.vhost('_defaultVHost_')).toEqual(b.values.vhost('_defaultVHost_'));
      expect(a.values.stream('_defaultVHost_', 'live', '_definst_', 'stream2')).toEqual(b.values.stream('_defaultVHost_', 'live', '_definst_', 'stream2'));
      expect(a.values.stream('_defaultVHost_', 'live', '_definst_', 'stream2')).not.toEqual(c.values.stream('_defaultVHost_', 'live', '_definst_', 'stream2'));
      const before = a.values.machine();
      expect(a.values.machine()).toEqual(before);
      a.tick(10);
      expect(a.values.machine().serverUptime).toBe(before.serverUptime + 10);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it('grow byte counters at the rates they report', async () => {
    const s = await startSimulator({ frozen: true, seed: 3 });
    try {
      for (const name of ['stream1', 'stream2', 'stream1_720p']) {
        const v0 = s.values.stream('_defaultVHost_', 'live', '_definst_', name)!;
        s.tick(1);
        const v1 = s.values.stream('_defaultVHost_', 'live', '_definst_', name)!;
        expect(v1.uptime).toBe(v0.uptime + 1);
        expect(Math.abs(v1.bytesIn - v0.bytesIn - v0.bytesInRate)).toBeLessThanOrEqual(v0.bytesInRate * 0.05 + 1);
        if (v0.bytesOutRate > 0) expect(Math.abs(v1.bytesOut - v0.bytesOut - v0.bytesOutRate)).toBeLessThanOrEqual(v0.bytesOutRate * 0.05 + 1);
      }
    } finally {
      await s.close();
    }
  });

  it('never move counters backwards, whatever happens to the topology', async () => {
    const s = await startSimulator({ frozen: true, seed: 11, apps: 4 });
    try {
      const vh = '_defaultVHost_';
      type Op = { kind: 'tick'; n: number } | { kind: 'stop' | 'start' | 'remove' | 'add'; i: number } | { kind: 'scale'; f: number } | { kind: 'stopApp' };
      const op: fc.Arbitrary<Op> = fc.oneof(
        fc.record({ kind: fc.constant('tick' as const), n: fc.integer({ min: 1, max: 600 }) }),
        fc.record({ kind: fc.constantFrom('stop' as const, 'start' as const, 'remove' as const, 'add' as const), i: fc.integer({ min: 1, max: 6 }) }),
        fc.record({ kind: fc.constant('scale' as const), f: fc.constantFrom(0.5, 2) }),
        fc.record({ kind: fc.constant('stopApp' as const) }),
      );
      let lastVHost = s.values.vhost(vh)!;
      let lastApp = s.values.application(vh, 'live')!;
      fc.assert(
        fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
          for (const o of ops) {
            const name = 'i' in o ? `stream${o.i}` : '';
            const exists = name !== '' && s.topology.streams().some((x) => x.app === 'app4' && x.stream === name);
            if (o.kind === 'tick') s.tick(o.n);
            else if (o.kind === 'scale' && s.topology.streams().length < 200) s.topology.scale(o.f);
            else if (o.kind === 'stopApp') s.topology.stopApp(vh, 'app4');
            else if (o.kind === 'add' && !exists) s.topology.addStream(vh, 'app4', name);
            else if (o.kind === 'stop' && exists) s.topology.stopStream(vh, 'app4', name);
            else if (o.kind === 'start' && exists) s.topology.startStream(vh, 'app4', name);
            else if (o.kind === 'remove' && exists) s.topology.removeStream(vh, 'app4', name);
            const v = s.values.vhost(vh)!;
            const app = s.values.application(vh, 'live')!;
            expect(v.bytesIn).toBeGreaterThanOrEqual(lastVHost.bytesIn);
            expect(v.bytesOut).toBeGreaterThanOrEqual(lastVHost.bytesOut);
            expect(app.bytesIn).toBeGreaterThanOrEqual(lastApp.bytesIn);
            lastVHost = v;
            lastApp = app;
          }
        }),
        { numRuns: 40 },
      );
    } finally {
      await s.close();
    }
  });

  it('moves with the wall clock unless frozen', async () => {
    const s = await startSimulator({ seed: 5 });
    try {
      const a = s.values.stream('_defaultVHost_', 'live', '_definst_', 'stream1')!.bytesIn;
      await new Promise((r) => setTimeout(r, 60));
      expect(s.values.stream('_defaultVHost_', 'live', '_definst_', 'stream1')!.bytesIn).toBeGreaterThan(a);
    } finally {
      await s.close();
    }
  });
});

describe('simulator topology', () => {
  it('adds streams with renditions, stops and restarts them, removes them', async () => {
    const s = await startSimulator({ frozen: true });
    const vh = '_defaultVHost_';
    try {
      s.topology.addStream(vh, 'live', 'cam9', { pulledFrom: 'rtsp://u:p@192.0.2.99/x' });
      let list = (await get(s, `${A('live')}/instances`)).body.instanceList[0].incomingStreams;
      expect(list.map((x: { name: string }) => x.name)).toEqual(expect.arrayContaining(['cam9', 'cam9_160p', 'cam9_720p']));
      expect(list.find((x: { name: string }) => x.name === 'cam9').sourceIp).toBe('rtsp://u:p@192.0.2.99/x');

      s.tick(100);
      s.topology.stopStream(vh, 'live', 'cam9');
      const stopped = s.values.stream(vh, 'live', '_definst_', 'cam9')!;
      expect(stopped).toMatchObject({ uptime: 0, bytesInRate: 0, bytesOutRate: 0, totalConnections: 0 });
      expect(stopped.bytesIn).toBeGreaterThan(0);
      s.tick(100);
      expect(s.values.stream(vh, 'live', '_definst_', 'cam9')!.bytesIn).toBe(stopped.bytesIn);
      list = (await get(s, `${A('live')}/instances`)).body.instanceList[0].incomingStreams;
      expect(list.filter((x: { name: string; isConnected: boolean }) => x.name.startsWith('cam9')).every((x: { isConnected: boolean }) => !x.isConnected)).toBe(true);

      s.topology.startStream(vh, 'live', 'cam9');
      expect(s.values.stream(vh, 'live', '_definst_', 'cam9')).toMatchObject({ uptime: 0, bytesIn: 0 });
      s.tick(5);
      expect(s.values.stream(vh, 'live', '_definst_', 'cam9')!.uptime).toBe(5);

      s.topology.removeStream(vh, 'live', 'cam9');
      expect(s.topology.streams().some((x) => x.stream.startsWith('cam9'))).toBe(false);
      expect(() => s.topology.removeStream(vh, 'live', 'cam9')).toThrow(/stream "cam9" not found/);
      expect(() => s.topology.addStream(vh, 'nope', 'x')).toThrow(/application "nope" not found/);
      expect(() => s.topology.addStream(vh, 'live', 'stream1')).toThrow(/already exists/);
    } finally {
      await s.close();
    }
  });

  it('removes and adds applications and vhosts; a new app with no stream has no running instance', async () => {
    const s = await startSimulator({ frozen: true });
    try {
      s.topology.removeApp('_defaultVHost_', 'cameras');
      expect((await get(s, `${A('cameras')}/monitoring/current`)).status).toBe(404);
      s.topology.addApp('_defaultVHost_', 'news', { appType: 'Live', dvrEnabled: true });
      expect((await get(s, `${A('news')}/instances`)).body.instanceList).toEqual([]);
      s.topology.addStream('_defaultVHost_', 'news', 'anchor');
      expect((await get(s, `${A('news')}/instances`)).body.instanceList[0].incomingStreams).toHaveLength(1);
      s.topology.addVHost('edge');
      expect((await get(s, `${S}/vhosts`)).body.vhosts.map((v: { id: string }) => v.id)).toEqual(['_defaultVHost_', 'edge']);
      expect((await get(s, `${S}/vhosts/edge/applications`)).body.applications).toEqual([]);
      s.topology.removeVHost('edge');
      expect((await get(s, `${S}/vhosts/edge/monitoring/current`)).status).toBe(404);
    } finally {
      await s.close();
    }
  });

  it('scales the topology 10x and back', async () => {
    const s = await startSimulator({ frozen: true, vhosts: 2 });
    try {
      const before = s.topology.streams().length;
      s.topology.scale(10);
      expect(s.topology.streams().length).toBe(before * 10);
      const live = (await get(s, `${S}/vhosts/vhost2/applications/live/instances`)).body.instanceList[0].incomingStreams;
      expect(live).toHaveLength(90);
      s.topology.scale(0.1);
      expect(s.topology.streams().length).toBe(before);
      expect(() => s.topology.scale(-1)).toThrow(/scale factor/);
    } finally {
      await s.close();
    }
  });

  it('lists the topology as a tree', () => {
    const tree = sim.topology.list();
    expect(tree.vhosts[0]!.apps.map((a) => [a.name, a.running, a.instances.length])).toEqual([
      ['live', true, 1],
      ['cameras', true, 1],
      ['vod', false, 0],
    ]);
  });

  it('can send numbers as strings', async () => {
    const s = await startSimulator({ frozen: true, numbersAsStrings: true });
    try {
      const m = (await get(s, '/v2/machine/monitoring/current')).body;
      expect(m.cpuIdle).toBe(String(s.values.machine().cpuIdle));
      expect(typeof (await get(s, streamPath('live', 'stream1'))).body.connectionCount.RTMP).toBe('string');
    } finally {
      await s.close();
    }
  });
});
