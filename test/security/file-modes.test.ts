import { spawn } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/exporter-process.js';
import { freePort, waitFor } from '../helpers/ports.js';

/**
 * Issue 41: under umask 000 the product created world-writable directories and world-readable files. `demo` creates
 * every kind the product makes outside a test: its own directory, a secret (the webhook secret), and the log
 * pipeline's positions and sink file. Under umask 000 each must get its explicit mode.
 */
describe('files and directories created under umask 000', () => {
  let dir: string | undefined;
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('demo: directory 0700, secret 0600, positions and shipped records 0640', async () => {
    const port = await freePort();
    const proc = spawn('sh', ['-c', 'umask 000 && exec "$@"', 'sh', process.execPath, CLI, 'demo', '--web.listen-address', `127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const records = await waitFor('the demo to print where the records go', () => /shipped log records\s+(\S+)/.exec(out)?.[1], 60_000);
      dir = dirname(records);
      const files = { secret: join(dir, 'webhook-secret'), positions: join(dir, 'positions.json'), records };
      await waitFor(`the demo's files in ${dir}`, () => Object.values(files).every((f) => existsSync(f)), 60_000);
      const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);
      expect(mode(dir)).toBe('700');
      expect(mode(files.secret)).toBe('600');
      expect(mode(files.positions)).toBe('640');
      expect(mode(files.records)).toBe('640');
    } finally {
      proc.kill('SIGTERM');
      await new Promise((r) => (proc.exitCode !== null ? r(undefined) : proc.once('exit', r)));
    }
  }, 120_000);
});
