import { setTimeout as delay } from 'node:timers/promises';
import { startWorker } from '../lib/children.js';
import { startExporterProcess } from '../lib/exporter-process.js';
import { countSeries, createScraper } from '../lib/scraper.js';
import { exporterConfig } from './metrics-scrape.js';

/**
 * Stream churn: every cycle a share of the streams vanishes and as many appear under names never seen
 * before, for as many cycles as an hour at the default 15 s interval (240), compressed in time by a
 * short poll interval. Anything keyed by stream name that is never released would grow with every
 * cycle; memory must come back to where it started once the churn stops.
 */

const SIM = new URL('../workers/simulator.js', import.meta.url).href;
const INSTANCES_ROUTE = 'GET /v2/servers/{server}/vhosts/{vhost}/applications/{app}/instances';

export async function runChurn({ streams, perApp, fraction, intervalMs, cycles, latencyMs, dir, log, timeLimitMs }) {
  const sim = await startWorker('simulator', SIM);
  let exporter;
  let scraper;
  const phases = [];
  try {
    const topology = await sim.call('start', { latencyMs, streams, perApp });
    // No jitter: a poll that reaches its deadline while the next (jittered, earlier) timer fires stops that
    // collector's schedule for good (scheduler bug, see RESULTS.md); a fixed period keeps the timer after it.
    const config = exporterConfig(topology, { poll: { interval: `${intervalMs}ms`, timeout: `${Math.floor(intervalMs * 0.8)}ms`, concurrency: 32, jitter: 0 } });
    exporter = await startExporterProcess({ config, password: topology.password, dir });
    await exporter.ready(60_000);
    scraper = createScraper(exporter.url);
    const walks = async () => ((await sim.call('counters')).byRoute[INSTANCES_ROUTE] ?? 0) / topology.apps;
    const untilCycles = async (n) => {
      const deadline = Date.now() + timeLimitMs;
      while ((await walks()) < n) {
        if (Date.now() > deadline) throw new Error(`churn: only ${await walks()} of ${n} cycles within ${timeLimitMs} ms`);
        await delay(100);
      }
    };
    const record = async (phase) => {
      const { body } = await scraper.scrape();
      // Wowza series only: the process metrics gain series of their own as the runtime meets new GC kinds.
      const series = countSeries(body, 'wowza_');
      phases.push({ phase, cycles: Math.floor(await walks()), series, allSeries: countSeries(body), ...(await exporter.memory()) });
    };

    await sim.call('resetCounters');
    log(`  warm-up: 20 cycles of ${streams} streams every ${intervalMs} ms`);
    await untilCycles(20);
    exporter.clearWarnings(); // the first polls run cold (JIT, connections); what follows is measured
    await record('before churn');

    await sim.call('resetCounters');
    await sim.call('churnStart', { fraction, periodMs: intervalMs });
    log(`  churn: ${Math.round(fraction * 100)}% of the streams replaced every ${intervalMs} ms for ${cycles} cycles`);
    for (const quarter of [1, 2, 3, 4]) {
      await untilCycles((cycles * quarter) / 4);
      await record(`churn ${quarter * 25}%`);
    }
    const churn = await sim.call('churnStop');

    await sim.call('resetCounters');
    await untilCycles(10);
    await record('10 cycles after churn');
    return { streams, fraction, intervalMs, cycles, streamsCreated: churn.streamsCreated, churnSteps: churn.steps, phases, pollWarnings: exporter.warnings.length, firstWarning: exporter.warnings[0] };
  } finally {
    await scraper?.close();
    await exporter?.close();
    await sim.close();
  }
}
