import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 31: nothing capped what the exporter asked of a server (a 2,000-stream server got about 183 requests a
 * second). With poll.max_requests_per_second the stream collector polls less often to fit; the rest keep theirs.
 * This suite and the next have servers and exporters of their own, and wait on paced polls: they run side by side.
 */
describe.concurrent('a request budget per server', () => {
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

/**
 * Issue 41: the budget covers every collector and the discovery walk. A server of 1,000 applications at the default
 * budget: the walk, application and stream_target give way together, their intervals are shown like the streams', and
 * their paced polls end within their deadlines.
 */
describe.concurrent('a request budget over the application-level collectors', () => {
  let sim: Simulator;
  let exporter: RunningExporter;
  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic', apps: 1000, streams: 0 });
    exporter = await startExporterProcess(
      ['--wowza.url', sim.url, '--wowza.username', sim.username, '--wowza.auth', 'basic', '--wowza.connectioncounts-url', 'off'],
      { WOWZA_PASSWORD: sim.password },
      // The first walk is 1,002 requests paced at the budget: ready only after it.
      { waitReady: false },
    );
  });
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
  });

  it('shows every stretched interval (metric, status, log) and the stretched polls succeed', async () => {
    const interval = async (collector: string) => samples(await exporter.metrics(), 'wowza_exporter_collector_interval_seconds', { collector })[0]?.value ?? 0;
    await waitFor('the application interval stretched', async () => ((await interval('application')) > 15 ? true : undefined), 90_000);
    expect(await interval('discovery')).toBeGreaterThan(13.5);
    expect(await interval('stream_target')).toBeGreaterThan(15);
    expect(await interval('machine')).toBe(15);
    const status = (await (await fetch(`${exporter.url}/api/v1/status`)).json()) as {
      servers: Array<{ collectors: Array<{ name: string; interval_seconds: number; interval_reason: string | null }> }>;
    };
    const byName = new Map(status.servers[0]!.collectors.map((c) => [c.name, c]));
    expect(byName.get('application')!.interval_reason).toMatch(/^1000 applications every 15 s ask 66\.7 requests\/s; .* over poll\.max_requests_per_second 50: these get [\d.]+ requests\/s and are polled every [\d.]+ s$/);
    expect(byName.get('discovery')!.interval_reason).toMatch(/^1002 discovery lists/);
    expect(byName.get('machine')!.interval_reason).toBeNull();
    expect(exporter.output()).toMatch(/collector interval stretched to fit the request budget[^\n]*"collector":"application"|"collector":"application"[^\n]*collector interval stretched to fit the request budget/);
    // Paced over most of its stretched interval, the application poll ends inside its deadline.
    await waitFor(
      'an application poll',
      async () => (samples(await exporter.metrics(), 'wowza_exporter_collector_success', { collector: 'application' })[0]?.value === 1 ? true : undefined),
      120_000,
    );
    // Every application was read in that poll: no paced request was dropped at the deadline.
    const after = (await (await fetch(`${exporter.url}/api/v1/status`)).json()) as {
      servers: Array<{ collectors: Array<{ name: string; objects: { total: number; failed: number } | null }> }>;
    };
    expect(after.servers[0]!.collectors.find((c) => c.name === 'application')!.objects).toMatchObject({ total: 1000, failed: 0 });
    for (const s of samples(await exporter.metrics(), 'wowza_exporter_collector_success')) expect(s.value, s.labels.collector).toBe(1);
  }, 240_000);
});
