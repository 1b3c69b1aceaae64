import { describe, expect, it } from 'vitest';
import { startSimulator } from '../src/index.js';
import { WorkerPool } from '../src/worker-pool.js';

const MACHINE = '/v2/machine/monitoring/current';

describe('simulator capacity (REST worker pool)', () => {
  it('serves at most N requests at once, the rest in arrival order, and reports how long they waited', async () => {
    // 100 ms per answer, not 20: the requests reach the pool up to a few ms apart on a busy machine (CI saw the
    // last one wait 71 ms where the arithmetic says 80), so the floors below leave a whole answer's time for that.
    const sim = await startSimulator({ auth: 'none', latencyMs: 100, capacity: 2 });
    try {
      const started = performance.now();
      const done: number[] = [];
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          fetch(sim.url + MACHINE, { headers: { accept: 'application/json' } }).then(async (r) => {
            await r.text();
            done.push(i);
          }),
        ),
      );
      const ms = performance.now() - started;
      // Five rounds of two at 100 ms each.
      expect(ms).toBeGreaterThanOrEqual(495);
      const waits = sim.workers.queueWaits();
      expect(waits.count).toBe(10);
      // Half waited at least two rounds (200 ms) and the last four (400 ms), less a round for arrival spread.
      expect(waits.p50Ms).toBeGreaterThanOrEqual(100);
      expect(waits.maxMs).toBeGreaterThanOrEqual(300);
      sim.workers.resetWaits();
      expect(sim.workers.queueWaits().count).toBe(0);
    } finally {
      await sim.close();
    }
  });

  it('without a capacity nobody waits', async () => {
    const sim = await startSimulator({ auth: 'none', latencyMs: 20 });
    try {
      await Promise.all(Array.from({ length: 20 }, () => fetch(sim.url + MACHINE).then((r) => r.text())));
      expect(sim.workers.queueWaits().maxMs).toBeLessThan(5);
    } finally {
      await sim.close();
    }
  });

  it('hands a freed worker to the longest waiting request', async () => {
    const pool = new WorkerPool(1);
    const signal = new AbortController().signal;
    const first = (await pool.acquire(signal))!;
    const order: number[] = [];
    const waiting = [1, 2, 3].map((n) => pool.acquire(signal).then((release) => (order.push(n), release!)));
    expect(pool.queued).toBe(3);
    first();
    for (const w of waiting) (await w)();
    expect(order).toEqual([1, 2, 3]);
  });
});
