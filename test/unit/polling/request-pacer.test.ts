import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConcurrencyLimiter } from '../../../src/polling/concurrency-limiter.js';
import { BudgetWaitError, RequestPacer } from '../../../src/polling/request-pacer.js';

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
});
