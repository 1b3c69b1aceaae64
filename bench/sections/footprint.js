import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { startProcess, startWorker, stopChild } from '../lib/children.js';
import { startCliProcess } from '../lib/exporter-process.js';
import { countSeries, createScraper } from '../lib/scraper.js';
import { median } from '../lib/stats.js';

/**
 * Issue 27: the memory a new user's exporter takes, run exactly as the README's first example runs it:
 * `node dist/cli.js --wowza.url … --wowza.username … --wowza.password-file …` (what `npx wowza-exporter` runs),
 * no config file, no NODE_OPTIONS or other environment, no preload. RSS is sampled from /proc every second for
 * `durationMs` from the moment the process starts, while a scraper asks for /metrics every 5 s as Prometheus
 * would; "steady" is the median of the last third, "peak" is VmHWM at the end (start-up included).
 * `busy`: two CPU-bound processes run beside it for the whole case.
 */

const SIM = new URL('../workers/simulator.js', import.meta.url).href;

async function footprintCase({ streams, latencyMs, durationMs, dir, busy }) {
  const sim = await startWorker('simulator', SIM);
  const hogs = busy ? [0, 1].map(() => startProcess(process.execPath, ['-e', 'for (;;) {}'])) : [];
  let exporter;
  let scraper;
  try {
    const topology = await sim.call('start', { latencyMs, streams });
    const passwordFile = join(dir, `footprint-password-${streams}`);
    writeFileSync(passwordFile, topology.password, { mode: 0o600 });
    const started = Date.now();
    exporter = await startCliProcess({
      args: ['--wowza.url', topology.url, '--wowza.username', topology.username, '--wowza.password-file', passwordFile, '--web.listen-address', '127.0.0.1:0'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      startTimeoutMs: 60_000,
    });
    scraper = createScraper(exporter.url);
    const samples = [];
    let nextScrape = 0;
    let series = 0;
    while (Date.now() - started < durationMs) {
      const m = exporter.resident();
      if (Number.isNaN(m.rss)) throw new Error(`the exporter (${streams} streams) exited`);
      samples.push({ at: Date.now() - started, rss: m.rss });
      if (Date.now() - started >= nextScrape) {
        series = countSeries((await scraper.scrape()).body);
        nextScrape = Date.now() - started + 5000;
      }
      await delay(1000);
    }
    const last = samples.filter((s) => s.at >= (durationMs * 2) / 3);
    return { streams, busy: Boolean(busy), series, steadyRss: median(last.map((s) => s.rss)), peakRss: exporter.resident().peakRss };
  } finally {
    for (const h of hogs) await stopChild(h, 1000);
    await scraper?.close();
    await exporter?.close();
    await sim.close();
  }
}

/** One row per case, each in a fresh simulator and exporter, one after the other. */
export async function runFootprint({ cases, latencyMs, durationMs, dir, log }) {
  const rows = [];
  for (const c of cases) {
    log(`  ${c.streams} stream${c.streams === 1 ? '' : 's'}${c.busy ? ', busy machine' : ''}: RSS each second for ${durationMs / 1000} s, scraped every 5 s`);
    rows.push(await footprintCase({ ...c, latencyMs, durationMs, dir }));
  }
  return rows;
}
