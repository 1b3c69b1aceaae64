import { describe, expect, it } from 'vitest';
import { MetricSet } from '../../../src/metrics/metric-set.js';
import { timedPoll, type PollResult } from '../../../src/polling/poll-result.js';
import { WowzaNetworkError } from '../../../src/wowza/errors.js';
import { handPolledScheduler } from '../../helpers/hand-polled-scheduler.js';

/**
 * A stream cycle that straddles the start of an outage: its first streams answered before the server went away, the
 * rest were refused, and it ends after the server was said down. Its answers are from before the outage: the server is
 * not back (on a loaded machine this said `server answers again` in the middle of an outage, then `server down` again).
 */

const site = { server: 'edge', endpoint: '/v2/machine/monitoring/current', url: 'http://edge:8087/v2/machine/monitoring/current' };

async function answers(): Promise<PollResult> {
  return { ...(await timedPoll('x', async () => new MetricSet())), rest: true, answered: true };
}
async function refused(): Promise<PollResult> {
  return { ...(await timedPoll('x', () => Promise.reject(new WowzaNetworkError(site, 'ECONNREFUSED', 'connection refused')))), rest: false, answered: false };
}

describe('a poll begun before an outage, ending in it', () => {
  it('does not bring the server back: one line down, one line back when the server answers', async () => {
    const { scheduler, lines: logged } = handPolledScheduler();
    const serverLines = () => logged.map((l) => l.msg).filter((m) => m.startsWith('server '));
    const down = { now: false };
    let releaseStream: (() => void) | undefined;
    let streamPolls = 0;
    for (const collector of ['machine', 'vhost']) {
      scheduler.addJob({ server: 'edge', collector, intervalMs: 3_600_000, setsUp: true, poll: async () => ({ ...(await (down.now ? refused() : answers())), collector }) });
    }
    scheduler.addJob({
      server: 'edge',
      collector: 'stream',
      intervalMs: 3_600_000,
      setsUp: true,
      // The second stream poll is held until the test lets it end: its streams answered before the outage.
      poll: async () => {
        if (++streamPolls === 2) await new Promise<void>((r) => (releaseStream = r));
        return { ...(await answers()), collector: 'stream' };
      },
    });
    scheduler.start();
    await scheduler.firstCycle;
    expect(scheduler.reached('edge')).toBe(true);

    const straddling = scheduler.refresh('edge', ['stream']);
    await new Promise((r) => setTimeout(r, 5));
    down.now = true;
    await scheduler.refresh('edge', ['machine']);
    await scheduler.refresh('edge', ['vhost']);
    expect(scheduler.reached('edge')).toBe(false);
    releaseStream!();
    await straddling;
    expect(scheduler.reached('edge')).toBe(false);
    expect(serverLines()).toEqual([expect.stringMatching(/^server down \(wowza_up 0\)/)]);

    // The server answers again: the prober's answer brings it back, in one line.
    down.now = false;
    await scheduler.refresh('edge', ['machine']);
    expect(scheduler.reached('edge')).toBe(true);
    expect(serverLines()).toEqual([expect.stringMatching(/^server down \(wowza_up 0\)/), 'server answers again (wowza_up 1)']);
    await scheduler.stop();
  });
});
