import { describe, expect, it } from 'vitest';
import { M } from '../../../src/metrics/definitions.js';
import { MetricSet } from '../../../src/metrics/metric-set.js';
import { timedPoll, type PollResult } from '../../../src/polling/poll-result.js';
import { WowzaNetworkError } from '../../../src/wowza/errors.js';
import { handPolledScheduler } from '../../helpers/hand-polled-scheduler.js';

/**
 * While a server is out, only its first collector asks it; the others wait for that one's answer. A collector of a
 * long interval (stream targets, every 30 s) that last answered before the outage must not hold the others asking:
 * its success is from before the server was said down. It found every collector of a 1 s server asking every second
 * through an outage, three requests a second where the prober's one was due.
 */

const site = { server: 'edge', endpoint: '/v2/machine/monitoring/current', url: 'http://edge:8087/v2/machine/monitoring/current' };

describe('one prober while a server is out', () => {
  it('a success from before the outage, of a collector that has not asked since, does not keep the others asking', async () => {
    const { scheduler, lines } = handPolledScheduler();
    const down = { now: false };
    const polled = new Map<string, number>();
    for (const collector of ['machine', 'vhost', 'stream_target']) {
      scheduler.addJob({
        server: 'edge',
        collector,
        intervalMs: 3_600_000,
        setsUp: true,
        poll: async (): Promise<PollResult> => {
          polled.set(collector, (polled.get(collector) ?? 0) + 1);
          const result = await timedPoll(collector, () => (down.now ? Promise.reject(new WowzaNetworkError(site, 'ECONNREFUSED', 'connection refused')) : Promise.resolve(new MetricSet())));
          return { ...result, rest: result.ok, answered: result.ok };
        },
      });
    }
    scheduler.start();
    await scheduler.firstCycle;
    down.now = true;
    await scheduler.refresh('edge', ['machine']);
    await scheduler.refresh('edge', ['vhost']);
    expect(scheduler.reached('edge')).toBe(false);
    expect(lines.filter((l) => l.msg.startsWith('server down'))).toHaveLength(1);
    // stream_target has not polled since the outage began; vhost met the prober's failure: it waits for the prober.
    const before = polled.get('vhost');
    await scheduler.refresh('edge', ['vhost']);
    expect(polled.get('vhost')).toBe(before);
    // The prober asks, and once the server answers, everything polls at once and the server is back.
    down.now = false;
    await scheduler.refresh('edge', ['machine']);
    await scheduler.refresh('edge', ['vhost']);
    expect(scheduler.reached('edge')).toBe(true);
    expect(polled.get('vhost')).toBeGreaterThan(before!);
    expect(lines.filter((l) => l.msg.startsWith('server ')).map((l) => l.msg.replace(/:.*/, ''))).toEqual(['server down (wowza_up 0)', 'server answers again (wowza_up 1)']);
    await scheduler.stop();
  });

  it("an outage takes every collector's values away at once, and a poll begun before it that ends in it stores none", async () => {
    const { scheduler, store } = handPolledScheduler();
    const down = { now: false };
    let release: (() => void) | undefined;
    let streamPolls = 0;
    const set = (collector: string) => {
      const s = new MetricSet();
      s.add(M.machineMemoryFree, { server: 'edge', from: collector }, 1);
      return s;
    };
    for (const collector of ['machine', 'vhost', 'stream_target', 'stream']) {
      scheduler.addJob({
        server: 'edge',
        collector,
        intervalMs: 3_600_000,
        setsUp: true,
        poll: async (): Promise<PollResult> => {
          // The stream cycle begun just before the outage answers from before it, and ends after the server went down.
          if (collector === 'stream' && ++streamPolls === 2) await new Promise<void>((r) => (release = r));
          const failing = down.now && collector !== 'stream';
          const result = await timedPoll(collector, () => (failing ? Promise.reject(new WowzaNetworkError(site, 'ECONNREFUSED', 'connection refused')) : Promise.resolve(set(collector))));
          return { ...result, rest: result.ok, answered: result.ok };
        },
      });
    }
    scheduler.start();
    await scheduler.firstCycle;
    expect(store.render().match(/from="[a-z_]+"/g)?.sort()).toEqual(['from="machine"', 'from="stream"', 'from="stream_target"', 'from="vhost"']);
    const straddling = scheduler.refresh('edge', ['stream']);
    await new Promise((r) => setTimeout(r, 5));
    down.now = true;
    await scheduler.refresh('edge', ['machine']);
    await scheduler.refresh('edge', ['vhost']);
    // stream_target last answered before the outage and has not polled since: its values are gone all the same.
    expect(scheduler.reached('edge')).toBe(false);
    expect(store.render()).not.toContain('from="stream_target"');
    release!();
    await straddling;
    expect(store.render()).not.toMatch(/from=/);
    const success = scheduler.jobStates();
    expect(success.filter((j) => j.last?.ok).map((j) => j.collector)).toEqual([]);
    expect(success.find((j) => j.collector === 'stream_target')?.last).toMatchObject({ ok: false, reason: 'server_down' });
    // Back: every collector polls at once and its values return.
    down.now = false;
    await scheduler.refresh('edge', ['machine']);
    await scheduler.refresh('edge', ['vhost', 'stream_target', 'stream']);
    expect(scheduler.reached('edge')).toBe(true);
    expect(store.render().match(/from="[a-z_]+"/g)?.sort()).toEqual(['from="machine"', 'from="stream"', 'from="stream_target"', 'from="vhost"']);
    await scheduler.stop();
  });
});
