import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

const COUNTS = 'GET /connectioncounts';
const STREAM_CURRENT = 'GET /v2/servers/{server}/vhosts/{vhost}/applications/{app}/instances/{instance}/incomingstreams/{stream}/monitoring/current';

/** An exporter polling `sim` every second, its viewers from the simulator's connectioncounts provider. */
function exporterWithCounts(sim: Simulator): Promise<RunningExporter> {
  return startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username, '--wowza.connectioncounts-url', sim.countsUrl, '--poll.interval', '1s'], { WOWZA_PASSWORD: sim.password });
}

/** Viewer counts from the connectioncounts provider: one request a cycle instead of one per stream. */
describe('viewers from connectioncounts', () => {
  let sim: Simulator;
  let exporter: RunningExporter;

  beforeAll(async () => {
    sim = await startSimulator({ auth: 'digest', frozen: true, apps: 4, streams: 10 });
    exporter = await exporterWithCounts(sim);
  });
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
  });

  it('every stream has its viewers by protocol, equal to the REST numbers of the same moment, with the same labels', async () => {
    const text = await exporter.metrics();
    const listed = sim.topology.streams();
    const total = samples(text, 'wowza_stream_connections_current');
    // Renditions are reported under their base stream with a rendition label, as on the REST path.
    expect(total).toHaveLength(listed.length);
    for (const s of listed) {
      const rest = sim.values.stream(s.vhost, s.app, s.instance, s.stream)!;
      const base = s.renditionOf ?? s.stream;
      const rendition = s.renditionOf ? s.stream.slice(base.length + 1) : undefined;
      const match = (m: { labels: Record<string, string> }) => m.labels.stream === base && m.labels.application === s.app && (m.labels.rendition ?? undefined) === rendition;
      expect(total.filter(match).map((m) => m.value), s.stream).toEqual([rest.totalConnections]);
      const byProtocol = Object.fromEntries(samples(text, 'wowza_stream_connections').filter(match).map((m) => [m.labels.protocol, m.value]));
      expect(byProtocol, s.stream).toEqual({
        rtmp: rest.connectionCount.RTMP,
        hls: rest.connectionCount.CUPERTINO,
        hds: rest.connectionCount.SANJOSE,
        smooth: rest.connectionCount.SMOOTH,
        rtsp: rest.connectionCount.RTP,
        mpeg_dash: rest.connectionCount.MPEGDASH,
        webrtc: rest.connectionCount.WEBRTC,
      });
    }
    // Bytes and uptime still come from the REST stream statistics.
    expect(samples(text, 'wowza_stream_received_bytes_total')).toHaveLength(listed.length);
    expect(samples(text, 'wowza_exporter_collector_success', { collector: 'connectioncounts' })[0]!.value).toBe(1);
  });

  it('costs one connectioncounts request a cycle, and the per-stream REST reads move to every 60 s', async () => {
    sim.counters.reset();
    let last = samples(await exporter.metrics(), 'wowza_exporter_last_poll_timestamp_seconds', { collector: 'connectioncounts' })[0]!.value;
    for (let i = 0; i < 3; i++) {
      last = await waitFor('a connectioncounts poll', async () => {
        const t = samples(await exporter.metrics(), 'wowza_exporter_last_poll_timestamp_seconds', { collector: 'connectioncounts' })[0]?.value ?? 0;
        return t > last ? t : undefined;
      });
    }
    const polls = sim.counters.route(COUNTS);
    expect(polls).toBeGreaterThanOrEqual(3);
    expect(polls).toBeLessThanOrEqual(4);
    expect(sim.counters.route(STREAM_CURRENT)).toBe(0);
  });
});

describe('viewers of streams whose names the provider URL-encodes (issue 38)', () => {
  let sim: Simulator;
  let exporter: RunningExporter;
  const NAMES = ['15~max', 'cam 1', 'mp4:live/feed'];

  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic', adminAuth: 'basic', frozen: true, apps: 1, streams: 1 });
    const app = sim.topology.list().vhosts[0]!.apps[0]!.name;
    for (const name of NAMES) sim.topology.addStream('_defaultVHost_', app, name);
    exporter = await exporterWithCounts(sim);
  });
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
  });

  it('are exported per protocol with their current totals, under the names REST gives', async () => {
    // The document writes them as Java's URLEncoder does.
    const xml = await (await fetch(`${sim.countsUrl}?flat`, { headers: { authorization: `Basic ${Buffer.from(`${sim.username}:${sim.password}`).toString('base64')}` } })).text();
    for (const written of ['streamName="15%7Emax"', 'streamName="cam+1"', 'streamName="mp4%3Alive%2Ffeed"']) expect(xml).toContain(written);
    const text = await waitFor('the connectioncounts collector', async () => {
      const t = await exporter.metrics();
      return samples(t, 'wowza_exporter_collector_success', { collector: 'connectioncounts' })[0]?.value === 1 ? t : undefined;
    }, 30_000);
    for (const name of NAMES) {
      const s = sim.topology.streams().find((x) => x.stream === name)!;
      const rest = sim.values.stream(s.vhost, s.app, s.instance, s.stream)!;
      const own = (m: { labels: Record<string, string> }) => m.labels.rendition === undefined;
      expect(samples(text, 'wowza_stream_connections_current', { stream: name }).filter(own).map((m) => m.value), name).toEqual([rest.totalConnections]);
      const byProtocol = Object.fromEntries(samples(text, 'wowza_stream_connections', { stream: name }).filter(own).map((m) => [m.labels.protocol, m.value]));
      expect(byProtocol.rtmp, name).toBe(rest.connectionCount.RTMP);
      expect(byProtocol.hls, name).toBe(rest.connectionCount.CUPERTINO);
    }
    expect(samples(text, 'wowza_exporter_connectioncounts_unmatched_streams')[0]?.value).toBe(0);
  });
});
