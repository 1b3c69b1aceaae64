import { describe, expect, it } from 'vitest';
import { streamIntervalWithin } from '../../src/collectors/request-budget.js';

const every15 = new Map(['machine', 'status', 'vhost', 'application', 'instance', 'stream'].map((c) => [c, 15_000]));

describe('the per-server request budget', () => {
  it('leaves a server that fits alone', () => {
    expect(streamIntervalWithin(50, { vhosts: 1, apps: 4, streams: 200 }, every15, 13_500)).toEqual({ intervalMs: 15_000 });
  });

  it('2,000 streams at 15 s (about 135 requests a second) are polled less often, within 50 a second', () => {
    const size = { vhosts: 1, apps: 10, streams: 2000 };
    const { intervalMs, reason } = streamIntervalWithin(50, size, every15, 13_500);
    expect(intervalMs).toBeGreaterThan(40_000);
    expect(reason).toMatch(/2000 streams every 15 s would ask 135 requests\/s .* over poll\.max_requests_per_second 50/);
    // What a minute then costs the server.
    const fixedPerMinute = 60 * ((1 + 1 + 1 + 10) / 15 + 12 / 13.5);
    expect(fixedPerMinute + (size.streams * 60_000) / intervalMs).toBeLessThanOrEqual(3000);
  });

  it('0 turns the budget off; the streams keep at least a tenth of it whatever the rest takes', () => {
    expect(streamIntervalWithin(0, { vhosts: 1, apps: 10, streams: 2000 }, every15, 13_500)).toEqual({ intervalMs: 15_000 });
    const crowded = streamIntervalWithin(10, { vhosts: 50, apps: 500, streams: 100 }, every15, 13_500);
    expect(crowded.intervalMs).toBe(100_000); // 100 streams on 1 request/s
  });
});
