// Keeps test/file-durations.json, the order in which `vitest run` starts its files (test/helpers/slowest-first.ts),
// true: run after a full `npm test` on a quiet machine, and commit the file when the slow files changed.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

/** Files shorter than this are started in vitest's own order: their place changes little. */
const MIN_SECONDS = 5;

const report = JSON.parse(readFileSync('test-results.json', 'utf8'));
const seconds = {};
for (const file of report.testResults) {
  const s = (file.endTime - file.startTime) / 1000;
  if (s >= MIN_SECONDS) seconds[relative(process.cwd(), file.name)] = Math.round(s);
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([, a], [, b]) => b - a));
writeFileSync('test/file-durations.json', `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/file-durations.json: ${Object.keys(sorted).length} files of ${MIN_SECONDS} s or more`);
