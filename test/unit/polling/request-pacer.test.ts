import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConcurrencyLimiter } from '../../../src/polling/concurrency-limiter.js';
import { BudgetWaitError, RequestPacer } from '../../../src/polling/request-pacer.js';
import { timedPoll } from '../../../src/polling/poll-result.js';
import { MetricSet } from '../../../src/metrics/metric-set.js';
import { WowzaTimeoutError } from '../../../src/wowza/errors.js';

describe('the request pacer', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('sends at most the budget x 10 in any 10 s, from the first request on', async () => {
    const pacer = new RequestPacer(50, new ConcurrencyLimiter({ fixed: 64 }), () => Date.now());
    const sent: number[] = [];
    const start = Date.now();
    const all = Array.from({ length: 2000 }, () => pacer.run('application', undefined, async () => void sent.push(Date.now() - start)));
    await vi.advanceTimersByTimeAsync(45_000);
    await Promise.all(all);
    expect(sent.length).toBe(2000);
    // Every window of 10 s, wherever it starts: the times are sorted, so the busiest begins at some request.
    let busiest = 0;
    for (let i = 0, j = 0; i < sent.length; i++) {
      while (sent[j]! <= sent[i]! - 10_000) j++;
      busiest = Math.max(busiest, i - j + 1);
    }
    expect(busiest).toBeLessThanOrEqual(500);
    expect(busiest).toBeGreaterThanOrEqual(480);
  });

  it('serves a one-request collector among thousands waiting, and drops what waited past its deadline', async () => {
    const pacer = new RequestPacer(50, new ConcurrencyLimiter({ fixed: 64 }), () => Date.now());
    const deadline = new AbortController();
    const streams = Array.from({ length: 3000 }, () => pacer.run('stream', deadline.signal, async () => 'stream'));
    const settled = streams.map((p) => p.then(() => 'sent', (e: unknown) => e));
    await vi.advanceTimersByTimeAsync(1_000);
    let machineAt: number | undefined;
    const asked = Date.now();
    void pacer.run('machine', undefined, async () => (machineAt = Date.now()));
    await vi.advanceTimersByTimeAsync(500);
    expect(machineAt! - asked).toBeLessThanOrEqual(100);
    deadline.abort();
    const outcomes = await Promise.all(settled);
    const dropped = outcomes.filter((o) => o instanceof BudgetWaitError);
    expect(dropped.length).toBeGreaterThan(2800);
    expect(pacer.queued).toBe(0);
    expect((dropped[0] as Error).message).toMatch(/waiting for its share of poll\.max_requests_per_second/);
  });

  it('0 is no budget: requests go straight to the limiter', async () => {
    const pacer = new RequestPacer(0, new ConcurrencyLimiter({ fixed: 64 }));
    const all = await Promise.all(Array.from({ length: 1000 }, (_, i) => pacer.run('stream', undefined, async () => i)));
    expect(all.length).toBe(1000);
  });

  it('a cycle of 50,000 waiting on one poll signal adds one listener to it, not one each (no warning, no quadratic queueing)', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const pacer = new RequestPacer(50, new ConcurrencyLimiter({ fixed: 8 }), () => Date.now());
      const deadline = new AbortController();
      const all = Array.from({ length: 50_000 }, () => pacer.run('stream', deadline.signal, async () => 'sent').catch((e: unknown) => e));
      expect(pacer.queued).toBeGreaterThan(49_000);
      deadline.abort();
      const outcomes = await Promise.all(all);
      expect(outcomes.filter((o) => o instanceof BudgetWaitError).length).toBeGreaterThan(49_000);
      expect(pacer.queued).toBe(0);
      await vi.advanceTimersByTimeAsync(10);
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  describe('a request the exporter held back (budget, concurrency slot) until its poll deadline cut it', () => {
    const site = { server: 'edge', endpoint: 'vhost', url: 'http://edge:8087/v2/servers/_defaultServer_/vhosts/_defaultVHost_/monitoring/current' };
    const cut = () => new WowzaTimeoutError(site, 800, 'before the poll deadline', true);
    const ownTimeout = () => new WowzaTimeoutError(site, 800);
    /**
     * One request of a poll (deadline 900 ms, request timeout 800 ms) on a server of one slot, another lane holding the
     * slot `holdMs`; with a budget of 50 a second, or none (the request then waits in the concurrency limiter's queue).
     */
    async function poll(holdMs: number, failAfterMs: number, failure: () => Error, budget = 50) {
      const pacer = new RequestPacer(budget, new ConcurrencyLimiter({ fixed: 1 }), () => Date.now());
      if (holdMs > 0) void pacer.run('stream', undefined, () => new Promise((r) => setTimeout(r, holdMs)));
      const result = timedPoll('vhost', async () => {
        await pacer.run('vhost', undefined, () => new Promise((_, reject) => setTimeout(() => reject(failure()), failAfterMs)));
        return new MetricSet();
      });
      await vi.advanceTimersByTimeAsync(2_000);
      return result;
    }

    for (const budget of [50, 0]) {
      it(`held 650 ms and cut 250 ms after it left: a budget wait, and the server counts as reached (wowza_up stays 1); budget ${budget}`, async () => {
        const r = await poll(650, 250, cut, budget);
        expect(r.error).toBeInstanceOf(BudgetWaitError);
        expect(r.error!.message).toBe(`request held back 650 ms by the exporter's own limits (poll.max_requests_per_second, the concurrency limit): ${cut().message}`);
        expect((r.error!.cause as Error).message).toMatch(/before the poll deadline/);
        expect(r.reached).toBe(true);
      });
    }

    it('a request that had its full timeout is still a timeout: one sent at once, or asked for too late in its poll, or cut by its own timeout', async () => {
      // Sent at once; the poll's deadline cut it after 900 ms (its auth's retries took the time): not held back.
      expect((await poll(0, 900, cut)).reached).toBe(false);
      // Held 300 ms, cut 300 ms after it left: 600 ms after it was asked for, less than its 800 ms timeout, so the
      // deadline would have cut it anyway.
      const late = await poll(300, 300, cut);
      expect(late.error).toBeInstanceOf(WowzaTimeoutError);
      expect(late.reached).toBe(false);
      // Held, then timed out on its own: the server had its 800 ms.
      const slow = await poll(650, 800, ownTimeout);
      expect(slow.error).toBeInstanceOf(WowzaTimeoutError);
      expect(slow.reached).toBe(false);
      // Held as long, ended as soon, but by a timeout of its own, not the poll's deadline: a timeout.
      const own = await poll(650, 250, ownTimeout);
      expect(own.error).toBeInstanceOf(WowzaTimeoutError);
      expect(own.reached).toBe(false);
    });
  });
});
