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

/**
 * The product's layers, lowest first: a module may import its own folder and the layers below it, never a layer above
 * or a folder beside it (CONTRIBUTING.md has the diagram). `base` is src/base/ (logger, redaction, time zones...), which
 * everything may use; src/cli*.ts, the only files directly in src/, are the commands'. The rule below is
 * no-restricted-imports, one block per folder and depth, on the relative path that climbs back to src/.
 */
const LAYERS = [
  ['base'],
  ['wowza', 'metrics'],
  ['config'],
  ['collectors'],
  ['polling'],
  ['logs'],
  ['video', 'doctor', 'http', 'status'],
  ['webhooks'],
  ['exporter'],
  ['commands'],
];
const ROOT_FILES = { commands: ['cli', 'cli-main'] };
const layerOf = (folder) => LAYERS.findIndex((l) => l.includes(folder));
const ORDER = LAYERS.map((l) => l.join(', ')).join(' → ');
/** What `folder` may not import: every folder of its own layer but itself, and of the layers above. */
function forbiddenFor(folder) {
  const mine = layerOf(folder);
  return LAYERS.flatMap((names, i) => (i < mine ? [] : names.filter((n) => n !== folder && n !== 'base')));
}
/** A specifier that climbs `depth` folders to src/ and enters one of `names` (a folder, or its file at the root). */
function enters(depth, names) {
  const up = depth === 0 ? '\\./' : `(\\.\\./){${depth}}`;
  const targets = names.flatMap((n) => [`${n}/`, `${n}\\.js$`, ...(ROOT_FILES[n] ?? []).map((f) => `${f}\\.js$`)]);
  return `^${up}(${[...new Set(targets)].join('|')})`;
}
const restricted = (folder, regex) => ({
  'no-restricted-imports': ['error', { patterns: [{ regex, message: `imports run one way: ${folder} may import only its own folder and the layers below it (${ORDER})` }] }],
});
const layerBlocks = [
  // The base imports nothing of the layers above it.
  { files: ['src/base/*.ts'], rules: restricted('base', enters(1, LAYERS.slice(1).flat())) },
  ...LAYERS.slice(1)
    .flat()
    .filter((folder) => forbiddenFor(folder).length > 0)
    .flatMap((folder) =>
      [1, 2, 3, 4].map((depth) => ({
        files: [`src/${folder}/${'*/'.repeat(depth - 1)}*.ts`],
        rules: restricted(folder, enters(depth, forbiddenFor(folder))),
      })),
    ),
  // One function one screenful or so: the composition root was a 457-line closure (issue 39).
  { files: ['src/**/*.ts'], rules: { 'max-lines-per-function': ['error', { max: 150 }] } },
];

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
  ...layerBlocks,
);
