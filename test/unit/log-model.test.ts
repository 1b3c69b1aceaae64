import { describe, expect, it } from 'vitest';
import { runLogModel } from '../helpers/log-model.js';

/**
 * The randomized model of the log pipeline (test/helpers/log-model.ts): a few seeds in every run; `npm run
 * test:log-model` runs many (LOG_MODEL_SEEDS, default 200) and prints the seed of any failure.
 */
const many = Number(process.env.LOG_MODEL_SEEDS ?? 0);
const first = Number(process.env.LOG_MODEL_FIRST_SEED ?? 1);
const seeds = many > 0 ? Array.from({ length: many }, (_, i) => first + i) : [1, 2, 3, 4, 5, 6];

describe('log pipeline model: appends, rotations, sink outages and kills at random', () => {
  let passed = 0;
  it.each(seeds)('seed %i keeps every promise', async (seed) => {
    const result = await runLogModel(seed);
    const summary = `seed ${seed}: ${result.written} lines, ${result.rotations} rotations, ${result.kills} kills, ${result.duplicates} duplicates`;
    expect(result.failures, `${summary}\n${result.failures.join('\n')}\ntrace:\n${result.trace.join('\n')}`).toEqual([]);
    passed++;
    if (many > 0) console.log(`${summary}: passed (${passed} of ${seeds.length} so far)`);
  }, 120_000);
});
