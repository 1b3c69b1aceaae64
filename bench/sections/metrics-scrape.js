import { setTimeout as delay } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { startProcess, startWorker, stopChild } from '../lib/children.js';
import { startExporterProcess } from '../lib/exporter-process.js';
import { countSeries, createScraper } from '../lib/scraper.js';
import { percentile } from '../lib/stats.js';

/**
 * `/metrics` latency and body size at a given number of series while polls run, and the exporter's
 * memory at that size. The exporter is the built CLI in its own process; the simulator and the scraping
 * bench are other processes, so the exporter's RSS is its own.
 */

const SIM = new URL('../workers/simulator.js', import.meta.url).href;
const STREAM_ROUTE = 'GET /v2/servers/{server}/vhosts/{vhost}/applications/{app}/instances/{instance}/incomingstreams/{stream}/monitoring/current';
/** Series per stream (3 from the instance list, 13 from stream monitoring) and per application of 100 streams (19). */
const SERIES_PER_STREAM = 16 + 19 / 100;
/** The exporter's own series (process, build, per-collector) and the server-level Wowza ones, roughly. */
const FIXED_SERIES = 130;

export const streamsForSeries = (series) => Math.max(1, Math.round((series - FIXED_SERIES) / SERIES_PER_STREAM));

/** The default poll interval: the exporter runs at its defaults here. */
const POLL_INTERVAL_MS = 15_000;

/**
 * The server and nothing else (the stream cap raised only so that the 100,000-series case fits).
 * `connectioncounts`: viewers from the simulator's /connectioncounts, as `--wowza.connectioncounts-url` sets it.
 */
export function exporterConfig(simulator, overrides = {}, { connectioncounts = false } = {}) {
  return {
    servers: [{ url: simulator.url, username: simulator.username, auth: 'basic', ...(connectioncounts ? { connectioncounts_url: simulator.countsUrl } : {}) }],
    web: { listen_address: '127.0.0.1:0' },
    discovery: { max_streams_per_server: 50_000 },
    ...overrides,
  };
}

/** Scrapes every `everyMs` (one at a time) for `durationMs`, alternating plain and gzip. */
async function scrapeFor(scraper, durationMs, everyMs) {
  const plain = [];
  const gzip = [];
  let plainBytes = 0;
  let gzipBytes = 0;
  let body;
  const end = performance.now() + durationMs;
  for (let i = 0; performance.now() < end; i++) {
    const started = performance.now();
    const useGzip = i % 2 === 1;
    const r = await scraper.scrape({ gzip: useGzip });
    if (useGzip) {
      gzip.push(r.ms);
      gzipBytes = r.bytes;
    } else {
      plain.push(r.ms);
      plainBytes = r.bytes;
      body ??= r.body;
    }
    const wait = everyMs - (performance.now() - started);
    if (wait > 0) await delay(wait);
  }
  return { plain, gzip, plainBytes, gzipBytes, series: countSeries(body) };
}

/**
 * Per case: the exporter starts and finishes its first poll; then memory is watched for one poll interval
 * scraped like Prometheus does (every 5 s); then latency is sampled with a scrape every `everyMs`, far
 * more often than any Prometheus, so that scrapes land at every moment of the poll cycle.
 * `env`: extra environment for the exporter (runtime settings such as NODE_OPTIONS); `connectioncounts`: viewers
 * from the connectioncounts document (the REST stream reads then every 60 s).
 */
export async function runMetricsScrape({ cases, latencyMs, durationMs, everyMs, dir, log }) {
  const rows = [];
  for (const { series: target, env, label, connectioncounts, busy } of cases) {
    const streams = streamsForSeries(target);
    const sim = await startWorker('simulator', SIM);
    // `busy`: two CPU-bound processes beside the exporter for the whole row, as on a shared machine (issue 26).
    const hogs = busy ? [0, 1].map(() => startProcess(process.execPath, ['-e', 'for (;;) {}'])) : [];
    let exporter;
    let scraper;
    try {
      const topology = await sim.call('start', { latencyMs, streams });
      exporter = await startExporterProcess({ config: exporterConfig(topology, {}, { connectioncounts }), password: topology.password, dir, env });
      // The first poll of every stream comes first; the request budget (50 a second by default) makes it last about
      // streams / 50 s (100,000 series: about 2 minutes).
      await exporter.ready(Math.max(120_000, (streams / 50) * 2000 + 60_000));
      // Start-up (module loading, the cold first poll, undici's WebAssembly parser being optimised about a
      // second after the first request) peaks higher than anything later: recorded, then left out.
      await delay(2000);
      const startupPeakRss = exporter.resident().peakRss;
      scraper = createScraper(exporter.url);

      log(`  ~${target.toLocaleString('en-US')} series (${streams} streams)${label ? `, ${label}` : ''}: memory over a poll interval, scraped every 5 s`);
      exporter.resetPeak();
      await scrapeFor(scraper, POLL_INTERVAL_MS, 5000);
      const steadyPeakRss = exporter.resident().peakRss;
      const memory = await exporter.memory();

      // At least one poll interval: a shorter window (--quick) could fall between two polls and miss them.
      const latencyWindowMs = Math.max(durationMs, POLL_INTERVAL_MS + 500);
      log(`  latency: a scrape every ${everyMs} ms for ${latencyWindowMs / 1000} s while polls run`);
      exporter.resetPeak();
      await sim.call('resetCounters');
      const cpuBefore = exporter.cpuMs();
      const started = performance.now();
      const s = await scrapeFor(scraper, latencyWindowMs, everyMs);
      const elapsed = performance.now() - started;
      const cpu = exporter.cpuMs() - cpuBefore;
      const counters = await sim.call('counters');
      rows.push({
        targetSeries: target,
        label: label ?? '',
        env: env ?? {},
        streams,
        series: s.series,
        scrapes: s.plain.length + s.gzip.length,
        p50: percentile(s.plain, 50),
        p99: percentile(s.plain, 99),
        max: Math.max(...s.plain),
        gzipP50: percentile(s.gzip, 50),
        gzipP99: percentile(s.gzip, 99),
        bodyBytes: s.plainBytes,
        gzipBytes: s.gzipBytes,
        // Poll work done while the latencies were sampled, in cycles' worth of stream requests.
        pollCyclesDuring: (counters.byRoute[STREAM_ROUTE] ?? 0) / streams,
        exporterCpuShare: cpu / elapsed,
        heapUsed: memory.heapUsed,
        heapTotal: memory.heapTotal,
        rss: memory.rss,
        privateRss: memory.privateRss,
        peakRss: steadyPeakRss,
        rapidScrapePeakRss: exporter.resident().peakRss,
        startupPeakRss,
        pollWarnings: exporter.warnings.length,
        firstWarning: exporter.warnings[0],
      });
    } finally {
      for (const h of hogs) await stopChild(h, 1000);
      await scraper?.close();
      await exporter?.close();
      await sim.close();
    }
  }
  return rows;
}
