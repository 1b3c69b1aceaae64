import { describe, expect, it } from 'vitest';
import { MetricSet } from '../../../src/metrics/metric-set.js';
import { timedPoll, type PollResult } from '../../../src/polling/poll-result.js';
import { DiscoveryWaitError } from '../../../src/polling/budgeted-discovery.js';
import { BudgetWaitError } from '../../../src/polling/request-pacer.js';
import { WowzaHttpError, WowzaTimeoutError } from '../../../src/wowza/errors.js';
import { handPolledScheduler } from '../../helpers/hand-polled-scheduler.js';

/**
 * A poll the exporter's own limits kept from the server (a budget wait) says nothing of the server: it neither takes
 * it down, nor brings it back, nor makes it look like something other than the REST API.
 */

const site = { server: 'edge', endpoint: '/v2/machine/monitoring/current', url: 'http://edge:8087/v2/machine/monitoring/current' };
type Outcome = 'answers' | 'hangs' | 'budget_wait' | 'http_500' | 'walk_wait';

async function outcome(kind: Outcome): Promise<PollResult> {
  const result = await timedPoll('x', async () => {
    if (kind === 'hangs') throw new WowzaTimeoutError(site, 800);
    if (kind === 'budget_wait') throw new BudgetWaitError();
    if (kind === 'walk_wait') throw new DiscoveryWaitError();
    if (kind === 'http_500') throw new WowzaHttpError(site, 500, 'Internal Server Error');
    return new MetricSet();
  });
  // What runCollector adds: whether a request of the poll got an answer of the REST API's shape.
  const answered = result.ok || kind === 'http_500';
  return { ...result, rest: answered, answered };
}

function harness(collectors = ['machine', 'vhost']) {
  const { scheduler, lines } = handPolledScheduler();
  const next = new Map<string, Outcome>();
  const polled = new Map<string, number>();
  for (const collector of collectors) {
    scheduler.addJob({
      server: 'edge',
      collector,
      intervalMs: 3_600_000, // polled by hand (refresh) only, after the first poll at start
      setsUp: true,
      poll: async () => {
        polled.set(collector, (polled.get(collector) ?? 0) + 1);
        return { ...(await outcome(next.get(collector) ?? 'answers')), collector };
      },
    });
  }
  const poll = async (collector: string, kind: Outcome) => {
    next.set(collector, kind);
    await scheduler.refresh('edge', [collector]);
  };
  const downLines = () => lines.filter((l) => l.msg.startsWith('server down')).map((l) => l.msg);
  return { scheduler, poll, polled, next, downLines, lines };
}

describe('a budget wait and wowza_up', () => {
  it('does not take an answering server down, nor say it is not the REST API', async () => {
    const { scheduler, poll, downLines } = harness();
    scheduler.start();
    await scheduler.firstCycle;
    expect(scheduler.reached('edge')).toBe(true);
    await poll('machine', 'budget_wait');
    await poll('vhost', 'budget_wait');
    expect(scheduler.reached('edge')).toBe(true);
    expect(downLines()).toEqual([]);
    await scheduler.stop();
  });

  it('keeps a server that does not answer down for its timeout, one line, and the other collectors waiting for the prober', async () => {
    const { scheduler, poll, polled, next, downLines } = harness();
    scheduler.start();
    await scheduler.firstCycle;
    await poll('machine', 'hangs');
    await poll('vhost', 'hangs');
    expect(scheduler.reached('edge')).toBe(false);
    expect(downLines()).toHaveLength(1);
    expect(downLines()[0]).toMatch(/did not answer within 800 ms/);
    // Budget waits meanwhile: still down for the same reason, no line saying it is something else than the REST API.
    await poll('machine', 'budget_wait');
    await poll('vhost', 'budget_wait');
    expect(scheduler.reached('edge')).toBe(false);
    expect(scheduler.downReason('edge')?.cause).toMatch(/did not answer within 800 ms/);
    expect(downLines()).toHaveLength(1);
    // While the server is out, only the first collector asks it: the vhost poll waits for machine's answer.
    const before = polled.get('vhost');
    await poll('vhost', 'hangs');
    expect(polled.get('vhost')).toBe(before);
    // machine answers: the server is back, and the others poll at once.
    next.set('vhost', 'answers');
    await poll('machine', 'answers');
    await scheduler.refresh('edge', ['vhost']);
    expect(scheduler.reached('edge')).toBe(true);
    expect(downLines()).toHaveLength(1);
    await scheduler.stop();
  });

  // Behind a slow server (machine and vhost time out), a collector that met nothing of the server since: its requests
  // queued behind the timeouts and were held past its deadline, or it gave up waiting for the discovery walk before the
  // server counted as out. It neither ends the outage nor asks each interval: it waits for the prober too.
  it.each<{ collector: string; held: Outcome; before: string[] }>([
    { collector: 'status', held: 'budget_wait', before: ['machine', 'vhost'] },
    { collector: 'application', held: 'walk_wait', before: ['machine'] },
  ])('$collector, its polls ending in $held, keeps the server out and waits for the prober', async ({ collector, held, before }) => {
    const { scheduler, poll, polled } = harness(['machine', 'vhost', collector]);
    scheduler.start();
    await scheduler.firstCycle;
    for (const c of before) await poll(c, 'hangs');
    await poll(collector, held);
    if (!before.includes('vhost')) await poll('vhost', 'hangs');
    expect(scheduler.reached('edge')).toBe(false);
    const asked = () => ['vhost', collector].map((c) => polled.get(c));
    const then = asked();
    await poll('vhost', 'hangs');
    await poll(collector, held);
    expect(asked()).toEqual(then);
    await scheduler.stop();
  });

  it("is said once at info level for a run of held-back polls, and does not make the collector's failure before it said again", async () => {
    const { scheduler, poll, lines } = harness();
    scheduler.start();
    await scheduler.firstCycle;
    const said = () => lines.filter((l) => l.msg.startsWith('poll')).map((l) => `${l.level === 30 ? 'info' : l.level === 40 ? 'warn' : l.level} ${l.msg.replace(/:.*/, '')}`);
    await poll('machine', 'http_500');
    await poll('machine', 'budget_wait');
    await poll('machine', 'budget_wait');
    // The same failure as before the held-back polls: said already.
    await poll('machine', 'http_500');
    await poll('machine', 'budget_wait');
    await poll('machine', 'answers');
    expect(said()).toEqual(['warn poll failed', 'info poll not done', 'info poll not done', 'info poll succeeds again']);
    await scheduler.stop();
  });
});
