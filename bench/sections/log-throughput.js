import { startWorker } from '../lib/children.js';
import { median } from '../lib/stats.js';

/** Lines per second through the log pipeline, in one process, against a Loki receiver in another. */

const PIPELINE = new URL('../workers/log-pipeline.js', import.meta.url).href;
const RECEIVER = new URL('../workers/loki-receiver.js', import.meta.url).href;

export const VARIANTS = [
  { variant: 'parse', label: 'parse only' },
  { variant: 'ndjson-one-thread', label: 'parse + NDJSON, parse_threads: 0 (one thread)' },
  { variant: 'ndjson', label: 'parse + NDJSON to a null sink' },
  { variant: 'loki', label: 'parse + Loki push to a loopback receiver' },
];

export async function runLogThroughput({ lines, runs, log }) {
  const pipeline = await startWorker('log-pipeline', PIPELINE);
  const receiver = await startWorker('loki-receiver', RECEIVER);
  try {
    const { url } = await receiver.call('start', { findMarkers: false });
    const generated = await pipeline.call('generate', { lines });
    const rows = [];
    for (const { variant, label } of VARIANTS) {
      log(`  ${label}: ${runs} runs of ${lines.toLocaleString('en-US')} lines`);
      const results = [];
      for (let i = 0; i < runs; i++) results.push(await pipeline.call('run', { variant, lokiUrl: url }, 300_000));
      const rates = results.map((r) => (r.lines / r.ms) * 1000);
      rows.push({
        variant,
        label,
        lines: results[0].lines,
        linesPerSecond: median(rates),
        allLinesPerSecond: rates,
        cpuPerLineUs: median(results.map((r) => (r.cpuMs * 1000) / r.lines)),
        avgLineBytes: generated.bytes / lines,
      });
    }
    log('  cost per line of each pipeline step (cumulative)');
    const stages = await pipeline.call('stages', {}, 300_000);
    return { rows, stages };
  } finally {
    await pipeline.close();
    await receiver.close();
  }
}
