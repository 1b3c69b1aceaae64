import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';
import { healthyWithinASecond } from '../helpers/health-samples.js';

/**
 * A hostile WSE next to a good one (issue 29): on every endpoint it answers 32 MB of `[[[…]]]`, valid JSON nested
 * millions deep, under a 32 MiB max_response_size. Parsing that on the thread that serves /metrics froze the
 * exporter and took gigabytes. Health must keep answering, memory stay bounded, and the good server stay up.
 */

const NESTED = 32 * 1024 * 1024;
const body = Buffer.concat([Buffer.alloc(NESTED / 2, '['), Buffer.alloc(NESTED / 2, ']')]);

/** Peak resident memory of a process (VmHWM), in MB. */
function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

describe('a hostile server answering deeply nested JSON', () => {
  let hostile: Server;
  let hostileUrl = '';
  let requests = 0;
  let good: Simulator;
  let exporter: RunningExporter;
  let dir = '';

  beforeAll(async () => {
    hostile = createServer((req, res) => {
      requests++;
      // Chunked: no Content-Length tells the client the size before it reads.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
      req.resume();
    });
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
    hostileUrl = `http://127.0.0.1:${(hostile.address() as { port: number }).port}`;
    good = await startSimulator({ auth: 'basic' });
    dir = mkdtempSync(join(tmpdir(), 'hostile-'));
    writeFileSync(join(dir, 'good-password'), good.password);
    writeFileSync(join(dir, 'hostile-password'), 'x');
    const servers = JSON.stringify([
      { name: 'good', url: good.url, username: good.username, auth: 'basic', password_file: join(dir, 'good-password') },
      { name: 'hostile', url: hostileUrl, username: 'admin', auth: 'basic', password_file: join(dir, 'hostile-password'), max_response_size: '32MiB' },
    ]);
    writeFileSync(join(dir, 'config.yaml'), `poll: {interval: 2s}\nservers: ${servers}\n`);
    exporter = await startExporterProcess(['--config', join(dir, 'config.yaml')]);
  });
  afterAll(async () => {
    await exporter?.stop();
    await good?.close();
    hostile?.closeAllConnections();
    await new Promise((r) => hostile?.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('health answers within a second while it polls, memory stays bounded, the good server stays up', async () => {
    await waitFor('the hostile server being polled', () => (requests >= 3 ? true : undefined), 60_000);
    const SAMPLES = Number(process.env.HOSTILE_SAMPLES ?? 20);
    const fast = await healthyWithinASecond(exporter.url, SAMPLES);
    const text = await exporter.metrics();
    const peak = peakRssMb(exporter.proc.pid!);
    console.log(`hostile server: healthy within 1 s in ${fast} of ${SAMPLES} samples; exporter peak RSS ${peak.toFixed(0)} MB`);
    expect(fast, `healthy within 1 s in ${fast} of ${SAMPLES} one-second samples`).toBeGreaterThanOrEqual(Math.floor(SAMPLES * 0.95));
    expect(peak).toBeLessThanOrEqual(300);
    // The good server is up: read from a scrape after its collectors' latest polls (a single poll that timed out
    // while the machine was busy would read 0 for one interval; only a lasting failure fails here).
    await waitFor('the good server up', async () => {
      const t = await exporter.metrics();
      if (samples(t, 'wowza_up', { server: 'good' })[0]?.value === 1) return true;
      const failing = samples(t, 'wowza_exporter_collector_success', { server: 'good' }).filter((s) => s.value !== 1).map((s) => s.labels.collector);
      throw new Error(`good server down: failing collectors ${failing.join(', ')}; ${exporter.output().split('\n').filter((l) => l.includes('"server":"good"') && l.includes('poll failed')).slice(-2).join(' | ').slice(0, 600)}`);
    });
    // The hostile server's collectors fail, saying why, and nothing of its answers is exported.
    const failing = samples(text, 'wowza_exporter_collector_success', { server: 'hostile' });
    expect(failing.length).toBeGreaterThan(0);
    expect(failing.every((s) => s.value === 0)).toBe(true);
    expect(exporter.output()).toMatch(/nested deeper than 64 levels|larger than the \d+ byte limit/);
  }, 120_000);
});
