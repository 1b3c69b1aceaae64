import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

const STREAM_CURRENT = 'GET /v2/servers/{server}/vhosts/{vhost}/applications/{app}/instances/{instance}/incomingstreams/{stream}/monitoring/current';
const dir = mkdtempSync(join(tmpdir(), 'wowza-collectors-'));

function configFile(name: string, doc: unknown): string {
  const p = join(dir, name);
  writeFileSync(p, stringify(doc));
  return p;
}

async function pollsDone(exporter: RunningExporter, n: number) {
  // Wait until the machine collector has completed n more polls, judged by its last-poll timestamp.
  let last = 0;
  for (let i = 0; i < n; i++) {
    last = await waitFor('a new poll', async () => {
      const t = samples(await exporter.metrics(), 'wowza_exporter_last_poll_timestamp_seconds', { collector: 'instance' })[0]?.value ?? 0;
      return t > last ? t : undefined;
    });
  }
}

describe('collector switches, renditions and the stream cap', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic', frozen: true });
  });
  afterAll(() => sim.close());

  it('with --no-collector.stream the simulator sees no stream monitoring request', async () => {
    sim.counters.reset();
    const exporter = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '1s', '--wowza.timeout', '800ms', '--no-collector.stream'], { WOWZA_PASSWORD: sim.password });
    try {
      await pollsDone(exporter, 2);
      const text = await exporter.metrics();
      expect(sim.counters.route(STREAM_CURRENT)).toBe(0);
      expect(text).not.toMatch(/^wowza_stream_uptime_seconds/m);
      expect(text).toMatch(/^wowza_stream_connected/m); // the instance collector still reports stream state
      expect(samples(text, 'wowza_exporter_collector_success', { collector: 'stream' })).toEqual([]);
    } finally {
      await exporter.stop();
    }
  });

  it('reports renditions under their base stream, drops them on request, and caps streams', async () => {
    const labelled = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '1s', '--wowza.timeout', '800ms'], { WOWZA_PASSWORD: sim.password });
    try {
      const text = await labelled.metrics();
      const r = samples(text, 'wowza_stream_received_bytes_total', { application: 'live', stream: 'stream1' });
      expect(r.map((s) => s.labels.rendition ?? '').sort()).toEqual(['', '160p', '720p']);
      expect(text).not.toContain('stream="stream1_160p"');
    } finally {
      await labelled.stop();
    }
    const cfg = configFile('drop.yaml', {
      servers: [{ url: sim.url, username: sim.username }],
      poll: { interval: '1s', timeout: '800ms' },
      discovery: { renditions: { mode: 'drop' }, max_streams_per_server: 4, applications: { exclude: 'vod' } },
    });
    const capped = await startExporterProcess(['--config', cfg], { WOWZA_PASSWORD: sim.password });
    try {
      const text = await capped.metrics();
      expect(text).not.toContain('rendition=');
      expect(samples(text, 'wowza_stream_connected')).toHaveLength(4);
      expect(samples(text, 'wowza_exporter_streams_dropped')[0]!.value).toBeGreaterThan(0);
      expect(text).not.toContain('application="vod"');
      expect(capped.output()).toContain('stream cap reached');
    } finally {
      await capped.stop();
    }
  });
});

describe('objects that vanish between discovery and their statistics', () => {
  it('a stream or vhost answering 404 is left out and counted; the rest of the poll stands', async () => {
    const sim = await startSimulator({ auth: 'basic', frozen: true });
    // The simulated server answers the first stream and vhost statistics with 404, as for one that just ended.
    sim.faults.inject(STREAM_CURRENT, { type: 'status', status: 404, message: 'Stream (gone) not found.' }, { times: 1 });
    sim.faults.inject('GET /v2/servers/{server}/vhosts/{vhost}/monitoring/current', { type: 'status', status: 404, message: 'VHost (gone) not found.' }, { times: 1 });
    const streams = sim.topology.list().vhosts.flatMap((v) => v.apps.flatMap((a) => a.instances.flatMap((i) => i.streams))).length;
    const exporter = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '30s'], { WOWZA_PASSWORD: sim.password });
    try {
      const text = await exporter.metrics();
      expect(samples(text, 'wowza_exporter_collector_success', { collector: 'stream' })[0]!.value).toBe(1);
      expect(samples(text, 'wowza_exporter_collector_success', { collector: 'vhost' })[0]!.value).toBe(1);
      expect(samples(text, 'wowza_stream_uptime_seconds')).toHaveLength(streams - 1);
      expect(samples(text, 'wowza_exporter_vanished_objects_total', { collector: 'stream' })[0]!.value).toBe(1);
      expect(samples(text, 'wowza_exporter_vanished_objects_total', { collector: 'vhost' })[0]!.value).toBe(1);
      expect(samples(text, 'wowza_up')[0]!.value).toBe(1);
    } finally {
      await exporter.stop();
      await sim.close();
    }
  });
});

describe('HTTP endpoints and /probe', () => {
  let sim: Simulator;
  let other: Simulator;
  let exporter: RunningExporter;

  beforeAll(async () => {
    sim = await startSimulator({ auth: 'digest', frozen: true });
    other = await startSimulator({ auth: 'basic' });
    writeFileSync(join(dir, 'pw'), sim.password, { mode: 0o600 });
    const cfg = configFile('probe.yaml', {
      servers: [{ name: 'main', url: sim.url, username: sim.username, password_file: join(dir, 'pw') }],
      poll: { interval: '2s', timeout: '1s' },
      modules: { default: { username: sim.username, password_file: join(dir, 'pw'), allowed_targets: [sim.url.replace(/\./g, '\\.')] } },
    });
    exporter = await startExporterProcess(['--config', cfg]);
  });
  afterAll(async () => {
    await exporter.stop();
    await sim.close();
    await other.close();
  });

  it('/probe polls an allowed target now, into its own answer', async () => {
    const res = await fetch(`${exporter.url}/probe?target=${encodeURIComponent(sim.url)}&module=default`, { headers: { 'x-prometheus-scrape-timeout-seconds': '5' } });
    expect(res.status).toBe(200);
    const text = await res.text();
    const server = new URL(sim.url).host;
    expect(samples(text, 'wowza_up', { server })[0]!.value).toBe(1);
    expect(samples(text, 'wowza_stream_connected', { server }).length).toBeGreaterThan(0);
    expect(text).not.toContain('server="main"');
    expect(await exporter.metrics()).not.toContain(`server="${server}"`);
  });

  it('/probe for a target outside the allow-list answers 400 and sends nothing there', async () => {
    other.counters.reset();
    const res = await fetch(`${exporter.url}/probe?target=${encodeURIComponent(other.url)}&module=default`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('not in the allowed_targets of module "default"');
    for (const [query, message] of [
      ['', 'missing "target"'],
      [`target=${encodeURIComponent(sim.url)}&module=nope`, 'unknown module "nope"'],
      ['target=ftp%3A%2F%2Fx', 'must be an http or https URL'],
      [`target=${encodeURIComponent(sim.url.replace('://', '://u:p@'))}`, 'must not carry credentials'],
    ] as const) {
      const r = await fetch(`${exporter.url}/probe?${query}`);
      expect(r.status, query).toBe(400);
      expect(await r.text(), query).toContain(message);
    }
    expect(other.counters.total).toBe(0);
  });

  it('serves gzip when asked, a landing page, health and readiness', async () => {
    const res = await request(`${exporter.url}/metrics`, { headers: { 'accept-encoding': 'gzip' } });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(Buffer.from(await res.body.arrayBuffer())).toString()).toContain('wowza_up{server="main"} 1');
    const landing = await (await fetch(`${exporter.url}/`)).text();
    for (const link of ['/metrics', '/-/healthy', '/-/ready']) expect(landing).toContain(`href="${link}`);
    // No /probe link: no link can name a target a module allows (landing-links.test.ts).
    expect(landing).not.toContain('href="/probe');
    expect((await fetch(`${exporter.url}/-/healthy`)).status).toBe(200);
    expect((await fetch(`${exporter.url}/-/ready`)).status).toBe(200);
    expect((await fetch(`${exporter.url}/nope`)).status).toBe(404);
  });
});
