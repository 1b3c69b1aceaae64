import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { missingTool, prometheusPath, promtoolPath } from '../helpers/prometheus.js';
import { startPrometheus, type PrometheusServer } from '../helpers/prometheus-server.js';
import { waitFor } from '../helpers/ports.js';

const run = promisify(execFile);
const PROMETHEUS = prometheusPath();
const PROMTOOL = promtoolPath();
const V = '_defaultVHost_';
const I = '_definst_';

describe.skipIf(missingTool('prometheus', PROMETHEUS, 'the end-to-end test with a real Prometheus'))('exporter scraped by a real Prometheus', () => {
  let sim: Simulator;
  let exporter: RunningExporter;
  let prom: PrometheusServer;

  beforeAll(async () => {
    sim = await startSimulator({ auth: 'digest', frozen: true, streams: 3 });
    exporter = await startExporterProcess(
      ['--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '1s', '--wowza.timeout', '800ms', '--log.level', 'debug'],
      { WOWZA_PASSWORD: sim.password },
    );
    prom = await startPrometheus(PROMETHEUS!, { targets: [exporter.url.replace('http://', '')] });
  });
  afterAll(async () => {
    await prom?.stop();
    await exporter?.stop();
    await sim?.close();
  });

  const one = async (expr: string) => {
    const r = await prom.waitForQuery(expr);
    expect(r, expr).toHaveLength(1);
    return Number(r[0]!.value[1]);
  };

  it('PromQL returns the simulator values for machine, server, application and stream', async () => {
    const machine = sim.values.machine();
    expect(await one('wowza_machine_cpu_ratio{mode="user"}')).toBeCloseTo(Number(machine.cpuUser) / 100, 6);
    expect(await one('wowza_machine_heap_used_bytes')).toBe(Number(machine.heapUsed));
    const status = sim.values.status();
    expect(await one('wowza_server_connections')).toBe(Number(status.currentConnections));
    const app = sim.values.application(V, 'live')!;
    const rtmp = Number((app.connectionCount as Record<string, number>).RTMP);
    expect(await one(`wowza_application_connections{application="live",protocol="rtmp"}`)).toBe(rtmp);
    const hls = Number((app.connectionCount as Record<string, number>).CUPERTINO);
    expect(await one(`wowza_application_connections{application="live",protocol="hls"}`)).toBe(hls);
    const stream = sim.values.stream(V, 'live', I, 'stream1')!;
    expect(await one('wowza_stream_received_bytes_total{application="live",stream="stream1",rendition=""}')).toBe(Number(stream.bytesIn));
    expect(await one('wowza_stream_sent_bytes_total{application="live",stream="stream1",rendition=""}')).toBe(Number(stream.bytesOut));
    expect(await one('wowza_up')).toBe(1);
  });

  it.skipIf(missingTool('promtool', PROMTOOL, 'promtool check metrics'))('promtool check metrics prints nothing', async () => {
    const text = await exporter.metrics();
    const child = run(PROMTOOL!, ['check', 'metrics']);
    child.child.stdin!.end(text);
    const { stdout, stderr } = await child;
    expect(stdout + stderr).toBe('');
  });

  it('never exposes the credentials of a pulled stream', async () => {
    const text = await exporter.metrics();
    expect(text).toContain('source_scheme="rtsp"');
    for (const secret of ['camuser', 'campass', '192.0.2.10']) expect(text).not.toContain(secret);
  });

  it('a stopped stream reads 0, a removed one loses its series, a stopped server reads down', async () => {
    const connected = async (stream: string) => samples(await exporter.metrics(), 'wowza_stream_connected', { application: 'live', stream });
    expect((await connected('stream3'))[0]!.value).toBe(1);
    sim.topology.stopStream(V, 'live', 'stream3');
    await waitFor('stream3 connected=0', async () => ((await connected('stream3'))[0]?.value === 0 ? true : undefined));

    sim.topology.removeStream(V, 'live', 'stream3');
    await waitFor('stream3 series gone', async () => {
      const text = await exporter.metrics();
      return text.includes('stream="stream3"') ? undefined : true;
    });

    await sim.close();
    await waitFor('wowza_up 0 and no stream series', async () => {
      const text = await exporter.metrics();
      const up = samples(text, 'wowza_up')[0]?.value;
      const allFailed = samples(text, 'wowza_exporter_collector_success').every((s) => s.value === 0);
      return up === 0 && allFailed && !/^wowza_stream_/m.test(text) ? true : undefined;
    });
    const wowzaSeries = (await exporter.metrics()).split('\n').filter((l) => /^wowza_(machine|server|vhost|application|instance|stream)_/.test(l));
    expect(wowzaSeries).toEqual([]);
    // Once two collectors failed to reach it, every collector's series go at once: the machine collector, which goes on
    // asking while the server is out, meets the refusal at its own next poll.
    const machineRefused = /wowza_exporter_api_requests_total\{server="[^"]+",endpoint="\/v2\/machine\/monitoring\/current",code="network"\}/;
    await waitFor('the machine collector refused', async () => (machineRefused.test(await exporter.metrics()) ? true : undefined));
  });
});
