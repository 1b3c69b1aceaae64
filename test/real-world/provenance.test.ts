import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Issue 38: every sample of the real-world corpus is the file its PROVENANCE.md describes. The sha256 list there names
 * each sample; a file edited, added without a line, or listed but gone fails here. The sample count PROVENANCE.md
 * states is the number of files.
 */
const ROOT = join(import.meta.dirname, '../fixtures/real-world');
const provenance = readFileSync(join(ROOT, 'PROVENANCE.md'), 'utf8');

function listed(): Map<string, string> {
  const section = provenance.slice(provenance.indexOf('## sha256'));
  const block = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  const out = new Map<string, string>();
  for (const line of block.split('\n').filter((l) => l !== '')) {
    const m = /^([0-9a-f]{64}) {2}(\S.*)$/.exec(line);
    if (!m) throw new Error(`not a sha256sum line in PROVENANCE.md: ${line}`);
    out.set(m[2]!, m[1]!);
  }
  return out;
}

function samplesOnDisk(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return samplesOnDisk(path);
    return e.name === 'PROVENANCE.md' || e.name === '.gitattributes' ? [] : [relative(ROOT, path)];
  });
}

describe('the real-world corpus is what PROVENANCE.md says', () => {
  const list = listed();
  const files = samplesOnDisk().sort();

  it('every sample is listed, and every listed file is there', () => {
    expect([...list.keys()].sort()).toEqual(files);
  });

  it('every sample has the sha256 PROVENANCE.md gives', () => {
    for (const file of files) {
      const sum = createHash('sha256').update(readFileSync(join(ROOT, file))).digest('hex');
      expect(sum, file).toBe(list.get(file));
    }
  });

  it('the sample count it states is the number of files, and at least 30 of them are captured', () => {
    const stated = /Samples: \*\*(\d+)\*\* files: \*\*(\d+) captured\*\*/.exec(provenance);
    expect(stated, 'the "Samples: **N** files: **M captured**" line').not.toBeNull();
    expect(Number(stated![1])).toBe(files.length);
    expect(Number(stated![2])).toBeGreaterThanOrEqual(30);
  });
});
