#!/usr/bin/env node
/**
 * `npm run release` (after the build): packs the installable tarball into `release/` and writes `release/SHA256SUMS`
 * beside it, in sha256sum's format, so `cd release && sha256sum -c SHA256SUMS` checks a download.
 *
 * What the tarball holds is package.json's `files`: the bundled CLI (dist/cli.js, dist/chunks/), dashboards and
 * deploy material, without tsc's per-module output (tests and benchmarks use it; the CLI never loads it), source
 * maps or the compose demo's password. `--out <dir>` writes elsewhere (the release test uses a temporary folder).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function fail(message) {
  console.error(`release: ${message}`);
  process.exit(2);
}

/**
 * The lock without the workspace packages (packages/*, the simulator): the tarball holds none of them (the bundle
 * carries what the CLI uses of them), so an install must not be told to link them.
 */
function withoutWorkspaces(lock) {
  const packages = {};
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path.startsWith('packages/') || (entry.link && String(entry.resolved).startsWith('packages/'))) continue;
    packages[path] = entry;
  }
  const { workspaces: _workspaces, ...rootEntry } = packages[''];
  return { ...lock, packages: { ...packages, '': rootEntry } };
}

/**
 * The scripts of the released package.json. `demo` runs the built CLI's demo; `test` checks the installed copy: the CLI
 * loads, with its build facts, and reads and validates a configuration. No `prepack` or `build`: there is nothing to
 * build in a release.
 */
const RELEASE_SCRIPTS = {
  demo: 'node dist/cli.js demo',
  test: 'node dist/cli.js --version && node dist/cli.js --config.check --wowza.url http://127.0.0.1:8087',
};

const args = process.argv.slice(2);
let out = join(root, 'release');
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--out' && args[i + 1]) out = resolve(args[++i]);
  else fail(`unknown argument ${JSON.stringify(args[i])} (usage: node scripts/release.mjs [--out <dir>])`);
}
for (const built of ['dist/cli.js', 'dist/chunks/build-info.json']) {
  if (!existsSync(join(root, built))) fail(`${built} is missing: run \`npm run build\` first (\`npm run release\` does)`);
}

mkdirSync(out, { recursive: true });
// Only this release's files: a tarball of an older version left here would be listed in SHA256SUMS too.
for (const f of readdirSync(out)) if (f.endsWith('.tgz') || f === 'SHA256SUMS') rmSync(join(out, f));
// The dependency versions this build was tested with go into the tarball as npm-shrinkwrap.json (npm pack never ships
// package-lock.json): the bundle loads files inside yargs and undici by path, so an install must get those versions,
// not the newest of their ranges.
const shrinkwrap = join(root, 'npm-shrinkwrap.json');
writeFileSync(shrinkwrap, `${JSON.stringify(withoutWorkspaces(JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'))), null, 2)}\n`);
// The tarball's own scripts: the README's `npm ci && npm run demo` and `npm ci && npm test` work in an unpacked release
// too, where there are no sources to build and no suite to run. The repository's package.json is put back after.
const manifest = join(root, 'package.json');
const manifestText = readFileSync(manifest, 'utf8');
writeFileSync(manifest, `${JSON.stringify({ ...JSON.parse(manifestText), scripts: RELEASE_SCRIPTS }, null, 2)}\n`);
let packed;
try {
  packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], { cwd: root, encoding: 'utf8' }));
} finally {
  writeFileSync(manifest, manifestText);
  rmSync(shrinkwrap, { force: true });
}
const { filename, size, entryCount } = packed[0];

const sums = readdirSync(out)
  .filter((f) => f.endsWith('.tgz'))
  .sort()
  .map((f) => `${createHash('sha256').update(readFileSync(join(out, f))).digest('hex')}  ${f}\n`)
  .join('');
writeFileSync(join(out, 'SHA256SUMS'), sums);

const info = JSON.parse(readFileSync(join(root, 'dist/chunks/build-info.json'), 'utf8'));
console.log(`${join(out, filename)}: ${entryCount} files, ${(size / 1024).toFixed(0)} KiB, revision ${info.revision}`);
if (String(info.revision).endsWith('-dirty')) console.warn('release: built from a tree with uncommitted changes (revision ends in -dirty)');
process.stdout.write(sums);
