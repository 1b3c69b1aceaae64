import { describe, expect, it } from 'vitest';
import { streamIntervalWithin } from '../../src/collectors/request-budget.js';

const every15 = new Map(['machine', 'status', 'vhost', 'application', 'instance', 'stream'].map((c) => [c, 15_000]));

describe('the per-server request budget', () => {
  it('leaves a server that fits alone', () => {
    expect(streamIntervalWithin(50, { vhosts: 1, apps: 4, streams: 200 }, every15, 13_500)).toEqual({ intervalMs: 15_000 });
  });

  it('2,000 streams at 15 s (about 135 requests a second) are polled less often, within 3,000 requests in any minute', () => {
    const size = { vhosts: 1, apps: 10, streams: 2000 };
    const { intervalMs, reason } = streamIntervalWithin(50, size, every15, 13_500, 0.1);
    expect(reason).toMatch(/2000 streams every 15 s would ask 135 requests\/s .* over poll\.max_requests_per_second 50/);
    // A cycle runs at full speed, so a minute holds as many as start in it: one here, even with the jitter (±10 %).
    const gap = intervalMs * 0.9;
    const startsInAMinute = Math.floor(60_000 / gap) + 1;
    const fixedPerMinute = 60 * ((1 + 1 + 1 + 10) / 15 + 12 / 13.5);
    expect(startsInAMinute).toBe(1);
    expect(fixedPerMinute + startsInAMinute * size.streams).toBeLessThanOrEqual(3000);
  });

  it('700 streams fit with four cycles a minute: a small stretch, not the average', () => {
    const { intervalMs } = streamIntervalWithin(50, { vhosts: 1, apps: 7, streams: 700 }, every15, 13_500, 0.1);
    expect(intervalMs).toBe(16_667);
  });

  it('0 turns the budget off; the streams keep at least a tenth of it whatever the rest takes', () => {
    expect(streamIntervalWithin(0, { vhosts: 1, apps: 10, streams: 2000 }, every15, 13_500)).toEqual({ intervalMs: 15_000 });
    const crowded = streamIntervalWithin(10, { vhosts: 50, apps: 500, streams: 100 }, every15, 13_500);
    expect(crowded.intervalMs).toBe(100_000); // 100 streams on 1 request/s
  });
});
