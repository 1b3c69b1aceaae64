import { describe, expect, it } from 'vitest';
import { digestConcurrency, pacedCycleMs } from '../../../src/polling/digest-pacing.js';

const at = (fastestMs: number | undefined, typicalMs = fastestMs) => ({ fastestMs, typicalMs });

describe('digest pacing: the concurrency of a stream cycle on a Digest server', () => {
  it('is small for a fast server: few sessions, each nonce used until the server retires it', () => {
    // 4 apps x 50 streams at 20 ms, polled every 15 s: the cycle may take 3.75 s, 2 at once finish it in about 2.7 s.
    expect(digestConcurrency(213, at(20), 15_000)).toBe(2);
    // 10 apps x 200 streams, stretched to 66.7 s by the request budget: at most 10 s for the cycle.
    expect(digestConcurrency(2_013, at(20), 66_700)).toBe(6);
  });

  it('grows with a slow or large server, so the cycle still ends within a quarter of its interval', () => {
    const c = digestConcurrency(2_013, at(200), 66_700);
    expect(c).toBe(51);
    expect((2_013 / c) * 200).toBeLessThanOrEqual(pacedCycleMs(66_700));
    expect(digestConcurrency(5_000, at(500), 15_000)).toBe(834); // above any maximum: the limiter's own max applies
  });

  it('plans with what answers take now when that is slower than the fastest one (a loaded server or exporter)', () => {
    expect(digestConcurrency(213, at(1, 1), 1_000)).toBe(2);
    expect(digestConcurrency(213, at(1, 50), 1_000)).toBe(43);
  });

  it('gives a cycle that overran its time proportionally more the next time, never less than planned', () => {
    // Planned 2; the last cycle at 2 took 1 s of its 250 ms: the next gets 8.
    expect(digestConcurrency(213, at(1), 1_000, { concurrency: 2, ms: 1_000 })).toBe(8);
    // One that kept to its time changes nothing.
    expect(digestConcurrency(213, at(1), 1_000, { concurrency: 2, ms: 200 })).toBe(2);
  });

  it('is never below 2, and does not cap before anything was measured', () => {
    expect(digestConcurrency(3, at(1), 15_000)).toBe(2);
    expect(digestConcurrency(2_000, at(undefined), 15_000)).toBe(Infinity);
    expect(digestConcurrency(0, at(20), 15_000)).toBe(Infinity);
  });
});
