import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AtomicFileThread } from '../../../../src/logs/acks/atomic-file-thread.js';

// The thread runs the compiled worker (npm test builds first); from the TypeScript sources the same calls run inline.
const compiled = new URL('../../../../dist/logs/acks/atomic-file-worker.js', import.meta.url);
const compiledThread = new URL('../../../../dist/logs/acks/atomic-file-thread.js', import.meta.url);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'atomic-file-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the file thread (runs what npm run build compiled)', () => {
  const files = new AtomicFileThread(compiled);
  beforeAll(() => expect(existsSync(fileURLToPath(compiled)), 'run npm run build first').toBe(true));
  afterAll(() => files.close());

  it('replaces a file with its content, mode 0640 whatever the umask, and keeps the one it replaced as the previous copy', async () => {
    const path = join(dir, 'positions.json');
    const before = process.umask(0o077);
    try {
      const first = await files.replace(path, 'one\n', { previous: `${path}.prev` });
      const second = await files.replace(path, 'two\n', { previous: `${path}.prev`, keepIf: first });
      expect(readFileSync(path, 'utf8')).toBe('two\n');
      expect(readFileSync(`${path}.prev`, 'utf8')).toBe('one\n');
      // The previous copy is the file that was replaced (a link to it), not a second write of it.
      expect(lstatSync(`${path}.prev`).ino).toBe(first.ino);
      expect(second).toEqual({ ino: lstatSync(path).ino, size: 4 });
      expect(statSync(path).mode & 0o777).toBe(0o640);
      expect(readdirSync(dir).sort()).toEqual(['positions.json', 'positions.json.prev']);
    } finally {
      process.umask(before);
    }
  });

  it('a file changed behind its back is not kept as the previous copy: the new content is', async () => {
    const path = join(dir, 'positions.json');
    const first = await files.replace(path, 'one\n');
    writeFileSync(path, ''); // truncated in place
    await files.replace(path, 'two\n', { previous: `${path}.prev`, keepIf: first });
    expect(readFileSync(`${path}.prev`, 'utf8')).toBe('two\n');
  });

  it('fails with the reason and its code, and the next operation works', async () => {
    writeFileSync(join(dir, 'file'), 'x');
    const failed = files.replace(join(dir, 'file', 'positions.json'), '{}\n');
    await expect(failed).rejects.toThrow(/ENOTDIR/);
    await expect(failed).rejects.toMatchObject({ code: 'ENOTDIR' });
    await files.replace(join(dir, 'positions.json'), '{}\n');
    expect(readFileSync(join(dir, 'positions.json'), 'utf8')).toBe('{}\n');
  });

  it('copies a file aside as a synced copy of its own', async () => {
    writeFileSync(join(dir, 'positions.json'), 'broken');
    await files.keepCopy(join(dir, 'positions.json'), join(dir, 'positions.json.corrupt'), false);
    expect(readFileSync(join(dir, 'positions.json.corrupt'), 'utf8')).toBe('broken');
    expect(lstatSync(join(dir, 'positions.json.corrupt')).ino).not.toBe(lstatSync(join(dir, 'positions.json')).ino);
  });

  it('a thread that keeps failing is given up after three tries: the saves fail with the reason, then run on the event loop', async () => {
    const broken = join(dir, 'broken-worker.mjs');
    writeFileSync(broken, "throw new Error('cannot start');\n");
    const failing = new AtomicFileThread(pathToFileURL(broken));
    const path = join(dir, 'positions.json');
    for (let i = 0; i < 3; i++) await expect(failing.replace(path, 'x\n')).rejects.toThrow(/the file thread failed: cannot start/);
    expect(existsSync(path)).toBe(false);
    await failing.replace(path, 'saved\n');
    expect(readFileSync(path, 'utf8')).toBe('saved\n');
  });

  it('a process whose last act is a save waits for it, and does not wait for the idle thread after', () => {
    const path = join(dir, 'last.json');
    const script = `import { AtomicFileThread } from ${JSON.stringify(compiledThread.href)};
      await new AtomicFileThread().replace(${JSON.stringify(path)}, 'saved\\n');`;
    // The thread stops 30 s after its last operation; the process must not wait for that.
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(run.error, 'the process did not exit while the idle thread was still there').toBeUndefined();
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe('saved\n');
  });
});
