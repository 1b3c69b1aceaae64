import { describe, expect, it } from 'vitest';
import { digestConcurrency } from '../../src/collectors/digest-pacing.js';

describe('digest pacing: the concurrency of a stream cycle on a Digest server', () => {
  it('is small for a fast server: few sessions, each nonce used until the server retires it', () => {
    // 4 apps x 50 streams at 20 ms, polled every 15 s: the cycle may take 3.75 s, 2 at once finish it in about 2.7 s.
    expect(digestConcurrency(213, 20, 15_000)).toBe(2);
    // 10 apps x 200 streams, stretched to 66.7 s by the request budget: at most 10 s for the cycle.
    expect(digestConcurrency(2_013, 20, 66_700)).toBe(6);
  });

  it('grows with a slow or large server, so the cycle still ends within a quarter of its interval', () => {
    const c = digestConcurrency(2_013, 200, 66_700);
    expect(c).toBe(51);
    expect((2_013 / c) * 200).toBeLessThanOrEqual(10_000);
    expect(digestConcurrency(5_000, 500, 15_000)).toBe(834); // above any maximum: the limiter's own max applies
  });

  it('is never below 2, and does not cap before anything was measured', () => {
    expect(digestConcurrency(3, 1, 15_000)).toBe(2);
    expect(digestConcurrency(2_000, undefined, 15_000)).toBe(Infinity);
    expect(digestConcurrency(0, 20, 15_000)).toBe(Infinity);
  });
});
