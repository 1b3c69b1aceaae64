import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 31: nothing capped what the exporter asked of a server (a 2,000-stream server got about 183 requests a
 * second). With poll.max_requests_per_second the stream collector polls less often to fit; the rest keep theirs.
 */
describe('a request budget per server', () => {
  const BUDGET = 40;
  let sim: Simulator;
  let exporter: RunningExporter;
  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic', apps: 4, streams: 50 });
    exporter = await startExporterProcess(
      ['--wowza.url', sim.url, '--wowza.username', sim.username, '--wowza.auth', 'basic', '--wowza.connectioncounts-url', 'off', '--poll.interval', '2s', '--poll.max-requests-per-second', String(BUDGET)],
      { WOWZA_PASSWORD: sim.password },
    );
  });
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
  });

  it('stretches the stream interval to fit, says so, keeps every stream, and the server sees about the budget', async () => {
    const stream = async () => samples(await exporter.metrics(), 'wowza_exporter_collector_interval_seconds', { collector: 'stream' })[0]?.value ?? 0;
    const interval = await waitFor('the stream interval stretched', async () => ((await stream()) > 2 ? stream() : undefined), 60_000);
    const status = (await (await fetch(`${exporter.url}/api/v1/status`)).json()) as { servers: Array<{ collectors: Array<{ name: string; interval_reason: string | null }> }> };
    expect(status.servers[0]!.collectors.find((c) => c.name === 'stream')!.interval_reason).toMatch(/over poll\.max_requests_per_second 40/);
    expect(status.servers[0]!.collectors.find((c) => c.name === 'machine')!.interval_reason).toBeNull();
    // Over two and a half stream intervals: at most the budget, plus one stream cycle for where the window falls.
    const windowMs = interval * 2500;
    const before = sim.counters.total;
    await new Promise((r) => setTimeout(r, windowMs));
    const asked = sim.counters.total - before;
    expect(asked, `${asked} requests in ${windowMs / 1000} s`).toBeLessThanOrEqual(BUDGET * (windowMs / 1000) + 250);
    // Every stream the instance lists name still has its traffic series: polled less often, none left out.
    const text = await exporter.metrics();
    expect(samples(text, 'wowza_stream_received_bytes_total').length).toBe(samples(text, 'wowza_stream_connected').length);
    expect(samples(text, 'wowza_stream_received_bytes_total').length).toBeGreaterThanOrEqual(200);
  }, 90_000);
});
