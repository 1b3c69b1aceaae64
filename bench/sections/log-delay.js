import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { startWorker } from '../lib/children.js';
import { startExporterProcess } from '../lib/exporter-process.js';
import { percentile } from '../lib/stats.js';
import { exporterConfig } from './metrics-scrape.js';

/**
 * End-to-end log delay: a line is written in the simulator (one process), the exporter (another) follows
 * the log through the REST API and pushes it to a Loki receiver (a third), which notes when it arrived.
 * All three read the same wall clock.
 */

const SIM = new URL('../workers/simulator.js', import.meta.url).href;
const RECEIVER = new URL('../workers/loki-receiver.js', import.meta.url).href;

export async function runLogDelay({ markers, followIntervalMs, latencyMs, backgroundLinesPerSecond, dir, log }) {
  const receiver = await startWorker('loki-receiver', RECEIVER);
  const sim = await startWorker('simulator', SIM);
  let exporter;
  const arrivals = new Map();
  receiver.on('marker', ({ marker, arrivedAt }) => {
    if (!arrivals.has(marker)) arrivals.set(marker, arrivedAt);
  });
  try {
    const { url } = await receiver.call('start', { findMarkers: true });
    const topology = await sim.call('start', { latencyMs, streams: 10, logLinesPerSecond: backgroundLinesPerSecond });
    const config = exporterConfig(topology, {
      poll: { interval: '15s', timeout: '5s', concurrency: 8 },
      logs: {
        positions_file: join(dir, 'positions.json'),
        dead_letter_file: join(dir, 'dead-letter.ndjson'),
        log_types: ['access'],
        follow_interval: `${followIntervalMs}ms`,
        sinks: [{ type: 'loki', url }],
      },
    });
    exporter = await startExporterProcess({ config, password: topology.password, dir });

    // The follower starts at the end of the file: lines before its first read are not shipped. Wait until one is.
    const deadline = Date.now() + 30_000;
    for (let i = 0; arrivals.size === 0; i++) {
      if (Date.now() > deadline) throw new Error('no log line reached the sink within 30 s');
      await sim.call('appendMarker', { marker: `bench-marker-${900_000 + i}` });
      await delay(500);
    }

    log(`  ${markers} lines written at random moments, follow interval ${followIntervalMs} ms`);
    const written = new Map();
    for (let i = 0; i < markers; i++) {
      const marker = `bench-marker-${i}`;
      written.set(marker, (await sim.call('appendMarker', { marker })).writtenAt);
      // Uncorrelated with the follow interval, so lines land at every phase of it.
      await delay(250 + Math.random() * 700);
    }
    const waitUntil = Date.now() + followIntervalMs + 10_000;
    while ([...written.keys()].some((m) => !arrivals.has(m)) && Date.now() < waitUntil) await delay(100);

    const delays = [...written].filter(([m]) => arrivals.has(m)).map(([m, at]) => arrivals.get(m) - at);
    return {
      markers,
      arrived: delays.length,
      followIntervalMs,
      p50: percentile(delays, 50),
      p95: percentile(delays, 95),
      max: Math.max(...delays),
      min: Math.min(...delays),
      delays,
      warnings: exporter.warnings.length,
      firstWarning: exporter.warnings[0],
    };
  } finally {
    await exporter?.close();
    await sim.close();
    await receiver.close();
  }
}
