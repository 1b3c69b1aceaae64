#!/usr/bin/env node
/**
 * The soak (issue 26): the exporter as users run it (the built CLI) against the simulator for `--minutes N` (10 by
 * default), with everything that churns at once, and a check that nothing grows.
 *
 *   npm run soak                  build, then 10 minutes
 *   node bench/soak.js --minutes 30
 *
 * What runs: polls every second and scrapes at 5 a second; streams added and removed every 10 s and stream reads
 * failing part of the time; a reload every 30 s alternating two configurations; a target file rewritten every 20 s;
 * an access log followed through a rotation every minute into an HTTP sink that is down for 20 s every 2 minutes.
 * Each minute it records RSS, V8 heap used (after two full GCs), open descriptors, active handles and series.
 *
 * It fails (exit 1) when, from minute 2 to the end, RSS or heap grew by more than 5 MiB, descriptors by more than
 * 5 or handles by more than 10 (median of the last three minutes against minutes 2-4, so one garbage collection or
 * socket does not decide), or when a log line was lost or delivered twice.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { DEFAULT_VHOST, startSimulator } from '@wowza-exporter/simulator';
import { startExporterProcess } from './lib/exporter-process.js';

const MiB = 1024 * 1024;
const ACCESS = 'wowzastreamingengine_access';
const STREAM_READ = 'GET /v2/servers/{server}/vhosts/{vhost}/applications/{app}/instances/{instance}/incomingstreams/{stream}/monitoring/current';
const LINES_PER_SECOND = 20;

function argMinutes(argv) {
  const i = argv.indexOf('--minutes');
  const v = i >= 0 ? Number(argv[i + 1]) : 10;
  if (!(v >= 3)) throw new Error('--minutes takes a number of 3 or more (the first two minutes are the baseline)');
  return v;
}

/** An HTTP sink target that records every soak line it took, and can be down (503). */
async function startReceiver() {
  const counts = new Map();
  let down = false;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (down) return res.writeHead(503).end('down for the soak');
      const raw = Buffer.concat(chunks);
      const body = JSON.parse((req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8'));
      for (const record of body) {
        const m = /^soak-(\d+)$/.exec(String(record['x-comment'] ?? ''));
        if (!m) continue;
        // Both servers (the configured one and the target file's) follow the same log: count each on its own.
        let of = counts.get(record.server);
        if (!of) counts.set(record.server, (of = new Map()));
        of.set(Number(m[1]), (of.get(Number(m[1])) ?? 0) + 1);
      }
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/ingest`,
    counts,
    setDown: (v) => (down = v),
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))),
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fdsOf = (pid) => readdirSync(`/proc/${pid}/fd`).length;

async function main() {
  const minutes = argMinutes(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'wowza-soak-'));
  const sim = await startSimulator({ auth: 'basic', apps: 2, streams: 10 });
  const receiver = await startReceiver();
  const targets = join(dir, 'targets.yaml');
  const writeTargets = (site) => writeFileSync(targets, JSON.stringify([{ targets: [sim.url], labels: { site } }]));
  writeTargets('a');
  const config = (variant) => ({
    servers: [{ name: 'soak', url: sim.url, username: sim.username, connectioncounts_url: 'off' }],
    servers_files: [targets],
    servers_files_refresh_interval: '5s',
    modules: { default: { username: sim.username } },
    web: { listen_address: '127.0.0.1:0' },
    poll: { interval: '1s' },
    // The two configurations a reload alternates between: the vhost collector on and off.
    collectors: { vhost: variant === 'a' },
    logs: {
      positions_file: join(dir, 'positions.json'),
      dead_letter_file: join(dir, 'dead-letter.ndjson'),
      log_types: ['access'],
      start_at: 'beginning',
      follow_interval: '500ms',
      sinks: [{ type: 'http', url: receiver.url }],
    },
  });
  const exporter = await startExporterProcess({ config: config('a'), password: sim.password, dir });
  await exporter.ready();

  let seq = 0;
  let series = 0;
  let scrapes = 0;
  const timers = [];
  const every = (ms, fn) => timers.push(setInterval(fn, ms));
  // Log lines with a sequence number the receiver counts.
  every(1000 / LINES_PER_SECOND, () => sim.logs.append(ACCESS, { 'x-severity': 'INFO', 'x-category': 'stream', 'x-event': 'play', 'x-comment': `soak-${++seq}` }));
  // Streams come and go; stream reads fail part of the time.
  let churned = 0;
  const app = sim.topology.list().vhosts[0].apps[0].name;
  every(10_000, () => {
    sim.topology.addStream(DEFAULT_VHOST, app, `churn${++churned}`);
    if (churned > 3) sim.topology.removeStream(DEFAULT_VHOST, app, `churn${churned - 3}`);
    sim.faults.inject(STREAM_READ, 500, { times: 5 });
  });
  let variant = 'a';
  every(30_000, () => {
    variant = variant === 'a' ? 'b' : 'a';
    writeFileSync(exporter.configFile, JSON.stringify(config(variant), null, 2));
    process.kill(exporter.pid, 'SIGHUP');
  });
  let site = 'a';
  every(20_000, () => writeTargets((site = site === 'a' ? 'b' : 'a')));
  every(60_000, () => sim.logs.rotate(ACCESS));
  every(120_000, () => {
    receiver.setDown(true);
    setTimeout(() => receiver.setDown(false), 20_000).unref();
  });
  // Scrapes at 5 a second, never two at once.
  let scraping = false;
  every(200, async () => {
    if (scraping) return;
    scraping = true;
    try {
      const text = await (await fetch(`${exporter.url}/metrics`)).text();
      series = text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
      scrapes++;
    } catch {
      // counted by the missing scrape; the exporter's own health is in the samples
    } finally {
      scraping = false;
    }
  });

  const samples = [];
  const started = Date.now();
  for (let minute = 1; minute <= minutes; minute++) {
    await delay(started + minute * 60_000 - Date.now());
    const m = await exporter.memory();
    samples.push({ minute, rss: m.rss, heap: m.heapUsed, fds: fdsOf(exporter.pid), handles: m.handles ?? 0, series, scrapes, sent: seq, received: receiver.counts.get('soak')?.size ?? 0 });
    const s = samples.at(-1);
    process.stdout.write(`minute ${String(minute).padStart(3)}  rss ${(s.rss / MiB).toFixed(1)} MiB  heap ${(s.heap / MiB).toFixed(1)} MiB  fds ${s.fds}  handles ${s.handles}  series ${s.series}  lines ${s.received}/${s.sent}\n`);
  }
  for (const t of timers) clearInterval(t);
  receiver.setDown(false);
  // Every line written must arrive, once per server that follows the log: wait for the followers and the sink.
  const servers = ['soak', new URL(sim.url).host];
  const complete = () => servers.every((s) => (receiver.counts.get(s)?.size ?? 0) >= seq);
  const deadline = Date.now() + 120_000;
  while (!complete() && Date.now() < deadline) await delay(500);
  const lost = [];
  let duplicated = 0;
  for (const server of servers) {
    const of = receiver.counts.get(server) ?? new Map();
    for (let i = 1; i <= seq; i++) {
      const n = of.get(i) ?? 0;
      if (n === 0) lost.push(`${server} #${i}`);
      if (n > 1) duplicated++;
    }
  }
  const warnings = exporter.warnings.slice(0, 10);
  await exporter.close();
  await receiver.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });

  const base = samples.slice(1, 4);
  const tail = samples.slice(-3);
  const growth = (k) => median(tail.map((s) => s[k])) - median(base.map((s) => s[k]));
  const checks = [
    ['RSS', growth('rss'), 5 * MiB, (v) => `${(v / MiB).toFixed(1)} MiB`],
    ['heap used', growth('heap'), 5 * MiB, (v) => `${(v / MiB).toFixed(1)} MiB`],
    ['open descriptors', growth('fds'), 5, String],
    ['active handles', growth('handles'), 10, String],
  ];
  process.stdout.write(`\nsoak of ${minutes} minutes: ${seq} log lines written, ${scrapes} scrapes\n`);
  let ok = true;
  for (const [what, v, limit, show] of checks) {
    const pass = v <= limit;
    ok &&= pass;
    process.stdout.write(`${pass ? 'ok  ' : 'FAIL'}  ${what} grew ${show(v)} from minutes 2-4 to the last three (limit ${show(limit)})\n`);
  }
  const linesOk = lost.length === 0 && duplicated === 0;
  ok &&= linesOk;
  process.stdout.write(`${linesOk ? 'ok  ' : 'FAIL'}  log lines: ${lost.length} lost${lost.length ? ` (first ${lost.slice(0, 5).join(', ')})` : ''}, ${duplicated} delivered twice\n`);
  if (warnings.length) process.stdout.write(`exporter warnings (first ${warnings.length}): ${warnings.join(' | ')}\n`);
  process.stdout.write(JSON.stringify({ minutes, samples, lost: lost.length, duplicated }) + '\n');
  process.exit(ok ? 0 : 1);
}

main().catch((err) => {
  process.stderr.write(`soak: ${err.stack ?? err.message}\n`);
  process.exit(2);
});
