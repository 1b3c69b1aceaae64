import { setTimeout as delay } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { startWorker } from '../lib/children.js';
import { startExporterProcess } from '../lib/exporter-process.js';
import { createScraper } from '../lib/scraper.js';
import { median } from '../lib/stats.js';

/**
 * Polling as users run it: the built CLI with a config that holds the server and nothing else (no concurrency,
 * no timeout, no interval unless the case says so), against simulators of different size and capacity. What
 * is read is what a user sees on /metrics: the stream collector's duration and success, the series, the
 * concurrency limit; the simulator says what it served and how long requests queued there.
 */

const SIM = new URL('../workers/simulator.js', import.meta.url).href;
const STREAM_ROUTE = 'GET /v2/servers/{server}/vhosts/{vhost}/applications/{app}/instances/{instance}/incomingstreams/{stream}/monitoring/current';
const COUNTS_ROUTE = 'GET /connectioncounts';

/** `name{labels} value` lines of one metric, as [labels text, value]. */
function samplesOf(text, name) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== '{' && line[name.length] !== ' ')) continue;
    const i = line.lastIndexOf(' ');
    out.push([line.slice(name.length, i), Number(line.slice(i + 1))]);
  }
  return out;
}
const valueOf = (text, name, match) => samplesOf(text, name).find(([labels]) => labels.includes(match))?.[1];

/** One case: a simulator, the exporter at its defaults (plus `extra` config), and a way to wait for polls. */
export async function startCase({ latencyMs, streams, capacity = 0, frozen = false, extra = {}, dir, counts = false, env = {} }) {
  const sim = await startWorker('simulator', SIM);
  const topology = await sim.call('start', { latencyMs, streams, capacity, frozen });
  const server = { url: topology.url, username: topology.username, ...(counts ? { connectioncounts_url: topology.countsUrl } : {}) };
  const started = performance.now();
  const exporter = await startExporterProcess({ config: { servers: [server], web: { listen_address: '127.0.0.1:0' }, ...extra }, password: topology.password, dir, env });
  const scraper = createScraper(exporter.url);
  const scrape = async () => (await scraper.scrape()).body.toString('utf8');
  let lastPoll = 0;
  return {
    sim,
    topology,
    started,
    exporter,
    scrape,
    /** Waits for the next completed poll of `collector`; returns the scrape that shows it. */
    async nextPoll(collector = 'stream', timeoutMs = 60_000) {
      const end = performance.now() + timeoutMs;
      while (performance.now() < end) {
        const text = await scrape();
        const at = valueOf(text, 'wowza_exporter_last_poll_timestamp_seconds', `collector="${collector}"`) ?? 0;
        const failed = valueOf(text, 'wowza_exporter_collector_success', `collector="${collector}"`) === 0;
        if (at > lastPoll || failed) {
          lastPoll = Math.max(lastPoll, at);
          return text;
        }
        await delay(100);
      }
      throw new Error(`no ${collector} poll within ${timeoutMs} ms`);
    },
    async close() {
      await scraper.close();
      await exporter.close();
      await sim.close();
    },
  };
}

const streamPoll = (text) => ({
  ms: (valueOf(text, 'wowza_exporter_collector_duration_seconds', 'collector="stream"') ?? NaN) * 1000,
  ok: valueOf(text, 'wowza_exporter_collector_success', 'collector="stream"') === 1,
  streams: samplesOf(text, 'wowza_stream_uptime_seconds').length,
  limit: valueOf(text, 'wowza_exporter_concurrency_limit', '') ?? NaN,
});

/**
 * Streams at the defaults (15 s): the first poll (cold) and `cycles` more. `extra`: config beside the server;
 * `env`: the exporter's environment (BENCH_NODE_ARGS: node options for a comparison row).
 */
export async function sizeCase({ latencyMs, streams, cycles, dir, log, extra = {}, counts = false, env = {} }) {
  log(`  ${streams} streams, defaults: ${cycles + 1} stream polls (~${cycles * 15} s)`);
  const c = await startCase({ latencyMs, streams, dir, extra, counts, env });
  try {
    const polls = [];
    // Above about 700 streams the default request budget (50 a second) polls streams less often than every 15 s.
    for (let i = 0; i <= cycles; i++) polls.push(streamPoll(await c.nextPoll('stream', 240_000)));
    const steady = polls.slice(1);
    const text = await c.scrape();
    return {
      streams,
      intervalSeconds: valueOf(text, 'wowza_exporter_collector_interval_seconds', 'collector="stream"'),
      firstMs: polls[0].ms,
      steadyMs: median(steady.map((p) => p.ms)),
      maxMs: Math.max(...steady.map((p) => p.ms)),
      limit: steady.at(-1).limit,
      everyStreamEveryCycle: polls.every((p) => p.ok && p.streams === streams),
      failedPolls: polls.filter((p) => !p.ok).length,
      warnings: c.exporter.warnings.slice(0, 3),
    };
  } finally {
    await c.close();
  }
}

/** A server serving `capacity` requests at once, polled every 5 s: cycle time against the ideal, and its queue waits. */
async function capacityCase({ latencyMs, streams, capacity, cycles, dir, log }) {
  log(`  ${streams} streams on a server of capacity ${capacity || 'unlimited'}: ${cycles + 1} polls at 5 s`);
  const c = await startCase({ latencyMs, streams, capacity, dir, extra: { poll: { interval: '5s' } } });
  try {
    await c.nextPoll(); // learning
    const rows = [];
    for (let i = 0; i < cycles; i++) {
      await c.sim.call('resetCounters');
      const p = streamPoll(await c.nextPoll());
      const counters = await c.sim.call('counters');
      const waits = await c.sim.call('queueWaits');
      // The stream collector's span holds the whole cycle's requests (the other collectors run inside it).
      const ideal = capacity ? (counters.total * latencyMs) / capacity : undefined;
      rows.push({ ms: p.ms, ideal, requests: counters.total, p95WaitMs: waits.p95Ms, limit: p.limit, ok: p.ok });
    }
    return {
      streams,
      capacity,
      cycleMs: median(rows.map((r) => r.ms)),
      idealMs: capacity ? median(rows.map((r) => r.ideal)) : undefined,
      ratio: capacity ? median(rows.map((r) => r.ms / r.ideal)) : undefined,
      p95WaitMs: median(rows.map((r) => r.p95WaitMs)),
      limit: rows.at(-1).limit,
      ok: rows.every((r) => r.ok),
    };
  } finally {
    await c.close();
  }
}

/** connectioncounts on: how soon every stream's viewers are on /metrics, requests per cycle, and the values. */
async function countsCase({ latencyMs, streams, dir, log }) {
  log(`  ${streams} streams with connectioncounts: viewers of every stream, requests per cycle, values`);
  const c = await startCase({ latencyMs, streams, frozen: true, counts: true, dir });
  try {
    let allAtMs;
    let text = '';
    const end = performance.now() + 60_000;
    while (performance.now() < end) {
      text = await c.scrape();
      if (samplesOf(text, 'wowza_stream_connections_current').length >= streams) {
        allAtMs = performance.now() - c.started;
        break;
      }
      await delay(100);
    }
    // The numbers against the REST monitoring numbers of the same moment (the simulator's clock stands still).
    const rest = await c.sim.call('streamConnections');
    let equal = 0;
    for (const [labels, value] of samplesOf(text, 'wowza_stream_connections_current')) {
      const app = /application="([^"]*)"/.exec(labels)?.[1];
      const stream = /stream="([^"]*)"/.exec(labels)?.[1];
      if (rest[`${app}/${stream}`]?.total === value) equal++;
    }
    // A cycle after the stream collector's first (it then reads bytes and uptime every 60 s, or less often when the
    // request budget stretches it: 5,000 streams take 100 s of it).
    await c.nextPoll('stream', 300_000);
    await c.nextPoll('connectioncounts');
    await c.sim.call('resetCounters');
    await c.nextPoll('connectioncounts');
    const counters = await c.sim.call('counters');
    return {
      streams,
      allViewersAfterMs: allAtMs,
      equalToRest: equal,
      countsRequestsPerCycle: counters.byRoute[COUNTS_ROUTE] ?? 0,
      streamRequestsPerCycle: counters.byRoute[STREAM_ROUTE] ?? 0,
    };
  } finally {
    await c.close();
  }
}

export async function runDefaults({ latencyMs, dir, log, quick }) {
  const sizes = [];
  for (const streams of [1000, 5000]) sizes.push(await sizeCase({ latencyMs, streams, cycles: quick ? 1 : 2, dir, log }));
  const capacity = [];
  capacity.push(await capacityCase({ latencyMs, streams: 200, capacity: 2, cycles: quick ? 2 : 3, dir, log }));
  const counts = await countsCase({ latencyMs, streams: 5000, dir, log });
  return { sizes, capacity, counts };
}
