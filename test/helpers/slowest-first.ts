import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Starts the slowest test files first (test/file-durations.json, kept by scripts/record-test-durations.mjs), the rest
 * after them in vitest's own order. A clean clone has no results cache, so vitest orders by file size: a 2-minute file
 * could start last and run alone at the end while the other worker idled.
 */
export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = JSON.parse(readFileSync(new URL('../file-durations.json', import.meta.url), 'utf8')) as Record<string, number>;
    const root = this.ctx.config.root;
    const weight = (f: TestSpecification) => seconds[relative(root, f.moduleId)] ?? 0;
    // Array.prototype.sort is stable: files of equal weight (all the unlisted ones) keep vitest's order.
    return (await super.sort(files)).sort((a, b) => weight(b) - weight(a));
  }
}
