import { describe, expect, it } from 'vitest';
import { LoopLoad } from '../../../src/polling/loop-load.js';

describe('LoopLoad: polls spaced out while the event loop is saturated', () => {
  it('leaves the intervals alone under a busy second, spaces them under a saturated loop, and comes back once it has room', () => {
    const said: Array<[number, number]> = [];
    const load = new LoopLoad((spacing, utilization) => said.push([spacing, utilization]));
    // One long scrape or collection: smoothed away.
    load.sample(1);
    for (let i = 0; i < 5; i++) load.sample(0.2);
    expect(load.spacing).toBe(1);
    expect(said).toEqual([]);

    for (let i = 0; i < 10; i++) load.sample(0.98);
    expect(load.spacing).toBeGreaterThan(1.3);
    expect(said).toHaveLength(1);
    expect(said[0]![0]).toBeGreaterThan(1);
    expect(said[0]![1]).toBeGreaterThan(LoopLoad.HIGH);

    // Between the two bounds (once the smoothing has caught up) it holds where it is: no see-saw.
    for (let i = 0; i < 5; i++) load.sample(0.75);
    const held = load.spacing;
    for (let i = 0; i < 20; i++) load.sample(0.75);
    expect(load.spacing).toBe(held);

    for (let i = 0; i < 200; i++) load.sample(0.1);
    expect(load.spacing).toBe(1);
    expect(said).toHaveLength(2);
    expect(said[1]![0]).toBe(1);
  });

  it('spaces polls out at most MAX_SPACING times', () => {
    const load = new LoopLoad();
    for (let i = 0; i < 500; i++) load.sample(1);
    expect(load.spacing).toBe(LoopLoad.MAX_SPACING);
  });

  it('measures the thread it runs on: a loop held busy reads as busy', () => {
    const load = new LoopLoad();
    const until = performance.now() + 200;
    while (performance.now() < until) {
      // held, as a saturated loop is
    }
    load.sample();
    // Smoothed: one sample of a fully busy loop moves it by about a third.
    expect(load.utilization).toBeGreaterThan(0.2);
  });
});
