import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

const V = '_defaultVHost_';
const RECORDERS = 'GET /v2/servers/{server}/vhosts/{vhost}/applications/{app}/instances/{instance}/streamrecorders';
const MAP_ENTRIES = 'GET /v2/servers/{server}/vhosts/{vhost}/applications/{app}/pushpublish/mapentries';
/** What the simulator's map entries carry as secrets (packages/simulator/src/push-publish.ts): none may leave the exporter. */
const SECRETS = ['push-secret', '-key-7f3a9c'];

/** Issue 25: the recording that silently stopped and the push that dropped, on /metrics. */
describe('recorders and stream targets', () => {
  let sim: Simulator;
  let exporter: RunningExporter;
  let dir: string;

  beforeAll(async () => {
    sim = await startSimulator({ streams: 1 });
    sim.topology.addApp(V, 'rec', { running: true });
    sim.topology.addStream(V, 'rec', 'hall', { recording: true });
    sim.topology.addStream(V, 'rec', 'stage', { recording: true });
    sim.topology.addApp(V, 'push', { streamTargetsEnabled: true, running: true });
    sim.topology.addStream(V, 'push', 'main');
    sim.topology.addStream(V, 'push', 'backup');
    dir = mkdtempSync(join(tmpdir(), 'wowza-rec-'));
    writeFileSync(
      join(dir, 'config.yaml'),
      stringify({
        servers: [{ name: 'wse-1', url: sim.url, username: sim.username, connectioncounts_url: 'off' }],
        poll: { interval: '1s', max_requests_per_second: 0 },
        collectors: { stream_target: { interval: '1s' } },
      }),
    );
    exporter = await startExporterProcess(['--config', join(dir, 'config.yaml'), '--log.level', 'debug'], { WOWZA_PASSWORD: sim.password });
  }, 60_000);
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const lastPoll = async (collector: string) => samples(await exporter.metrics(), 'wowza_exporter_last_poll_timestamp_seconds', { collector })[0]?.value ?? 0;
  /** Waits for `n` more polls of `collector` to end. */
  const polls = async (collector: string, n: number) => {
    for (let i = 0; i < n; i++) {
      const before = await lastPoll(collector);
      await waitFor(`a ${collector} poll`, async () => ((await lastPoll(collector)) > before ? true : undefined), 60_000, 100);
    }
  };
  const recorder = async (name: string, recorderName: string) => samples(await exporter.metrics(), name, { application: 'rec', recorder: recorderName })[0];

  it('reads both recorders from the instance list: recording, duration in seconds, a size that grows; no {I}/streamrecorders request', async () => {
    sim.counters.reset();
    await polls('recorder', 1);
    for (const r of ['hall', 'stage']) {
      expect((await recorder('wowza_stream_recorder_recording', r))?.value, r).toBe(1);
      expect((await recorder('wowza_stream_recorder_current_duration_seconds', r))?.value).toBeGreaterThan(0);
      expect((await recorder('wowza_stream_recorder_error', r))?.value).toBe(0);
      expect((await recorder('wowza_stream_recorder_start_timestamp_seconds', r))?.value).toBeGreaterThan(1.6e9);
      const info = (await recorder('wowza_stream_recorder_info', r))!;
      expect(info.labels).toMatchObject({ state: 'Recording in progress', format: 'MP4', segmentation: 'None', app_instance: '_definst_', vhost: V, server: 'wse-1' });
    }
    const size = (await recorder('wowza_stream_recorder_current_size_bytes', 'hall'))!.value;
    await waitFor('the size to grow', async () => ((await recorder('wowza_stream_recorder_current_size_bytes', 'hall'))!.value > size ? true : undefined), 60_000, 200);
    expect(sim.counters.route(RECORDERS)).toBe(0);
  });

  it('a recording that stops while its stream stays connected reads 0 within two polls, with its state', async () => {
    sim.topology.stopRecording(V, 'rec', 'stage');
    await polls('recorder', 2);
    expect((await recorder('wowza_stream_recorder_recording', 'stage'))?.value).toBe(0);
    expect((await recorder('wowza_stream_recorder_info', 'stage'))!.labels.state).toBe('Waiting for stream');
    expect((await recorder('wowza_stream_recorder_recording', 'hall'))?.value).toBe(1);
    expect(samples(await exporter.metrics(), 'wowza_stream_connected', { application: 'rec', stream: 'stage' })[0]?.value).toBe(1);
  });

  it('a recorder error is 1 on /metrics, its message on the status page and in the log, never in a label', async () => {
    sim.topology.stopRecording(V, 'rec', 'stage', 'Error', 'disk full: cannot write /content/stage.mp4');
    await polls('recorder', 2);
    expect((await recorder('wowza_stream_recorder_error', 'stage'))?.value).toBe(1);
    const text = await exporter.metrics();
    expect(text).not.toContain('disk full');
    // A state Wowza did not document is kept and counted once.
    expect((await recorder('wowza_stream_recorder_info', 'stage'))!.labels.state).toBe('Error');
    expect(samples(text, 'wowza_exporter_unknown_values_total', { collector: 'recorder', field: 'recorderState' })[0]?.value).toBeGreaterThan(0);
    await waitFor('the error in the log', async () => (/stream recorder reports an error/.test(exporter.output()) ? true : undefined), 45_000);
    expect(exporter.output()).toContain('disk full: cannot write');
    const status = (await (await fetch(`${exporter.url}/api/v1/status`)).json()) as { servers: Array<{ recorders?: Array<{ recorder: string; error?: string; recording: boolean }> }> };
    const stage = status.servers[0]!.recorders!.find((r) => r.recorder === 'stage')!;
    expect(stage).toMatchObject({ recording: false, error: 'disk full: cannot write /content/stage.mp4' });
    // The page renders that JSON in the browser (test/e2e/status-page.test.ts shows the row).
    sim.topology.stopRecording(V, 'rec', 'stage', undefined);
  });

  it('reads both stream targets as active; one set to Error reads 0; one mapentries request a cycle for that app only', async () => {
    const active = async (entry: string) => samples(await exporter.metrics(), 'wowza_stream_target_active', { application: 'push', source_stream: entry })[0];
    await polls('stream_target', 1);
    for (const s of ['main', 'backup']) {
      const a = (await active(s))!;
      expect(a.value, s).toBe(1);
      expect(a.labels).toMatchObject({ server: 'wse-1', vhost: V, entry: `${s}-rtmp`, profile: 'rtmp', host: 'live.example.net' });
      expect(samples(await exporter.metrics(), 'wowza_stream_target_enabled', { source_stream: s })[0]?.value).toBe(1);
    }
    sim.topology.setTargetStatus(V, 'push', 'backup', 'Error');
    await polls('stream_target', 2);
    expect((await active('backup'))!.value).toBe(0);
    expect((await active('main'))!.value).toBe(1);
    expect(samples(await exporter.metrics(), 'wowza_stream_target_status', { source_stream: 'backup' }).map((s) => s.labels.status)).toEqual(['Error']);

    // Counted from the end of one poll over the next three: one request each for the one app with targets (the apps
    // without, live, cameras and rec, get none); the fourth may have sent its request by the time it is read.
    await polls('stream_target', 1);
    sim.counters.reset();
    await polls('stream_target', 3);
    const asked = sim.counters.route(MAP_ENTRIES);
    expect(asked, JSON.stringify(sim.counters.byRoute)).toBeGreaterThanOrEqual(3);
    expect(asked).toBeLessThanOrEqual(4);
  });

  it('lets no target secret, and no streamName, reach /metrics, the status page, its JSON or the log', async () => {
    const pages = [await exporter.metrics(), await (await fetch(`${exporter.url}/`)).text(), await (await fetch(`${exporter.url}/api/v1/status`)).text(), exporter.output()];
    for (const text of pages) for (const secret of SECRETS) expect(text).not.toContain(secret);
  });
});
