import { setTimeout as delay } from 'node:timers/promises';
import { startWorker } from '../lib/children.js';
import { startExporterProcess } from '../lib/exporter-process.js';
import { createScraper } from '../lib/scraper.js';

/**
 * What the exporter costs the server it watches (issue 31), as users run it: the built CLI at its defaults (the
 * request budget of 50 a second among them) against a Digest server that retires a nonce after 50 uses or 30 s,
 * with 20 ms per request. Counted at the server over a window after a warm-up: requests a minute, the share
 * answered 401, and the streams still exported. "with connectioncounts" gives the server's provider.
 */

const SIM = new URL('../workers/simulator.js', import.meta.url).href;

function count(text, name) {
  let n = 0;
  for (const line of text.split('\n')) if (line.startsWith(`${name}{`)) n++;
  return n;
}
function value(text, name, match) {
  for (const line of text.split('\n')) if (line.startsWith(name) && line.includes(match)) return Number(line.slice(line.lastIndexOf(' ') + 1));
  return undefined;
}

async function costCase({ streams, counts, latencyMs, warmupMs, windowMs, dir }) {
  const sim = await startWorker('simulator', SIM);
  try {
    const t = await sim.call('start', { latencyMs, streams, perApp: streams <= 200 ? 50 : 200, auth: 'digest', nonceMaxUses: 50, nonceTtlMs: 30_000 });
    const server = { url: t.url, username: t.username, ...(counts ? { connectioncounts_url: t.countsUrl } : {}) };
    const exporter = await startExporterProcess({ config: { servers: [server], web: { listen_address: '127.0.0.1:0' } }, password: t.password, dir });
    const scraper = createScraper(exporter.url);
    try {
      await delay(warmupMs);
      await sim.call('resetCounters');
      await delay(windowMs);
      const c = await sim.call('counters');
      const text = (await scraper.scrape()).body.toString('utf8');
      return {
        streams,
        counts,
        requestsPerMinute: Math.round((c.total / windowMs) * 60_000),
        unauthorizedShare: c.total ? c.unauthorized / c.total : 0,
        exported: count(text, 'wowza_stream_uptime_seconds'),
        streamInterval: value(text, 'wowza_exporter_collector_interval_seconds', 'collector="stream"'),
      };
    } finally {
      await scraper.close();
      await exporter.close();
    }
  } finally {
    await sim.close();
  }
}

/** 10 streams, 4 apps x 50 and 10 apps x 200 streams (the servers), with and without connectioncounts. */
export async function runServerCost({ dir, log, quick, latencyMs }) {
  const warmupMs = quick ? 20_000 : 40_000;
  const windowMs = quick ? 30_000 : 60_000;
  const rows = [];
  for (const streams of [10, 200, 2000]) {
    for (const counts of [false, true]) {
      log(`  ${streams} streams${counts ? ', connectioncounts' : ''}: ${warmupMs / 1000} s warm-up, ${windowMs / 1000} s counted`);
      rows.push(await costCase({ streams, counts, latencyMs, warmupMs, windowMs, dir }));
    }
  }
  return rows;
}
