import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * packages/simulator is a package of its own: it is what checks the product, so it imports nothing of the product
 * and nothing outside itself but Node's built-ins (its tests also their devDependencies). A relative path may not
 * climb out of it: a file N folders below packages/simulator goes up at most N times. One block per folder depth.
 */
const OUTSIDE_SIMULATOR = 'packages/simulator imports nothing outside itself (not the product): Node built-ins, its own files and its package.json dependencies only';
const SIMULATOR_BARE = {
  // The simulator itself has no dependencies.
  src: '^(?!node:|\\.{1,2}/)',
  test: '^(?!node:|\\.{1,2}/|(vitest|undici|fast-check)$)',
};
const simulatorBlocks = Object.entries(SIMULATOR_BARE).flatMap(([dir, bare]) =>
  [1, 2, 3, 4].map((depth) => ({
    files: [`packages/simulator/${dir}/${'*/'.repeat(depth - 1)}*.{ts,mts,js,mjs}`],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { regex: `^(\\.\\./){${depth + 1},}`, message: OUTSIDE_SIMULATOR },
          { regex: bare, message: OUTSIDE_SIMULATOR },
        ],
      }],
    },
  })),
);

export default tseslint.config(
  { ignores: ['dist/**', 'dist-bench/**', 'node_modules/**', 'bench/results.json'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // The simulator package: its built output is not linted, its sources may not import outside it.
  { ignores: ['packages/*/dist/**'] },
  ...simulatorBlocks,
);
