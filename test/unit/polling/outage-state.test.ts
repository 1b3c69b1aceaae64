import { describe, expect, it } from 'vitest';
import { M } from '../../../src/metrics/definitions.js';
import { MetricSet } from '../../../src/metrics/metric-set.js';
import { timedPoll, type PollResult } from '../../../src/polling/poll-result.js';
import { WowzaNetworkError } from '../../../src/wowza/errors.js';
import { handPolledScheduler } from '../../helpers/hand-polled-scheduler.js';

/**
 * What a server's collectors say through an outage, polled by hand: only the first collector asks the server while it
 * is out; every series goes at once; a poll begun before the outage that ends in it neither brings the server back nor
 * is stored (on a loaded machine a stream cycle whose first streams answered said `server answers again` mid-outage,
 * and kept 2,000 old series through a later outage); the first answer brings everything back.
 */

const site = { server: 'edge', endpoint: '/v2/machine/monitoring/current', url: 'http://edge:8087/v2/machine/monitoring/current' };

/**
 * One server of `collectors`, each exporting one series (`from` its name), refused while `down.now`. The `stream`
 * collector's second poll is held until `straddle` has taken the server down: it answered before the outage. The
 * `instance` collector, like the real one, asks nothing and reads the discovery walk, which stays fresh until
 * invalidated (`walks.invalidated` counts that) and is then walked again: refused while `down.now`.
 */
function server(collectors: string[]) {
  const { scheduler, store, lines } = handPolledScheduler();
  const down = { now: false };
  const polled = new Map<string, number>();
  // `held`: the instance collector's next read had the walk in hand before it was invalidated; `gate`: it waits for it.
  const walks: { fresh: boolean; invalidated: number; held: boolean; gate?: Promise<void> } = { fresh: false, invalidated: 0, held: false };
  let release: (() => void) | undefined;
  for (const collector of collectors) {
    scheduler.addJob({
      server: 'edge',
      collector,
      intervalMs: 3_600_000,
      setsUp: true,
      invalidate: () => {
        walks.fresh = false;
        walks.invalidated++;
      },
      poll: async (): Promise<PollResult> => {
        polled.set(collector, (polled.get(collector) ?? 0) + 1);
        if (collector === 'stream' && polled.get(collector) === 2) await new Promise<void>((r) => (release = r));
        if (collector === 'instance' && walks.gate) await walks.gate.finally(() => delete walks.gate);
        const fromWalk = collector === 'instance' && (walks.fresh || walks.held);
        if (collector === 'instance') walks.held = false;
        const refused = down.now && collector !== 'stream' && !fromWalk;
        const result = await timedPoll(collector, async () => {
          if (refused) throw new WowzaNetworkError(site, 'ECONNREFUSED', 'connection refused');
          if (collector === 'instance') walks.fresh = true;
          const set = new MetricSet();
          set.add(M.machineMemoryFree, { server: 'edge', from: collector }, 1);
          return set;
        });
        return { ...result, rest: result.ok, answered: result.ok && !fromWalk };
      },
    });
  }
  const serverLines = () => lines.map((l) => l.msg.replace(/:.*/, '')).filter((m) => m.startsWith('server '));
  const exported = () => store.render().match(/from="[a-z_]+"/g)?.sort() ?? [];
  /** A stream cycle begins; the server goes away (machine and vhost refused); the cycle ends, with its answers. */
  const straddle = async () => {
    const cycle = scheduler.refresh('edge', ['stream']);
    await new Promise((r) => setTimeout(r, 5));
    down.now = true;
    await scheduler.refresh('edge', ['machine']);
    await scheduler.refresh('edge', ['vhost']);
    return async () => {
      release!();
      await cycle;
    };
  };
  return { scheduler, down, polled, walks, serverLines, exported, straddle };
}

describe('a server through an outage', () => {
  it('only the first collector asks it, though a collector of a long interval last answered before the outage', async () => {
    const { scheduler, down, polled, serverLines } = server(['machine', 'vhost', 'stream_target']);
    scheduler.start();
    await scheduler.firstCycle;
    down.now = true;
    await scheduler.refresh('edge', ['machine']);
    await scheduler.refresh('edge', ['vhost']);
    expect(scheduler.reached('edge')).toBe(false);
    // stream_target has not polled since the outage began; vhost met the prober's failure: it waits for the prober.
    const before = polled.get('vhost')!;
    await scheduler.refresh('edge', ['vhost']);
    expect(polled.get('vhost')).toBe(before);
    down.now = false;
    await scheduler.refresh('edge', ['machine']);
    await scheduler.refresh('edge', ['vhost']);
    expect(scheduler.reached('edge')).toBe(true);
    expect(polled.get('vhost')).toBeGreaterThan(before);
    expect(serverLines()).toEqual(['server down (wowza_up 0)', 'server answers again (wowza_up 1)']);
    await scheduler.stop();
  });

  it('a poll begun before it and ending in it does not bring the server back', async () => {
    const { scheduler, down, serverLines, straddle } = server(['machine', 'vhost', 'stream']);
    scheduler.start();
    await scheduler.firstCycle;
    const end = await straddle();
    await end();
    expect(scheduler.reached('edge')).toBe(false);
    expect(serverLines()).toEqual(['server down (wowza_up 0)']);
    down.now = false;
    await scheduler.refresh('edge', ['machine']);
    expect(scheduler.reached('edge')).toBe(true);
    expect(serverLines()).toEqual(['server down (wowza_up 0)', 'server answers again (wowza_up 1)']);
    await scheduler.stop();
  });

  it("every collector's values go at once, and the poll begun before it stores none; all come back with the server", async () => {
    const { scheduler, down, exported, straddle } = server(['machine', 'vhost', 'stream_target', 'stream']);
    const all = ['from="machine"', 'from="stream"', 'from="stream_target"', 'from="vhost"'];
    scheduler.start();
    await scheduler.firstCycle;
    expect(exported()).toEqual(all);
    const end = await straddle();
    // stream_target last answered before the outage and has not polled since: its values are gone all the same.
    expect(exported()).not.toContain('from="stream_target"');
    await end();
    expect(exported()).toEqual([]);
    const jobs = scheduler.jobStates();
    expect(jobs.filter((j) => j.last?.ok).map((j) => j.collector)).toEqual([]);
    expect(jobs.find((j) => j.collector === 'stream_target')?.last).toMatchObject({ ok: false, reason: 'server_down' });
    down.now = false;
    await scheduler.refresh('edge', ['machine']);
    await scheduler.refresh('edge', ['vhost', 'stream_target', 'stream']);
    expect(scheduler.reached('edge')).toBe(true);
    expect(exported()).toEqual(all);
    await scheduler.stop();
  });

  it('a collector reading the walk from before it exports nothing and keeps no other collector asking', async () => {
    const { scheduler, down, polled, walks, exported, serverLines } = server(['machine', 'vhost', 'instance']);
    scheduler.start();
    await scheduler.firstCycle;
    await scheduler.refresh('edge', ['instance']);
    expect(exported()).toContain('from="instance"');
    down.now = true;
    await scheduler.refresh('edge', ['machine']);
    expect(serverLines()).toEqual(['server down (wowza_up 0)']);
    // The instance collector reads the walk from before (held at its gate meanwhile) after the server was said down.
    walks.held = true;
    let release!: () => void;
    walks.gate = new Promise<void>((r) => (release = r));
    const reading = scheduler.refresh('edge', ['instance']);
    // vhost fails as well: the server is out. A refresh (a webhook's) invalidates the walk itself; going out, once more.
    let before = walks.invalidated;
    await scheduler.refresh('edge', ['vhost']);
    expect(walks.invalidated - before).toBe(2);
    expect(exported()).toEqual([]);
    release();
    await reading;
    // Its read of the old walk is not exported, and it is not the server answering: the server stays out.
    expect(exported()).toEqual([]);
    expect(scheduler.jobStates().find((j) => j.collector === 'instance')?.last).toMatchObject({ ok: false, reason: 'server_down' });
    expect(scheduler.reached('edge')).toBe(false);
    // Once: the prober's next failure forgets nothing more.
    before = walks.invalidated;
    await scheduler.refresh('edge', ['machine']);
    expect(walks.invalidated - before).toBe(1);
    // vhost met the prober's failure: it waits for the prober. instance has met nothing of the server since: it asks
    // once, walking afresh, meets the refusal itself, and waits from then on.
    const vhostPolls = polled.get('vhost')!;
    await scheduler.refresh('edge', ['vhost']);
    expect(polled.get('vhost')).toBe(vhostPolls);
    await scheduler.refresh('edge', ['instance']);
    expect(scheduler.jobStates().find((j) => j.collector === 'instance')?.last).toMatchObject({ ok: false, reason: 'network' });
    const instancePolls = polled.get('instance')!;
    await scheduler.refresh('edge', ['instance']);
    expect(polled.get('instance')).toBe(instancePolls);
    expect(serverLines()).toEqual(['server down (wowza_up 0)']);
    down.now = false;
    await scheduler.refresh('edge', ['machine']);
    await scheduler.refresh('edge', ['vhost', 'instance']);
    expect(exported()).toEqual(['from="instance"', 'from="machine"', 'from="vhost"']);
    await scheduler.stop();
  });

  it('a reload that polls every server anew does not say it down again, and it is said back when it answers', async () => {
    const before = server(['machine', 'vhost']);
    before.scheduler.start();
    await before.scheduler.firstCycle;
    before.down.now = true;
    await before.scheduler.refresh('edge', ['machine']);
    expect(before.serverLines()).toEqual(['server down (wowza_up 0)']);
    await before.scheduler.stop();
    // The new schedule (exporter.ts, when the poll settings change): its log lines go on in the same log.
    const after = server(['machine', 'vhost']);
    after.scheduler.inheritStates(before.scheduler);
    after.down.now = true;
    after.scheduler.start();
    await after.scheduler.firstCycle;
    expect(after.scheduler.reached('edge')).toBe(false);
    expect(after.serverLines()).toEqual([]);
    after.down.now = false;
    await after.scheduler.refresh('edge', ['machine']);
    expect(after.serverLines()).toEqual(['server answers again (wowza_up 1)']);
    await after.scheduler.stop();
  });
});
