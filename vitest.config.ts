import { defineConfig } from 'vitest/config';
import { SlowestFirst } from './test/helpers/slowest-first.js';

export default defineConfig({
  // Workspace packages (packages/*) run from their TypeScript sources, their package.json "source" export, as the
  // typecheck reads them: a test needs no build of the package and sees its latest edit.
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // Ceilings for a real hang, not limits: tests wait on what the exporter reports (npm run test:busy runs them on
    // a machine whose CPUs are busy).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // End-to-end suites start real processes on loopback; two cores is the budget.
    maxWorkers: 2,
    // The slowest files first, so the two workers end together.
    sequence: { sequencer: SlowestFirst },
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ['default', ['json', { outputFile: 'test-results.json' }]],
  },
});
