#!/usr/bin/env node
/**
 * wowza-exporter performance benchmark (`npm run bench`; needs `npm run build` first, which the npm
 * script does). Every measured party runs in a process of its own on loopback: the simulator, the
 * exporter (the built CLI, or the poller worker that drives the collectors directly), Loki receivers,
 * and this process, which only orchestrates, scrapes and prints.
 *
 *   node bench/run.js [--only=footprint,defaults,poll,scrape,churn,log-throughput,log-delay,server-cost] [--quick] [--out=FILE]
 *
 * Prints one table per section, then the targets (issues 9 and 16) with the measured value, and writes
 * everything to bench/results.json. See bench/RESULTS.md for the recorded results and their analysis.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { killAllChildren } from './lib/children.js';
import { bytes, int, megabytes, ms, ratio } from './lib/format.js';
import { describeMachine } from './lib/machine.js';
import { printTable } from './lib/table.js';
import { runChurn } from './sections/memory-churn.js';
import { runDefaults } from './sections/defaults.js';
import { runFootprint } from './sections/footprint.js';
import { runLogDelay } from './sections/log-delay.js';
import { runLogThroughput } from './sections/log-throughput.js';
import { runMetricsScrape } from './sections/metrics-scrape.js';
import { runPollCycles } from './sections/poll-cycle.js';
import { runServerCost } from './sections/server-cost.js';
import { evaluateTargets } from './targets.js';

const SECTIONS = ['footprint', 'defaults', 'poll', 'scrape', 'churn', 'log-throughput', 'log-delay', 'server-cost'];
/** The whole run is bounded: past this, every child is killed and the bench fails. */
const DEADLINE_MS = 30 * 60_000;
const LATENCY_MS = 20;
const FOLLOW_INTERVAL_MS = 2000;

function parseArgs(argv) {
  const args = { only: SECTIONS, quick: false, out: fileURLToPath(new URL('./results.json', import.meta.url)) };
  for (const a of argv) {
    if (a === '--quick') args.quick = true;
    else if (a.startsWith('--only=')) args.only = a.slice(7).split(',').filter(Boolean);
    else if (a.startsWith('--out=')) args.out = a.slice(6);
    else if (a === '--help' || a === '-h') {
      process.stdout.write('usage: node bench/run.js [--only=' + SECTIONS.join(',') + '] [--quick] [--out=FILE]\n');
      process.exit(0);
    } else {
      process.stderr.write(`bench: unknown argument ${a} (try --help)\n`);
      process.exit(2);
    }
  }
  const unknown = args.only.filter((s) => !SECTIONS.includes(s));
  if (unknown.length > 0) {
    process.stderr.write(`bench: unknown section ${unknown.join(', ')}; sections are ${SECTIONS.join(', ')}\n`);
    process.exit(2);
  }
  return args;
}

const log = (line) => process.stdout.write(`${line}\n`);

function printDefaults({ sizes, capacity, counts }) {
  printTable(`At the defaults, as users run it (the CLI with only the server configured; ${LATENCY_MS} ms latency, 15 s interval)`, [
    ['streams', 'first poll (cold)', 'stream cycle', 'max', 'limit', 'every stream every cycle', 'failed polls'],
    ...sizes.map((r) => [int(r.streams), ms(r.firstMs), ms(r.steadyMs), ms(r.maxMs), r.limit, r.everyStreamEveryCycle ? 'yes' : 'NO', r.failedPolls]),
  ]);
  printTable(`A server serving N requests at once (simulator --capacity N, ${LATENCY_MS} ms each), polled every 5 s at poll.concurrency auto`, [
    ['streams', 'capacity', 'cycle', 'ideal (requests x latency / N)', 'ratio', 'server p95 queue wait', 'limit'],
    ...capacity.map((r) => [int(r.streams), r.capacity, ms(r.cycleMs), ms(r.idealMs), r.ratio.toFixed(2), ms(r.p95WaitMs), r.limit]),
  ]);
  printTable('connectioncounts (viewers of every stream in one request)', [
    ['streams', 'all viewers on /metrics after', 'connectioncounts requests a cycle', 'stream requests a cycle', 'equal to REST'],
    [int(counts.streams), ms(counts.allViewersAfterMs ?? NaN), counts.countsRequestsPerCycle, counts.streamRequestsPerCycle, `${counts.equalToRest}/${counts.streams}`],
  ]);
}

function printPoll({ rows, disabled }) {
  printTable(`Poll cycle at ${LATENCY_MS} ms simulated latency (median of the cycles run; one vhost, apps of <= 100 streams)`, [
    ['streams', 'apps', 'mode', 'concurrency', 'cycles', 'cycle time', 'requests', 'expected', 'exporter CPU', 'vs serial'],
    ...rows.map((r) => [
      int(r.streams),
      int(r.apps),
      r.mode,
      r.concurrency,
      r.cycles,
      ms(r.ms),
      int(r.requests),
      int(r.expectedRequests),
      ms(r.cpuMs),
      r.speedupVsSerial === undefined ? '-' : ratio(r.speedupVsSerial),
    ]),
  ]);
  if (disabled.length > 0) {
    printTable('Requests per cycle with one collector disabled (1,000 streams, concurrency 32)', [
      ['disabled', 'requests', 'saved', 'expected saved'],
      ...disabled.map((d) => [d.disabled, int(d.requests), int(d.saved), int(d.expectedSaved)]),
    ]);
  }
}

const caseName = (r) => `${int(r.series)}${r.label ? ` (${r.label})` : ''}`;

function printScrape(rows) {
  printTable('/metrics while polls run (defaults: 20 ms latency, 15 s interval; a scrape every 100 ms, plain and gzip alternating)', [
    ['series', 'streams', 'scrapes', 'p50', 'p99', 'max', 'gzip p50', 'gzip p99', 'body', 'gzip body', 'poll cycles', 'exporter CPU'],
    ...rows.map((r) => [
      caseName(r),
      int(r.streams),
      r.scrapes,
      ms(r.p50),
      ms(r.p99),
      ms(r.max),
      ms(r.gzipP50),
      ms(r.gzipP99),
      bytes(r.bodyBytes),
      bytes(r.gzipBytes),
      r.pollCyclesDuring.toFixed(2),
      `${(r.exporterCpuShare * 100).toFixed(0)}%`,
    ]),
  ]);
  printTable('Exporter memory: after a full GC; peak over a poll interval scraped every 5 s; peak under 10 scrapes/s; peak at start-up', [
    ['series', 'heap used', 'heap total', 'RSS', 'private RSS', 'peak RSS', 'peak, 10 scrapes/s', 'start-up peak'],
    ...rows.map((r) => [caseName(r), bytes(r.heapUsed), bytes(r.heapTotal), bytes(r.rss), bytes(r.privateRss), bytes(r.peakRss), bytes(r.rapidScrapePeakRss), bytes(r.startupPeakRss)]),
  ]);
  for (const r of rows) if (r.pollWarnings > 0) log(`  note: ${r.pollWarnings} warnings from the exporter at ${caseName(r)} series, first: ${r.firstWarning}`);
}

function printChurn(c) {
  printTable(
    `Stream churn: ${c.streams} streams, ${Math.round(c.fraction * 100)}% replaced every ${c.intervalMs} ms poll cycle, ${c.cycles} cycles (1 h at 15 s), ${int(c.streamsCreated)} new stream names`,
    [
      ['phase', 'cycles', 'series', 'heap used (after GC)', 'RSS', 'private RSS', 'peak RSS'],
      ...c.phases.map((p) => [p.phase, p.cycles, int(p.series), bytes(p.heapUsed), bytes(p.rss), bytes(p.privateRss), bytes(p.peakRss)]),
    ],
  );
  if (c.pollWarnings > 0) log(`  note: ${c.pollWarnings} warnings from the exporter, first: ${c.firstWarning}`);
}

function printLogThroughput({ rows, stages }) {
  printTable(`Log pipeline throughput (access log, ${Math.round(rows[0].avgLineBytes)} bytes/line on average, one process)`, [
    ['pipeline', 'lines/s', 'CPU per line'],
    ...rows.map((r) => [r.label, int(r.linesPerSecond), `${r.cpuPerLineUs.toFixed(1)} us`]),
  ]);
  printTable('Log pipeline steps, cumulative cost per line (batches of 1,000; the ceiling of one thread)', [
    ['steps', 'per line', 'ceiling'],
    ...stages.map((s) => [s.step, `${s.usPerLine.toFixed(1)} us`, `${int(1e6 / s.usPerLine)} lines/s`]),
  ]);
}

function printLogDelay(d) {
  printTable(`End-to-end log delay: simulator -> exporter (follow interval ${ms(d.followIntervalMs)}) -> Loki receiver`, [
    ['lines', 'arrived', 'min', 'p50', 'p95', 'max'],
    [d.markers, d.arrived, ms(d.min), ms(d.p50), ms(d.p95), ms(d.max)],
  ]);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const watchdog = setTimeout(() => {
    process.stderr.write(`bench: still running after ${DEADLINE_MS / 60_000} minutes: stopping\n`);
    killAllChildren();
    process.exit(1);
  }, DEADLINE_MS);
  watchdog.unref();

  const started = performance.now();
  const machine = describeMachine();
  log(`wowza-exporter bench: ${machine.nproc} CPUs (${machine.cpuModel}), ${bytes(machine.memoryBytes)} RAM, Node.js ${machine.node}`);
  // Latencies and cycle times are only as good as the machine is quiet: say so when it is not.
  const busy = () => loadavg()[0] > machine.nproc * 0.5;
  if (busy()) log(`note: load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} on ${machine.nproc} CPUs before starting: other work will inflate times`);
  const dir = mkdtempSync(join(tmpdir(), 'wowza-bench-'));
  const results = { startedAt: new Date().toISOString(), machine, options: { sections: args.only, quick: args.quick, latencyMs: LATENCY_MS } };
  const sectionTimes = {};
  const run = async (name, fn) => {
    if (!args.only.includes(name)) return;
    log(`\n== ${name}`);
    const t = performance.now();
    results[name] = await fn();
    sectionTimes[name] = (performance.now() - t) / 1000;
  };

  try {
    await run('footprint', async () => {
      const cases = [{ streams: 1 }, { streams: 200 }, { streams: 1000 }, { streams: 1, busy: true }];
      const rows = await runFootprint({ cases: args.quick ? cases.slice(0, 1) : cases, latencyMs: LATENCY_MS, durationMs: args.quick ? 30_000 : 60_000, dir, log });
      printTable('Footprint as a new user runs it (`node dist/cli.js --wowza.url … --wowza.username … --wowza.password-file …`, nothing else; RSS each second, scraped every 5 s)', [
        ['streams', 'machine', 'series', 'steady RSS (median, last third)', 'peak RSS (VmHWM, start included)'],
        ...rows.map((r) => [int(r.streams), r.busy ? 'busy (2 CPU-bound processes)' : 'quiet', int(r.series), megabytes(r.steadyRss), megabytes(r.peakRss)]),
      ]);
      return rows;
    });
    await run('defaults', async () => {
      const r = await runDefaults({ latencyMs: LATENCY_MS, dir, log, quick: args.quick });
      printDefaults(r);
      return r;
    });
    await run('poll', async () => {
      const r = await runPollCycles({
        sizes: [10, 100, 1000, 5000],
        concurrencies: [1, 8, 16, 32, 'auto'],
        latencyMs: LATENCY_MS,
        disabledAt: { streams: 1000, concurrency: 32 },
        skipSlow: args.quick,
        log,
      });
      printPoll(r);
      return r;
    });
    await run('scrape', async () => {
      const cases = [
        { series: 1000 },
        { series: 20_000 },
        { series: 100_000 },
        // The one setting the Dockerfile, the systemd unit and the Kubernetes manifest still add (fewer malloc
        // arenas; the smaller young generation is the CLI's own). A tuned row: the target is judged at the defaults.
        { series: 20_000, label: 'MALLOC_ARENA_MAX=2', env: { MALLOC_ARENA_MAX: '2' } },
        // The README's sizing with connectioncounts: the same series, viewers from one document a cycle.
        { series: 20_000, label: 'connectioncounts', connectioncounts: true },
        // Issue 26: the same defaults while two CPU-bound processes keep both CPUs busy.
        { series: 20_000, label: 'busy machine (two CPU-bound processes beside it)', busy: true },
      ];
      const rows = await runMetricsScrape({ cases: args.quick ? [cases[0], cases[1], cases[3]] : cases, latencyMs: LATENCY_MS, durationMs: args.quick ? 6000 : 10_000, everyMs: 100, dir, log });
      printScrape(rows);
      return rows;
    });
    await run('churn', async () => {
      const c = await runChurn({ streams: 50, perApp: 50, fraction: 0.2, intervalMs: 300, cycles: args.quick ? 80 : 240, latencyMs: 2, dir, log, timeLimitMs: 150_000 });
      printChurn(c);
      return c;
    });
    await run('log-throughput', async () => {
      const r = await runLogThroughput({ lines: 100_000, runs: args.quick ? 1 : 3, log });
      printLogThroughput(r);
      return r;
    });
    await run('log-delay', async () => {
      const d = await runLogDelay({ markers: args.quick ? 8 : 20, followIntervalMs: FOLLOW_INTERVAL_MS, latencyMs: LATENCY_MS, backgroundLinesPerSecond: 50, dir, log });
      printLogDelay(d);
      return d;
    });

    await run('server-cost', async () => {
      const rows = await runServerCost({ dir, log, quick: args.quick, latencyMs: LATENCY_MS });
      printTable(`What a server is asked for, at the defaults (Digest, nonces retired after 50 uses or 30 s, ${LATENCY_MS} ms per request)`, [
        ['streams', 'connectioncounts', 'requests/min', '401 share', 'streams exported', 'stream interval'],
        ...rows.map((r) => [int(r.streams), r.counts ? 'yes' : 'no', int(r.requestsPerMinute), `${(r.unauthorizedShare * 100).toFixed(1)} %`, int(r.exported), r.streamInterval === undefined ? '-' : `${r.streamInterval.toFixed(1)} s`]),
      ]);
      return rows;
    });

    results.targets = evaluateTargets(results, { latencyMs: LATENCY_MS, followIntervalMs: FOLLOW_INTERVAL_MS });
    printTable('Targets (issues 9 and 16; 16 judges the defaults)', [['target', 'measured', 'met'], ...results.targets.map((t) => [t.target, t.measured, t.met === undefined ? 'n/a' : t.met ? 'yes' : 'NO'])]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    results.sectionSeconds = sectionTimes;
    results.loadAverageAtEnd = loadavg();
    results.totalSeconds = (performance.now() - started) / 1000;
    mkdirSync(dirname(args.out), { recursive: true });
    writeFileSync(args.out, JSON.stringify(results, null, 2) + '\n');
    log(`\nbench took ${results.totalSeconds.toFixed(0)} s; results in ${args.out}`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : err}\n`);
    killAllChildren();
    process.exit(1);
  },
);
