// Keeps test/file-durations.json, the order in which `vitest run` starts its files (test/helpers/slowest-first.ts),
// true: run after a full `npm test` on a quiet machine, and commit the file when the slow files changed. It reads
// vitest's own timings of the last run (its results cache), which count each file's hooks as well as its tests.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Files shorter than this are started in vitest's own order: their place changes little. */
const MIN_SECONDS = 5;

const cacheDir = 'node_modules/.vite/vitest';
const caches = readdirSync(cacheDir)
  .map((d) => join(cacheDir, d, 'results.json'))
  .filter((f) => statSync(f, { throwIfNoEntry: false })?.isFile())
  .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
if (caches.length === 0) throw new Error(`no vitest results under ${cacheDir}: run \`npm test\` first`);
const { results } = JSON.parse(readFileSync(caches[0], 'utf8'));
const seconds = {};
// Entries are [`<project>:<file>`, { duration (ms), failed }].
for (const [key, { duration }] of results) {
  const s = Math.round(duration / 1000);
  if (s >= MIN_SECONDS) seconds[key.slice(key.indexOf(':') + 1)] = s;
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([, a], [, b]) => b - a));
writeFileSync('test/file-durations.json', `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/file-durations.json: ${Object.keys(sorted).length} files of ${MIN_SECONDS} s or more, from ${caches[0]}`);
