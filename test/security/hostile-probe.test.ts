import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 29: /probe took its deadline from X-Prometheus-Scrape-Timeout-Seconds without a bound, and kept running
 * after its caller hung up (30 probes abandoned after 3 s left 324 sockets open to the server).
 */
describe('/probe against a server that never answers', () => {
  let dir: string;
  let hanging: Server;
  const open = new Set<Socket>();
  let exporter: RunningExporter;
  let target = '';

  beforeAll(async () => {
    hanging = createServer(() => undefined); // takes every request, answers none
    hanging.on('connection', (s) => {
      open.add(s);
      s.on('close', () => open.delete(s));
    });
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    target = `http://127.0.0.1:${(hanging.address() as { port: number }).port}`;
    dir = mkdtempSync(join(tmpdir(), 'wowza-hostile-probe-'));
    writeFileSync(join(dir, 'password'), 'x', { mode: 0o600 });
    writeFileSync(
      join(dir, 'config.yaml'),
      stringify({
        servers: [],
        modules: { default: { username: 'admin', auth: 'basic', password_file: join(dir, 'password'), timeout: '5s', allowed_targets: [target.replace(/\./g, '\\.')] } },
      }),
    );
    exporter = await startExporterProcess(['--config', join(dir, 'config.yaml')]);
  });
  afterAll(async () => {
    await exporter?.stop();
    hanging?.closeAllConnections();
    await new Promise((r) => hanging?.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const probeUrl = () => `${exporter.url}/probe?target=${encodeURIComponent(target)}&module=default`;

  it('answers within the module timeout, whatever scrape timeout the caller names', async () => {
    const started = Date.now();
    const res = await fetch(probeUrl(), { headers: { 'x-prometheus-scrape-timeout-seconds': '3600' }, signal: AbortSignal.timeout(30_000) });
    const took = Date.now() - started;
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text, text).toMatch(/^wowza_up(\{[^}]*\})? 0$/m);
    expect(took).toBeLessThan(8_000);
  }, 40_000);

  it('a probe whose caller hung up stops: 20 abandoned probes leave at most 10 connections 3 s later', async () => {
    await waitFor('the first probe done', () => (open.size <= 10 ? true : undefined), 45_000);
    const abandoned = Array.from({ length: 20 }, () =>
      fetch(probeUrl(), { headers: { 'x-prometheus-scrape-timeout-seconds': '3600' }, signal: AbortSignal.timeout(1000) }).catch(() => undefined),
    );
    await Promise.all(abandoned);
    await new Promise((r) => setTimeout(r, 3000));
    expect(open.size).toBeLessThanOrEqual(10);
  }, 40_000);
});
