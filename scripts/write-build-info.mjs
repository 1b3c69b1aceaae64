#!/usr/bin/env node
/**
 * Writes dist/base/build-info.json after the TypeScript build: the git revision and branch of the tree built, when and by
 * whom, for `wowza-exporter --version` and wowza_exporter_build_info. Outside a git checkout (a tarball, the Docker
 * build stage) they are `unknown`; the image sets WOWZA_EXPORTER_REVISION instead.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';

function git(...args) {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || 'unknown';
  } catch {
    return 'unknown';
  }
}

function user() {
  try {
    return `${userInfo().username}@${hostname()}`;
  } catch {
    return 'unknown';
  }
}

const now = new Date();
const pad = (n) => String(n).padStart(2, '0');
// Prometheus' own format: 20260102-15:04:05 (UTC).
const buildDate = `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}-${pad(now.getUTCHours())}:${pad(now.getUTCMinutes())}:${pad(now.getUTCSeconds())}`;
const dirty = git('status', '--porcelain', '--untracked-files=no') !== 'unknown';
const revision = git('rev-parse', 'HEAD');
const info = {
  // The bundle's modules live in dist/chunks/, away from package.json; the version travels with the rest.
  version: JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version,
  revision: revision !== 'unknown' && dirty ? `${revision}-dirty` : revision,
  branch: git('rev-parse', '--abbrev-ref', 'HEAD'),
  buildUser: user(),
  buildDate,
};
writeFileSync(new URL('../dist/base/build-info.json', import.meta.url), JSON.stringify(info, null, 2) + '\n');
