import { describe, expect, it } from 'vitest';
import { startSimulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * `poll.concurrency: auto` (the default) against servers of different capacity, as users run it: no flag
 * beyond the URL, credentials and a short interval. What a user sees is the limit on /metrics.
 */
describe('adaptive concurrency, at the defaults', () => {
  async function limitAfterPolls(capacity: number, streams: number, o: { latencyMs?: number; polls?: number } = {}): Promise<{ limits: number[]; text: string }> {
    const sim = await startSimulator({ auth: 'basic', frozen: true, latencyMs: o.latencyMs ?? 20, capacity, apps: 4, streams });
    // The limiter learns from every cycle: no request budget, so the stream cycles come every 2 s.
    const exporter = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '2s', '--poll.max-requests-per-second', '0'], {
      WOWZA_PASSWORD: sim.password,
    });
    try {
      const limits: number[] = [];
      let last = 0;
      let text = '';
      // The first stream poll and the ones after it.
      for (let i = 0; i < (o.polls ?? 4); i++) {
        text = await waitFor('a stream poll', async () => {
          const t = await exporter.metrics();
          const at = samples(t, 'wowza_exporter_last_poll_timestamp_seconds', { collector: 'stream' })[0]?.value ?? 0;
          return at > last ? ((last = at), t) : undefined;
        });
        limits.push(samples(text, 'wowza_exporter_concurrency_limit')[0]!.value);
      }
      expect(samples(text, 'wowza_exporter_collector_success').every((s) => s.value === 1)).toBe(true);
      return { limits, text };
    } finally {
      await exporter.stop();
      await sim.close();
    }
  }

  it('a server that serves 2 requests at once: the limit stays near 2, so requests barely queue there', async () => {
    const { limits, text } = await limitAfterPolls(2, 15);
    // The limiter probes one step up when a cycle's latency did not rise; on a loaded machine the exporter's own
    // delays hide the rise now and then, and CI once saw 5 (the clean-clone run with a soak beside it). What must
    // hold: it never climbs towards the old fixed 8 (the room-to-spare case reaches 16 and more), and it settles
    // near the server's 2.
    const after = limits.slice(1);
    for (const l of after) {
      expect(l).toBeGreaterThanOrEqual(1);
      expect(l).toBeLessThanOrEqual(6);
    }
    expect([...after].sort((a, b) => a - b)[Math.floor(after.length / 2)]).toBeLessThanOrEqual(4);
    // The latency the limiter goes by is on /metrics too, by endpoint template.
    const count = samples(text, 'wowza_exporter_api_request_duration_seconds_count', {
      endpoint: '/v2/servers/{server}/vhosts/{vhost}/applications/{app}/instances/{instance}/incomingstreams/{stream}/monitoring/current',
    })[0]!.value;
    expect(count).toBeGreaterThan(0);
  }, 30_000);

  it('a server with room to spare: the limit climbs well past the start (4) and the old fixed 8, towards 64', async () => {
    // 40 ms a request, so that the CPU of a busy test machine (the whole suite runs at once on two cores) is
    // small beside the server's own latency, which is what the limiter compares against; and seven polls to climb.
    const { limits } = await limitAfterPolls(0, 60, { latencyMs: 40, polls: 7 });
    expect(Math.max(...limits)).toBeGreaterThanOrEqual(16);
  }, 45_000);
});
