#!/usr/bin/env node
/**
 * One replica and a fleet (issue 47): `node bench/fleet.js [--servers 1000] [--streams 10]` (after `npm run build`).
 * Starts that many simulators, each on a loopback address of its own (127.2.x.y:8087, one application of `--streams`
 * streams), in a process of their own; lists them in a target file; runs `wowza-exporter serve` on it at the defaults,
 * as users run it. Prints how long until every `wowza_up` is 1, the health probes (every 250 ms, 3 s timeout) over the
 * whole run, then 10 plain and 5 gzip scrapes in the steady state (from 45 s on), each timed from the request to the
 * last byte, and the exporter's CPU and memory. Numbers go in bench/RESULTS.md.
 */
import { spawn } from 'node:child_process';
import { get as httpGet } from 'node:http';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { startHealthProbes } from './lib/health-probes.js';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const SERVERS = arg('servers', 1000);
const STREAMS = arg('streams', 10);
const PASSWORD = 'fleet-bench';
// BENCH_CLI: another build's dist/cli.js, to compare (the simulators stay this checkout's).
const CLI = process.env.BENCH_CLI ?? fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const address = (i) => `127.2.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`;

const dir = mkdtempSync(join(tmpdir(), 'wowza-fleet-bench-'));
const children = [];
const stopAll = () => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
};
process.on('exit', stopAll);
process.on('SIGINT', () => process.exit(130));

// The simulators: one process, so their CPU is not the exporter's.
const sims = spawn(process.execPath, [fileURLToPath(new URL('./workers/fleet-simulators.js', import.meta.url)), String(SERVERS), String(STREAMS), PASSWORD], { stdio: ['ignore', 'pipe', 'inherit'] });
children.push(sims);
await new Promise((resolve, reject) => {
  sims.stdout.on('data', (d) => d.toString().includes('ready') && resolve());
  sims.on('exit', (code) => reject(new Error(`simulators exited with ${code}`)));
});
console.log(`${SERVERS} simulators of ${STREAMS} streams up`);

writeFileSync(join(dir, 'password'), PASSWORD, { mode: 0o600 });
writeFileSync(join(dir, 'targets.yaml'), `- module: fleet\n  targets:\n${Array.from({ length: SERVERS }, (_, i) => `    - http://${address(i)}:8087`).join('\n')}\n`);
writeFileSync(
  join(dir, 'config.yaml'),
  `servers_files: [${join(dir, 'targets.yaml')}]\nmodules: {fleet: {username: admin, password_file: ${join(dir, 'password')}, auth: basic}}\n`,
);
const port = 19300 + Math.floor(Math.random() * 500);
const url = `http://127.0.0.1:${port}`;
// Its log goes to a file (BENCH_FLEET_LOG to keep it): a pipe nobody reads would stop it once full.
const logFile = process.env.BENCH_FLEET_LOG ?? join(dir, 'exporter.log');
// BENCH_EXPORTER_NODE_ARGS: node flags for the exporter alone (say `--cpu-prof --cpu-prof-dir=/tmp/prof`), to see where its time goes.
const nodeArgs = (process.env.BENCH_EXPORTER_NODE_ARGS ?? '').split(' ').filter(Boolean);
const exporter = spawn(process.execPath, [...nodeArgs, CLI, 'serve', '--config', join(dir, 'config.yaml'), '--web.listen-address', `127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', openSync(logFile, 'w')] });
children.push(exporter);
const started = Date.now();

// Health, as a liveness probe asks it, for the whole run.
const health = startHealthProbes(url);

// node:http, not fetch: fetch undoes the gzip itself, in this process and on the same two cores, which would time the
// client's decompression (Prometheus's is a fraction of it) along with the exporter's answer. The bytes are read as
// they come; a gzip body is undone after the clock stops.
const scrape = (gzip) =>
  new Promise((resolve, reject) => {
    const t = performance.now();
    const req = httpGet(`${url}/metrics`, { headers: { 'accept-encoding': gzip ? 'gzip' : 'identity' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const ms = performance.now() - t;
        const body = Buffer.concat(chunks);
        const text = res.headers['content-encoding'] === 'gzip' ? gunzipSync(body).toString() : body.toString();
        resolve({ ms, text, bytes: body.length });
      });
    });
    req.on('error', reject);
  });

let upAt;
for (;;) {
  await delay(5000);
  let text;
  try {
    text = (await scrape(false)).text;
  } catch (err) {
    console.log(`scrape failed: ${err.message}`);
    if (exporter.exitCode !== null) throw new Error(`the exporter exited with ${exporter.exitCode} (its log: ${logFile})`);
    continue;
  }
  const up = text.split('\n').filter((l) => l.startsWith('wowza_up{') && l.endsWith(' 1')).length;
  const elapsed = (Date.now() - started) / 1000;
  console.log(`${elapsed.toFixed(0)} s: ${up} of ${SERVERS} servers up`);
  if (up === SERVERS) {
    upAt = elapsed;
    break;
  }
  if (elapsed > 240) break;
}

// Scrapes in the steady state: every collector has run at least twice (15 s intervals), the stream polls included.
const STEADY_AFTER_S = 45;
await delay(Math.max(0, STEADY_AFTER_S * 1000 - (Date.now() - started)));
const plain = [];
const gz = [];
let series = 0;
let bytes = 0;
for (let i = 0; i < 10; i++) {
  const s = await scrape(false);
  plain.push(s.ms);
  series = s.text.split('\n').filter((l) => l && !l.startsWith('#')).length;
  bytes = s.bytes;
  await delay(1000);
}
for (let i = 0; i < 5; i++) {
  gz.push((await scrape(true)).ms);
  await delay(1000);
}
const last = (await scrape(false)).text;
const value = (name) => Number(last.split('\n').find((l) => l.startsWith(`${name} `))?.split(' ')[1]);
const healthSaid = (await health.stop()).text;
console.log(
  [
    `every wowza_up 1 after: ${upAt === undefined ? 'not within 300 s' : `${upAt.toFixed(0)} s`}`,
    `series ${series}, /metrics ${(bytes / 1e6).toFixed(1)} MB`,
    `plain scrapes: slowest ${Math.max(...plain).toFixed(0)} ms, median ${plain.sort((a, b) => a - b)[5].toFixed(0)} ms`,
    `gzip scrapes: slowest ${Math.max(...gz).toFixed(0)} ms`,
    healthSaid,
    `exporter: CPU ${value('process_cpu_seconds_total').toFixed(0)} s over ${((Date.now() - started) / 1000).toFixed(0)} s, RSS ${(value('process_resident_memory_bytes') / 1e6).toFixed(0)} MB`,
  ].join('\n'),
);
// A clean stop, so that a profile asked for in BENCH_EXPORTER_NODE_ARGS is written.
exporter.kill('SIGTERM');
await Promise.race([new Promise((resolve) => exporter.once('exit', resolve)), delay(15_000)]);
process.exit(0);
