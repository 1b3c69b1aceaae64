import { describe, expect, it } from 'vitest';
import { heapFlags, servesInWorker, workerLimits } from '../../src/serve-thread.js';

describe('serve in a worker thread', () => {
  it('carries the heap flags a user gave to node or in NODE_OPTIONS over to the worker (later ones win)', () => {
    expect(heapFlags([], undefined)).toEqual({});
    expect(heapFlags([], '--max-old-space-size=192 --enable-source-maps')).toEqual({ oldSpaceMb: 192 });
    expect(heapFlags(['--max-semi-space-size=2'], '--max_old_space_size=256 --max-semi-space-size=8')).toEqual({ semiSpaceMb: 2, oldSpaceMb: 256 });
    expect(heapFlags(['--max-semi-space-size'], undefined)).toEqual({});
  });

  it('limits the old generation to 1 GB, or less when V8 would allow less, unless the user said otherwise', () => {
    const GB = 2 ** 30;
    expect(workerLimits({}, 4 * GB)).toEqual({ maxYoungGenerationSizeMb: 6, maxOldGenerationSizeMb: 1024 });
    expect(workerLimits({}, 0.5 * GB)).toEqual({ maxYoungGenerationSizeMb: 6, maxOldGenerationSizeMb: 512 });
    expect(workerLimits({ oldSpaceMb: 2048, semiSpaceMb: 2 }, 4 * GB)).toEqual({ maxYoungGenerationSizeMb: 6, maxOldGenerationSizeMb: 2048 });
  });

  it('is for serve, the default command, only', () => {
    expect(servesInWorker([])).toBe(true);
    expect(servesInWorker(['serve', '--config', 'x.yaml'])).toBe(true);
    expect(servesInWorker(['--config', 'x.yaml'])).toBe(true);
    expect(servesInWorker(['serve', '--help'])).toBe(false);
    expect(servesInWorker(['logs', 'tail'])).toBe(false);
    expect(servesInWorker(['simulate'])).toBe(false);
  });
});
