#!/usr/bin/env node
/**
 * A log backlog drained through `serve` (issue 48): `node bench/log-backlog.js [--lines 1000000]` (after `npm run build`).
 * A simulator holds an access log of that many lines (`--short-lines`: their URL columns empty, about 200 bytes a line); `wowza-exporter serve` runs at the defaults (request budget 50 a
 * second, `line_count` 1000) with `start_at: beginning` and a Loki sink pushing to a loopback receiver that answers 204.
 * Prints the drain rate, the busiest second of requests at the server, the health probes (every 250 ms, 3 s timeout)
 * and how many stream polls completed while the backlog drained. Numbers go in bench/RESULTS.md.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startSimulator } from '@wowza-exporter/simulator';
import { startHealthProbes } from './lib/health-probes.js';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const LINES = arg('lines', 1_000_000);
const PASSWORD = 'backlog-bench';
const CLI = process.env.BENCH_CLI ?? fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const LOG_TYPE = 'wowzastreamingengine_access';

const dir = mkdtempSync(join(tmpdir(), 'wowza-log-backlog-'));
let exporter;
process.on('exit', () => {
  exporter?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const sim = await startSimulator({ auth: 'basic', password: PASSWORD, apps: 1, streams: 10, renditions: [], logs: { linesPerSecond: 0, maxFileBytes: 1024 * 1024 * 1024 } });
sim.logs.generate(LOG_TYPE, LINES);
if (process.argv.includes('--short-lines')) {
  // The 200-byte lines: the same records with their URL columns empty (`-`) and a short user agent, in a
  // file of their own.
  const all = sim.logs.bytes(LOG_TYPE).toString('utf8').replace(/\b(?:rtsp|rtmp|http|https):\/\/[^\t\n]*/g, '-');
  const column = (all.match(/^#Fields: (.*)$/m)?.[1] ?? '').split(/\s+/).indexOf('c-user-agent');
  const text = all
    .split('\n')
    .map((l) => {
      if (l.startsWith('#') || column < 0) return l;
      const f = l.split('\t');
      if (f[column] !== '-') f[column] = 'VLC/3.0.20';
      return f.join('\t');
    })
    .join('\n');
  sim.logs.rotate(LOG_TYPE);
  sim.logs.appendRaw(LOG_TYPE, text);
}
const logBytes = sim.logs.bytes(LOG_TYPE).length;
console.log(`${LINES.toLocaleString('en-US')} lines in the access log, ${(logBytes / 1e6).toFixed(0)} MB (${Math.round(logBytes / LINES)} bytes a line)`);

// Loki's push API as far as the shipper can tell: 204 for every push.
const pushes = { requests: 0, bytes: 0 };
const loki = createServer((req, res) => {
  req.on('data', (c) => (pushes.bytes += c.length));
  req.on('end', () => {
    pushes.requests++;
    res.writeHead(204).end();
  });
});
await new Promise((resolve) => loki.listen(0, '127.0.0.1', resolve));

writeFileSync(
  join(dir, 'config.yaml'),
  JSON.stringify({
    servers: [{ name: 'wse-1', url: sim.url, username: sim.username, auth: 'basic', connectioncounts_url: 'off' }],
    logs: {
      positions_file: join(dir, 'positions.json'),
      dead_letter_file: join(dir, 'dead-letter.ndjson'),
      start_at: 'beginning',
      log_types: [LOG_TYPE],
      sinks: [{ type: 'loki', url: `http://127.0.0.1:${loki.address().port}` }],
      ...(process.env.BENCH_BATCH_LINES ? { batch: { max_lines: Number(process.env.BENCH_BATCH_LINES) } } : {}),
      // BENCH_PARSE_THREADS: the encoder threads (a tuned row; the default is what users run).
      ...(process.env.BENCH_PARSE_THREADS ? { parse_threads: Number(process.env.BENCH_PARSE_THREADS) } : {}),
    },
  }),
);
const port = 19800 + Math.floor(Math.random() * 100);
const url = `http://127.0.0.1:${port}`;
// BENCH_EXPORTER_NODE_ARGS: node flags for the exporter alone (say `--cpu-prof --cpu-prof-dir=/tmp/prof`).
const nodeArgs = (process.env.BENCH_EXPORTER_NODE_ARGS ?? '').split(' ').filter(Boolean);
exporter = spawn(process.execPath, [...nodeArgs, CLI, 'serve', '--config', join(dir, 'config.yaml'), '--web.listen-address', `127.0.0.1:${port}`], {
  env: { ...process.env, WOWZA_PASSWORD: PASSWORD },
  stdio: ['ignore', 'ignore', openSync(join(dir, 'exporter.log'), 'w')],
});
const started = performance.now();

// Requests the server saw, sampled every 100 ms: the busiest second is the most any 1 s window held.
const total = () => Object.values(sim.counters.byRoute).reduce((a, n) => a + n, 0);
const seen = [];
let busiestSecond = 0;
const sampler = setInterval(() => {
  const now = performance.now();
  const n = total();
  seen.push({ at: now, n });
  while (seen.length > 0 && seen[0].at < now - 1100) seen.shift();
  const from = seen.find((s) => s.at >= now - 1000) ?? seen[0];
  busiestSecond = Math.max(busiestSecond, n - from.n);
}, 100);

// Health, as a liveness probe asks it, for the whole run.
const health = startHealthProbes(url);

const value = (text, name, match = '') => text.split('\n').filter((l) => l.startsWith(name) && l.includes(match)).reduce((a, l) => a + Number(l.split(' ').at(-1)), 0);
let firstShippedAt;
let drainedAt;
let exporterCpu = 0;
const benchCpu = process.cpuUsage();
let streamPolls = 0;
let lastStreamPoll;
for (;;) {
  await delay(1000);
  let text;
  try {
    text = await (await fetch(`${url}/metrics`)).text();
  } catch {
    if (exporter.exitCode !== null) throw new Error(`the exporter exited with ${exporter.exitCode} (its log: ${join(dir, 'exporter.log')})`);
    continue;
  }
  const shipped = value(text, 'wowza_log_forwarded_lines_total');
  if (process.env.BENCH_QUEUE) console.log(`queue ${value(text, 'wowza_log_forward_queue_lines')} lines, ${shipped} shipped`);
  exporterCpu = value(text, 'process_cpu_seconds_total');
  if (shipped > 0) firstShippedAt ??= performance.now();
  const stream = value(text, 'wowza_exporter_last_poll_timestamp_seconds{', 'collector="stream"');
  if (stream > 0 && stream !== lastStreamPoll) {
    if (lastStreamPoll !== undefined && drainedAt === undefined) streamPolls++;
    lastStreamPoll = stream;
  }
  if (shipped >= LINES) {
    drainedAt = performance.now();
    break;
  }
  if (performance.now() - started > 600_000) break;
}
clearInterval(sampler);
const healthSaid = (await health.stop()).text;
const seconds = drainedAt === undefined ? undefined : (drainedAt - firstShippedAt) / 1000;
console.log(
  [
    seconds === undefined ? 'not drained within 600 s' : `drained in ${seconds.toFixed(1)} s from the first line shipped: ${Math.round(LINES / seconds).toLocaleString('en-US')} lines/s (${((drainedAt - started) / 1000).toFixed(1)} s from the start)`,
    `busiest second at the server: ${busiestSecond} requests`,
    healthSaid,
    `stream polls completed while draining: ${streamPolls}`,
    `Loki pushes: ${pushes.requests}, ${(pushes.bytes / 1e6).toFixed(0)} MB`,
    `CPU: the exporter ${exporterCpu.toFixed(1)} s, the simulator and receiver (this process) ${((process.cpuUsage(benchCpu).user + process.cpuUsage(benchCpu).system) / 1e6).toFixed(1)} s`,
  ].join('\n'),
);
exporter.kill('SIGTERM');
await Promise.race([new Promise((resolve) => exporter.once('exit', resolve)), delay(15_000)]);
await sim.close();
loki.close();
process.exit(0);
