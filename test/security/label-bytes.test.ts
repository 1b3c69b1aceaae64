import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_VHOST, startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * The size of a scrape, not only its count of series (issue 47): 5,000 streams with 250-byte names on one server made
 * an 89 MB /metrics, every name under the 256-byte "too long" cap and every series under the series cap. Names over
 * 96 bytes are now shortened (a prefix, `~` and a hash of the whole name) and each server's share of /metrics is held
 * to discovery.max_bytes_per_server (8 MiB by default): the scrape stays under 10 MB and every stream stays apart.
 */

const STREAMS = 5000;
const MiB = 1024 * 1024;
const APP = 'flood';
/** 250 bytes, all sharing their first 244: a cut without the hash would merge them all into one. */
const streamName = (i: number) => `${'s'.repeat(244)}_${String(i).padStart(5, '0')}`;

describe('5,000 streams with 250-byte names', () => {
  let sim: Simulator;
  let exporter: RunningExporter;
  let dir = '';

  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic', apps: 0 });
    sim.topology.addApp(DEFAULT_VHOST, APP);
    for (let i = 0; i < STREAMS; i++) sim.topology.addStream(DEFAULT_VHOST, APP, streamName(i));
    dir = mkdtempSync(join(tmpdir(), 'label-bytes-'));
    writeFileSync(join(dir, 'password'), sim.password);
    const server = { name: 'flood', url: sim.url, username: sim.username, auth: 'basic', password_file: join(dir, 'password'), connectioncounts_url: 'off' };
    writeFileSync(join(dir, 'config.yaml'), `poll: {interval: 10s, max_requests_per_second: 0}\nservers: ${JSON.stringify([server])}\n`);
    exporter = await startExporterProcess(['--config', join(dir, 'config.yaml')]);
  }, 120_000);
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('/metrics stays under 10 MB and every stream keeps a label value of its own, at most 96 bytes', async () => {
    // Every stream read in one poll: on a busy machine a stream's own request can time out, and the poll stands without
    // it (counted as an object error) until the next cycle, which the request budget makes about 100 s long.
    const text = await waitFor('a poll of `flood` with every stream', async () => {
      const t = await exporter.metrics();
      const polled = samples(t, 'wowza_exporter_collector_success', { server: 'flood', collector: 'stream' })[0]?.value === 1;
      return polled && new Set(samples(t, 'wowza_stream_uptime_seconds', { server: 'flood' }).map((s) => s.labels.stream)).size === STREAMS ? t : undefined;
    }, 400_000, 1000);
    const bytes = Buffer.byteLength(text);
    console.log(`label bytes: /metrics ${(bytes / MiB).toFixed(2)} MB, series dropped ${samples(text, 'wowza_exporter_series_dropped', { server: 'flood' })[0]?.value}`);
    expect(bytes).toBeLessThan(10 * MiB);

    for (const metric of ['wowza_stream_uptime_seconds', 'wowza_stream_connected']) {
      const streams = samples(text, metric, { server: 'flood' }).map((s) => s.labels.stream!);
      expect(new Set(streams).size).toBe(STREAMS);
      for (const s of streams) {
        expect(Buffer.byteLength(s)).toBeLessThanOrEqual(96);
        expect(s).toMatch(/^s{79}~[0-9a-f]{16}$/);
      }
    }
    expect(text).not.toContain(streamName(0));
    // Said once per server, collector and label, not per poll or per stream.
    const said = exporter.output().split('\n').filter((l) => l.includes('label values over the length cap shortened') && l.includes('"collector":"stream"'));
    expect(said).toHaveLength(1);
  }, 480_000);
});
