import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Wowza's own Manager refreshes every 5 s, so short intervals are the first thing users try: with nothing
 * else set, the request timeout follows the interval instead of refusing it.
 */
describe('short poll intervals with nothing else set', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic' });
  });
  afterAll(() => sim.close());

  for (const interval of ['1s', '5s']) {
    it(`--poll.interval ${interval} exports wowza_up 1 and polls again within the interval`, async () => {
      const started = Date.now();
      const exporter = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', interval], { WOWZA_PASSWORD: sim.password });
      try {
        // Collectors finish their first polls in no fixed order: wait for the scrape that shows all of them.
        const text = await waitFor('wowza_up 1 and every collector polled', async () => {
          const t = await exporter.metrics();
          return samples(t, 'wowza_up')[0]?.value === 1 && samples(t, 'wowza_exporter_collector_success').length === 8 ? t : undefined;
        });
        expect(Date.now() - started).toBeLessThan(10_000);
        const success = samples(text, 'wowza_exporter_collector_success');
        expect(success.map((s) => s.labels.collector).sort()).toEqual(['application', 'instance', 'machine', 'recorder', 'status', 'stream', 'stream_target', 'vhost']);
        expect(success.every((s) => s.value === 1)).toBe(true);
        // A later poll of the machine collector lands too: the schedule keeps going at this interval.
        const first = samples(text, 'wowza_exporter_last_poll_timestamp_seconds', { collector: 'machine' })[0]!.value;
        await waitFor('a second poll', async () => {
          const t = samples(await exporter.metrics(), 'wowza_exporter_last_poll_timestamp_seconds', { collector: 'machine' })[0]?.value ?? 0;
          return t > first ? true : undefined;
        }, 8_000);
        expect(exporter.output()).not.toMatch(/poll failed|must be shorter/);
      } finally {
        await exporter.stop();
      }
    }, 30_000);
  }
});
