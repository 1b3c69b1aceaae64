import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DeadLetterFile } from '../../src/logs/sinks/dead-letter.js';
import type { LogEntry } from '../../src/logs/transform/entry.js';
import { writeAtomically } from '../../src/logs/acks/positions.js';
import { FileSink } from '../../src/logs/sinks/file.js';

/**
 * Issue 29: the file sink and the dead-letter file were opened for append through a symbolic link planted at their
 * path (megabytes went into the link's target), and the positions temp file had a predictable name opened with 'w'.
 */
describe('files the exporter writes are never written through a symbolic link', () => {
  let dir: string;
  let victim: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-symlinks-'));
    victim = join(dir, 'victim');
    writeFileSync(victim, 'precious\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const entry: LogEntry = { server: 's', logType: 'wowzastreamingengine_access', line: 'x', document: Buffer.from('{"a":1}'), severity: 'info', timeMs: 0 };

  it('a file sink whose path is a symlink writes nothing through it, and says why', async () => {
    const path = join(dir, 'records.ndjson');
    symlinkSync(victim, path);
    const sink = new FileSink('file', { path, maxBytes: 1024 * 1024, maxFiles: 1 });
    await expect(sink.send([entry], new AbortController().signal)).rejects.toThrow(/is a symbolic link: refusing to write through it/);
    await sink.close();
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
  });

  it('nor does the dead-letter file', async () => {
    const path = join(dir, 'dead-letter.ndjson');
    symlinkSync(victim, path);
    const dead = new DeadLetterFile(path);
    await expect(dead.write('loki', 'HTTP 400', [entry], 400)).rejects.toThrow(/symbolic link/);
    await dead.close();
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
  });

  it('the positions file is replaced, not written through, and its temp file cannot be planted', async () => {
    const path = join(dir, 'positions.json');
    symlinkSync(victim, path);
    // Whatever an attacker plants at the old predictable temp name is not used.
    symlinkSync(victim, `${path}.tmp-${process.pid}`);
    await writeAtomically(path, '{"version":1,"positions":[]}\n');
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(readFileSync(path, 'utf8')).toBe('{"version":1,"positions":[]}\n');
    expect(existsSync(path)).toBe(true);
  });
});
