import { describe, expect, it } from 'vitest';
import { budgetPlan, DISCOVERY, LOG_SHARE_FLOOR, logShare, PACED_SHARE_OF_INTERVAL, pacedRate, streamIntervalWithin } from '../../../src/polling/request-budget.js';

const every15 = new Map(['machine', 'status', 'vhost', 'application', 'instance', 'stream'].map((c) => [c, 15_000]));
const all15 = new Map(['machine', 'status', 'vhost', 'application', 'instance', 'stream', 'recorder', 'stream_target', 'connectioncounts'].map((c) => [c, 15_000]));

/** Requests a second the plan's intervals ask on average, with each one's cycle cost. */
function askedPerSecond(plan: ReturnType<typeof budgetPlan>, costs: Record<string, number>): number {
  let sum = 0;
  for (const [name, n] of Object.entries(costs)) sum += n / (plan.intervals.get(name)!.intervalMs / 1000);
  return sum;
}

describe('the per-server request budget', () => {
  it('paces so that no 10 s window holds more than the budget x 10, whatever the budget', () => {
    for (const budget of [1, 5, 50, 200, 1000]) {
      const { burst, perSecond } = pacedRate(budget);
      expect(burst).toBeGreaterThanOrEqual(1);
      expect(burst + 10 * perSecond).toBeLessThanOrEqual(budget * 10 + 1e-9);
    }
    expect(pacedRate(50)).toEqual({ burst: 2, perSecond: 49.8 });
  });

  it('leaves a server that fits alone', () => {
    expect(streamIntervalWithin(50, { vhosts: 1, apps: 4, streams: 200 }, every15, 13_500)).toEqual({ intervalMs: 15_000 });
    const plan = budgetPlan(50, { vhosts: 1, apps: 4, streams: 200 }, every15, 13_500);
    for (const [name, i] of plan.intervals) expect(i, name).toEqual({ intervalMs: name === DISCOVERY ? 13_500 : 15_000 });
  });

  it('2,000 streams at 15 s (about 135 requests a second): the streams are polled less often, the rest keep their intervals', () => {
    const size = { vhosts: 1, apps: 10, streams: 2000 };
    const plan = budgetPlan(50, size, every15, 13_500);
    const stream = plan.intervals.get('stream')!;
    // The message states what is asked at the configured intervals, against the budget, and the interval it leads to.
    expect(stream.reason).toMatch(
      /^2000 streams every 15 s ask 133\.3 requests\/s; with the rest \(1\.8\/s\) this server would be asked 135\.1 requests\/s at the configured intervals, over poll\.max_requests_per_second 50: these get [\d.]+ requests\/s and are polled every [\d.]+ s$/,
    );
    expect(stream.reason).toContain(`polled every ${Math.round(stream.intervalMs / 100) / 10} s`);
    for (const c of ['machine', 'status', 'vhost', 'application', 'instance', DISCOVERY]) expect(plan.intervals.get(c)!.reason, c).toBeUndefined();
    // Paced at its share, a stream cycle ends within 80 % of its interval (inside the 90 % poll deadline)...
    expect(2000 / plan.shares.get('stream')!).toBeLessThanOrEqual((PACED_SHARE_OF_INTERVAL * stream.intervalMs) / 1000 + 1e-6);
    // ...and the shares stay within what the pacer gives.
    expect([...plan.shares.values()].reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(pacedRate(50).perSecond + 1e-6);
    expect(askedPerSecond(plan, { machine: 1, status: 1, vhost: 1, application: 10, stream: 2000, [DISCOVERY]: 12 })).toBeLessThanOrEqual(50);
  });

  it('says "within the budget" when the average fits but a paced cycle would not end in time', () => {
    // 595 streams every 15 s: 40.6/s asked in all, under 50, but 50.7/s needed to end each paced cycle within 12 s.
    const plan = budgetPlan(50, { vhosts: 1, apps: 4, streams: 595 }, every15, 13_500);
    const stream = plan.intervals.get('stream')!;
    expect(stream.intervalMs).toBeGreaterThan(15_000);
    expect(stream.reason).toMatch(/would be asked 40\.6 requests\/s at the configured intervals, within poll\.max_requests_per_second 50, but paced cycles ending within 80 % of their intervals need [\d.]+\/s/);
    expect(stream.reason).not.toMatch(/over poll/);
  });

  it('5,000 applications: the walk and every per-object collector give way together, the one-request collectors keep 15 s', () => {
    const size = { vhosts: 1, apps: 5000, streams: 0, targetApps: 1667 };
    const plan = budgetPlan(50, size, all15, 13_500);
    const costs: Record<string, number> = { machine: 1, status: 1, connectioncounts: 1, vhost: 1, application: 5000, stream_target: 1667, [DISCOVERY]: 5002 };
    for (const c of ['machine', 'status', 'connectioncounts', 'instance', 'stream']) expect(plan.intervals.get(c), c).toEqual({ intervalMs: 15_000 });
    for (const c of ['application', 'stream_target', DISCOVERY]) {
      const i = plan.intervals.get(c)!;
      expect(i.intervalMs, c).toBeGreaterThan(60_000);
      expect(i.reason, c).toMatch(/over poll\.max_requests_per_second 50: these get [\d.]+ requests\/s and are polled every [\d.]+ s/);
      expect(costs[c]! / plan.shares.get(c)!, c).toBeLessThanOrEqual((PACED_SHARE_OF_INTERVAL * i.intervalMs) / 1000 + 1e-6);
    }
    expect(plan.intervals.get('application')!.reason).toMatch(/^5000 applications every 15 s ask 333\.3 requests\/s; with the rest \([\d.]+\/s\) this server would be asked [\d.]+ requests\/s/);
    expect(plan.intervals.get(DISCOVERY)!.reason).toMatch(/^5002 discovery lists \(1 \+ vhosts \+ applications\) every 13\.5 s ask 370\.5 requests\/s/);
    expect(askedPerSecond(plan, costs)).toBeLessThanOrEqual(pacedRate(50).perSecond);
  });

  it('0 turns the budget off; the streams keep at least a tenth of it whatever the rest takes', () => {
    expect(streamIntervalWithin(0, { vhosts: 1, apps: 10, streams: 2000 }, every15, 13_500)).toEqual({ intervalMs: 15_000 });
    const crowded = budgetPlan(10, { vhosts: 50, apps: 500, streams: 100 }, every15, 13_500);
    const { perSecond } = pacedRate(10);
    expect(crowded.shares.get('stream')).toBeCloseTo(perSecond * 0.1, 6);
    expect(crowded.intervals.get('stream')!.intervalMs).toBe(Math.ceil((100 / (PACED_SHARE_OF_INTERVAL * perSecond * 0.1)) * 1000));
    expect(askedPerSecond(crowded, { machine: 1, status: 1, vhost: 50, application: 500, stream: 100, [DISCOVERY]: 551 })).toBeLessThanOrEqual(10);
  });
});

describe('the log follower\'s share of the budget (issue 48)', () => {
  it('is what the collectors\' plan leaves of the paced rate, and at least a fifth of it', () => {
    const rate = pacedRate(50).perSecond;
    const small = budgetPlan(50, { vhosts: 1, apps: 3, streams: 10 }, all15, 13_500);
    const planned = [...small.shares.values()].reduce((a, n) => a + n, 0);
    expect(logShare(50, small.shares)).toBeCloseTo(rate - planned, 6);
    // A server whose polls need all of the budget still leaves the logs their floor.
    const big = budgetPlan(50, { vhosts: 1, apps: 10, streams: 5_000 }, all15, 13_500);
    expect(logShare(50, big.shares)).toBeCloseTo(LOG_SHARE_FLOOR * rate, 6);
    // Before the first walk the collectors' needs are unknown: the floor.
    expect(logShare(50, small.shares, false)).toBeCloseTo(LOG_SHARE_FLOOR * rate, 6);
    // No budget: nothing to share.
    expect(logShare(0, small.shares)).toBe(0);
  });
});
