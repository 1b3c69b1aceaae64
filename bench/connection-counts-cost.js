#!/usr/bin/env node
/**
 * What connectioncounts costs the exporter (issue 48): `node bench/connection-counts-cost.js [--minutes 2]` (after
 * `npm run build`). Two servers of 10 applications x 200 streams answering in 20 ms each, two exporters at the
 * defaults side by side on the same machine: one given the server's connectioncounts provider, one with it off.
 * After a 40 s warm-up, over the window: each exporter's CPU time, its peak RSS since start (VmHWM), the requests a
 * minute its server saw, and the stream collector's interval in force and poll duration. Numbers go in
 * bench/RESULTS.md. BENCH_HEAP=1 adds each exporter's heap and its resident memory by kind of mapping.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { startWorker } from './lib/children.js';
import { startExporterProcess } from './lib/exporter-process.js';
import { cpuTimeMs, residentByMapping, residentMemory } from './lib/proc-stats.js';
import { createScraper } from './lib/scraper.js';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const WINDOW_MS = arg('minutes', 2) * 60_000;
const WARMUP_MS = arg('warmup', 40) * 1000;
const SIM = new URL('./workers/simulator.js', import.meta.url).href;

const value = (text, name, match) => {
  for (const line of text.split('\n')) if (line.startsWith(name) && line.includes(match)) return Number(line.slice(line.lastIndexOf(' ') + 1));
  return undefined;
};
const count = (text, name) => text.split('\n').filter((l) => l.startsWith(`${name}{`)).length;

const dir = mkdtempSync(join(tmpdir(), 'wowza-counts-cost-'));
const cases = [];
try {
  for (const counts of [true, false]) {
    const sim = await startWorker('simulator', SIM);
    const t = await sim.call('start', { latencyMs: 20, streams: 2000, perApp: 200 });
    const server = { url: t.url, username: t.username, connectioncounts_url: counts ? t.countsUrl : 'off' };
    const exporter = await startExporterProcess({ config: { servers: [server], web: { listen_address: '127.0.0.1:0' } }, password: t.password, dir });
    cases.push({ counts, sim, exporter, scraper: createScraper(exporter.url) });
  }
  console.log(`2 servers of 10 applications x 200 streams (20 ms a request); warm-up ${WARMUP_MS / 1000} s, then ${WINDOW_MS / 1000} s counted`);
  // BENCH_RSS_TRACE: each exporter's RSS (and peak so far) every 2 s through the run, to see when a peak comes.
  const trace = process.env.BENCH_RSS_TRACE ? setInterval(() => console.log(cases.map((c) => `${c.counts ? 'found' : 'off'} ${(residentMemory(c.exporter.pid).rss / 1e6).toFixed(0)} MB (peak ${(residentMemory(c.exporter.pid).peakRss / 1e6).toFixed(0)})`).join('  ')), 2000) : undefined;
  await delay(WARMUP_MS);
  for (const c of cases) {
    await c.sim.call('resetCounters');
    c.cpuAtStart = cpuTimeMs(c.exporter.pid);
  }
  await delay(WINDOW_MS);
  clearInterval(trace);
  const rows = [];
  for (const c of cases) {
    const cpuMs = cpuTimeMs(c.exporter.pid) - c.cpuAtStart;
    const { peakRss } = residentMemory(c.exporter.pid);
    const requests = (await c.sim.call('counters')).total;
    const text = (await c.scraper.scrape()).body.toString('utf8');
    const heap = process.env.BENCH_HEAP ? await c.exporter.memory() : undefined;
    if (process.env.BENCH_HEAP) {
      const byMapping = Object.entries(residentByMapping(c.exporter.pid)).map(([k, v]) => `${k} ${(v / 1e6).toFixed(1)} MB`);
      console.log(`${c.counts ? 'found' : 'off'}: resident by mapping: ${byMapping.join(', ')}`);
      const spaces = Object.entries(heap.spaces ?? {}).map(([k, v]) => `${k} ${(v / 1e6).toFixed(1)}`);
      console.log(`${c.counts ? 'found' : 'off'}: heap spaces (MB committed): ${spaces.join(', ')}`);
    }
    rows.push({
      ...(heap ? { heapMb: heap.heapUsed / 1e6, heapTotalMb: heap.heapTotal / 1e6, externalMb: heap.external / 1e6, rssMb: heap.rss / 1e6 } : {}),
      connectioncounts: c.counts ? 'found' : 'off',
      cpuSeconds: cpuMs / 1000,
      peakRssMb: peakRss / 1e6,
      requestsPerMinute: Math.round((requests / WINDOW_MS) * 60_000),
      streamInterval: value(text, 'wowza_exporter_collector_interval_seconds', 'collector="stream"'),
      streamPollSeconds: value(text, 'wowza_exporter_collector_duration_seconds', 'collector="stream"'),
      streamsWithViewers: count(text, 'wowza_stream_connections_current'),
      viewerSeries: count(text, 'wowza_stream_connections'),
      series: text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length,
    });
  }
  console.table(rows);
  console.log(JSON.stringify(rows));
} finally {
  for (const c of cases) {
    await c.scraper.close().catch(() => undefined);
    await c.exporter.close().catch(() => undefined);
    await c.sim.close().catch(() => undefined);
  }
  rmSync(dir, { recursive: true, force: true });
}
