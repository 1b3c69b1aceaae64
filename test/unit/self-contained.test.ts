import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Issue 46: the repository stands on its own. A clone or an unpacked release has only what is in it, so no file may
 * point at a folder beside it, and the reference documents the conformance tests read are here, unedited.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCANNED = ['src', 'test', 'packages', 'docs', 'scripts', 'deploy', 'dashboards', 'bench', '.ci', 'CONTRIBUTING.md', 'README.md', 'CHANGELOG.md', 'SECURITY.md', 'Dockerfile', 'package.json'];
/** Built output, dependencies and byte-for-byte captures of other people's files are not the project's writing. */
const SKIPPED = new Set(['node_modules', 'dist', 'real-world', 'reference']);
// Spelled in pieces, so this file does not find itself.
const NAME = ['sha', 'red'].join('');
const OUTSIDE = new RegExp(`\\.\\./${NAME}\\b|(?<![\\w-])${NAME}/`);

function* files(path: string): Generator<string> {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return;
  if (st.isFile()) {
    yield path;
    return;
  }
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    yield* files(join(path, entry.name));
  }
}

describe('a repository that stands on its own', () => {
  it('has no file that names the reference folder that sat beside the clone', () => {
    const found: string[] = [];
    for (const top of SCANNED) {
      for (const file of files(join(ROOT, top))) {
        const text = readFileSync(file, 'utf8');
        text.split('\n').forEach((line, i) => {
          if (OUTSIDE.test(line)) found.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim().slice(0, 120)}`);
        });
      }
    }
    expect(found).toEqual([]);
  });

  it('keeps the reference documents byte for byte as listed in test/fixtures/reference/README.md', () => {
    const dir = join(ROOT, 'test/fixtures/reference');
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    const listed = [...readme.matchAll(/^([0-9a-f]{64}) {2}(\S+)$/gm)].map((m) => ({ sha: m[1]!, file: m[2]! }));
    const present = [...files(dir)].map((f) => relative(dir, f)).filter((f) => f !== 'README.md' && f !== '.gitattributes');
    expect(listed.map((l) => l.file).sort()).toEqual(present.sort());
    for (const { sha, file } of listed) expect(createHash('sha256').update(readFileSync(join(dir, file))).digest('hex'), file).toBe(sha);
  });
});
