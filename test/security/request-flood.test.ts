import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';

/**
 * Issue 41, item 5: the budget did not cover the application-level collectors. A server listing 5,000 applications got
 * about 1,130 requests a second (peaks of 5,119) against poll.max_requests_per_second 50, and the first cycles ran at
 * full speed before any stretch. Now every request of a server passes its pacer, from the first cycle on: at the
 * default budget, no 10 s window holds more than 500 requests.
 */
describe('a server listing 5,000 applications', () => {
  const BUDGET = 50;
  const RUN_MS = 50_000;
  let sim: Simulator;
  let exporter: RunningExporter;
  const counts: Array<{ at: number; total: number }> = [];
  let sampler: NodeJS.Timeout;
  let started = 0;

  beforeAll(async () => {
    // A third of the applications push to stream targets: the walk, application and stream_target all ask per application.
    sim = await startSimulator({ auth: 'basic', apps: 5000, streams: 1 });
    started = performance.now();
    // The simulator runs in this process: its request count, read every 200 ms, is what the server saw.
    sampler = setInterval(() => counts.push({ at: performance.now() - started, total: sim.counters.total }), 200);
    exporter = await startExporterProcess(
      ['--wowza.url', sim.url, '--wowza.username', sim.username, '--wowza.auth', 'basic', '--wowza.connectioncounts-url', 'off'],
      { WOWZA_PASSWORD: sim.password },
      // The first walk alone is 5,002 requests: paced, it takes about 100 s, so the exporter is not ready within this test.
      { waitReady: false },
    );
  }, 60_000);
  afterAll(async () => {
    clearInterval(sampler);
    await exporter?.stop();
    await sim?.close();
  });

  it('gets at most the budget in every 10 s window after the first, and the one-request collectors still poll', async () => {
    await new Promise((r) => setTimeout(r, RUN_MS));
    const seen = [...counts];
    let busiest = { asked: 0, from: 0, to: 0 };
    for (let i = 0; i < seen.length; i++) {
      if (seen[i]!.at < 10_000) continue;
      // The longest span of samples within 10 s from this one: a sub-window of a 10 s window, so never more than it.
      let j = i;
      while (j + 1 < seen.length && seen[j + 1]!.at - seen[i]!.at <= 10_000) j++;
      const asked = seen[j]!.total - seen[i]!.total;
      if (asked > busiest.asked) busiest = { asked, from: seen[i]!.at, to: seen[j]!.at };
    }
    const total = seen[seen.length - 1]!.total;
    expect(busiest.asked, `${busiest.asked} requests from ${Math.round(busiest.from)} to ${Math.round(busiest.to)} ms (${total} in all)`).toBeLessThanOrEqual(BUDGET * 10);
    // It kept working at the budget (not idle): about 49 a second over the run.
    expect(total).toBeGreaterThan((BUDGET * RUN_MS) / 1000 / 2);
    // The server-level collectors are not stuck behind thousands of queued requests, and pacing fails no poll.
    const text = await exporter.metrics();
    expect(samples(text, 'wowza_exporter_collector_success', { collector: 'machine' })[0]?.value).toBe(1);
    expect(samples(text, 'wowza_exporter_collector_success', { collector: 'status' })[0]?.value).toBe(1);
    expect(samples(text, 'wowza_up')[0]?.value).toBe(1);
    for (const s of samples(text, 'wowza_exporter_collector_success')) expect(s.value, s.labels.collector).toBe(1);
    expect((await fetch(`${exporter.url}/-/healthy`)).status).toBe(200);
  }, RUN_MS + 30_000);
});
