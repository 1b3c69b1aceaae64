import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';
import { probeHealth } from '../helpers/health-samples.js';

/**
 * A fleet's target file of 10,000 servers, none of which accepts a connection (issue 47): loaded on the event loop and
 * started at once, it left every health probe timing out for a minute. Now the file is parsed on a thread, the servers
 * start in steps up to max_servers (2,000 by default), the rest are counted and said with --shard as the way out, and
 * health answers throughout.
 */
describe('a target file of 10,000 unreachable servers', () => {
  let dir = '';
  let exporter: RunningExporter;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-scale-'));
    // Loopback addresses where nothing listens: every connection is refused at once.
    const targets = Array.from({ length: 10_000 }, (_, i) => `    - http://127.1.${1 + Math.floor(i / 250)}.${1 + (i % 250)}:8087`);
    writeFileSync(join(dir, 'targets.yaml'), `- module: edge\n  labels: {site: lab}\n  targets:\n${targets.join('\n')}\n`);
    writeFileSync(join(dir, 'password'), 'pw', { mode: 0o600 });
    writeFileSync(join(dir, 'config.yaml'), `servers_files: [${join(dir, 'targets.yaml')}]\nmodules: {edge: {username: admin, password_file: ${join(dir, 'password')}, auth: basic}}\n`);
    exporter = await startExporterProcess(['--config', join(dir, 'config.yaml')], {}, { waitReady: false });
  });
  afterAll(async () => {
    await exporter?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('health answers every probe while the file loads and after; 2,000 servers are polled, 8,000 counted as over the limit', async () => {
    const probes = probeHealth(exporter.url, { everyMs: 250, durationMs: 45_000, timeoutMs: 3000 });
    const text = await waitFor(
      'max_servers servers polled',
      async () => {
        const t = await exporter.metrics();
        return samples(t, 'wowza_exporter_servers')[0]?.value === 2000 ? t : undefined;
      },
      60_000,
      500,
    );
    expect(samples(text, 'wowza_exporter_servers_over_limit')[0]?.value).toBe(8000);
    const health = await probes;
    const sorted = [...health.latencies].sort((a, b) => a - b);
    const p99 = sorted[Math.floor(sorted.length * 0.99)] ?? 0;
    console.log(`fleet of 10,000: ${health.failed} of ${health.sent} health probes failed; p99 ${p99.toFixed(0)} ms, slowest ${health.slowestMs.toFixed(0)} ms`);
    expect(health.failed, `${health.failed} of ${health.sent} health probes failed (3 s timeout)`).toBe(0);
    // 200 ms on a quiet machine (docs/fleets-and-probe.md); the bound here leaves room for a CI machine whose CPUs are busy.
    expect(p99).toBeLessThan(1000);

    const lines = exporter.output().split('\n');
    const over = lines.filter((l) => l.includes('more servers than max_servers'));
    expect(over).toHaveLength(1);
    expect(over[0]).toContain('--shard');
    // One line for each of the first servers added and each that went down, never one per collector.
    expect(lines.filter((l) => l.includes('"msg":"poll failed"')).length).toBeLessThan(50);
    // Every polled server is up 0 with its file's label; none of the 8,000 left out has a series.
    const up = samples(await exporter.metrics(), 'wowza_up');
    expect(up).toHaveLength(2000);
    expect(up.every((s) => s.value === 0 && s.labels.site === 'lab')).toBe(true);
  });
});
