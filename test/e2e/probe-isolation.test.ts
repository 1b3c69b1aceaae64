import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { freePort } from '../helpers/ports.js';

/**
 * Issue 40: after a few probes, wowza_exporter_api_requests_total and …_api_request_duration_seconds held series
 * labelled server="probe:default". A probe is rendered into its own answer (blackbox_exporter's fresh registry per
 * request): nothing it causes may stay in /metrics.
 */

/** The series of the exporter's own families (wowza_*), by name and labels, values left out. */
function wowzaSeries(text: string): Set<string> {
  return new Set(
    text
      .split('\n')
      .filter((l) => l.startsWith('wowza_'))
      .map((l) => l.replace(/ [^ ]+$/, '')),
  );
}

describe('/probe leaves nothing in /metrics', () => {
  let dir: string;
  let sim: Simulator;
  let exporter: RunningExporter;

  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic' });
    dir = mkdtempSync(join(tmpdir(), 'wowza-probe-isolation-'));
    writeFileSync(join(dir, 'password'), sim.password, { mode: 0o600 });
    const origin = new URL(sim.url).origin;
    writeFileSync(
      join(dir, 'config.yaml'),
      stringify({
        servers: [],
        modules: { default: { username: sim.username, auth: 'basic', password_file: join(dir, 'password'), allowed_targets: [origin.replace(/[.]/g, '\\.')] } },
      }),
    );
    exporter = await startExporterProcess(['--config', join(dir, 'config.yaml')]);
  });
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('after 20 probes /metrics has no series labelled with a probe, and no wowza_* series it did not have before', async () => {
    const before = await exporter.metrics();
    const probeUrl = `${exporter.url}/probe?target=${encodeURIComponent(sim.url)}&module=default`;
    for (let i = 0; i < 20; i++) {
      const res = await fetch(probeUrl, { signal: AbortSignal.timeout(30_000) });
      expect(res.status).toBe(200);
      const body = await res.text();
      // The probe's own answer still says what it did.
      expect(body, body.slice(0, 2000)).toMatch(/^wowza_up\{[^}]*\} 1$/m);
      expect(body).toMatch(/^wowza_exporter_probe_duration_seconds\{/m);
    }
    const after = await exporter.metrics();
    expect(after).not.toMatch(/server="probe:/);
    const host = new URL(sim.url).host;
    expect(after).not.toContain(host);
    const had = wowzaSeries(before);
    const added = [...wowzaSeries(after)].filter((s) => !had.has(s));
    // Only the count of probes by module (names from the config, a bounded set).
    expect(added).toEqual(['wowza_exporter_probes_total{module="default"}']);
    expect(after).not.toMatch(/^wowza_exporter_api_requests_total\{/m);
  }, 120_000);
});

describe('/probe of a web server that is not Wowza', () => {
  it('answers wowza_up 0, as serve does: an HTML 404 from every endpoint is not the WSE REST API', async () => {
    const { createServer } = await import('node:http');
    const web = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<html><head><title>404 Not Found</title></head><body>Not Found</body></html>'));
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    const target = `http://127.0.0.1:${(web.address() as import('node:net').AddressInfo).port}`;
    const dir = mkdtempSync(join(tmpdir(), 'wowza-probe-html-'));
    writeFileSync(join(dir, 'config.yaml'), stringify({ servers: [], modules: { default: { allowed_targets: ['http://127\\.0\\.0\\.1:\\d+'] } } }));
    const exporter = await startExporterProcess(['--config', join(dir, 'config.yaml')]);
    try {
      const body = await (await fetch(`${exporter.url}/probe?target=${encodeURIComponent(target)}&module=default`, { signal: AbortSignal.timeout(30_000) })).text();
      expect(body, body.slice(0, 2000)).toMatch(/^wowza_up\{[^}]*\} 0$/m);
    } finally {
      await exporter.stop();
      web.closeAllConnections();
      await new Promise((r) => web.close(r));
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('/probe of a target that refuses connections (issue 45)', () => {
  /** 20 probes of a port nothing listens on; the exporter's log lines meanwhile and its /metrics after. */
  async function probeRefused(args: string[]): Promise<{ lines: Array<Record<string, unknown>>; metrics: string }> {
    const target = `http://127.0.0.1:${await freePort()}`;
    const dir = mkdtempSync(join(tmpdir(), 'wowza-probe-refused-'));
    writeFileSync(join(dir, 'config.yaml'), stringify({ servers: [], modules: { edge: { allowed_targets: ['http://127\\.0\\.0\\.1:\\d+'] } } }));
    const exporter = await startExporterProcess(['--config', join(dir, 'config.yaml'), ...args]);
    try {
      const from = exporter.output().length;
      for (let i = 0; i < 20; i++) {
        const body = await (await fetch(`${exporter.url}/probe?target=${encodeURIComponent(target)}&module=edge`, { signal: AbortSignal.timeout(30_000) })).text();
        expect(body).toMatch(/^wowza_up\{[^}]*\} 0$/m);
      }
      const lines = exporter
        .output()
        .slice(from)
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      return { lines, metrics: await exporter.metrics() };
    } finally {
      await exporter.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('logs one line per failing probe at the level chosen (--log.probe-level warn), and counts each failure', async () => {
    const { lines, metrics } = await probeRefused(['--log.probe-level', 'warn']);
    expect(lines.map((l) => [l.level, l.msg])).toEqual(Array.from({ length: 20 }, () => ['warn', expect.stringMatching(/^probe failed: \d+ of \d+ collectors \(network\)$/)]));
    expect(lines[0]).toMatchObject({ module: 'edge', up: 0, reason: 'network' });
    expect(samples(metrics, 'wowza_exporter_probe_failures_total', { module: 'edge', reason: 'network' })[0]?.value).toBe(20);
    expect(samples(metrics, 'wowza_exporter_probes_total', { module: 'edge' })[0]?.value).toBe(20);
  }, 120_000);

  it('at the defaults the line is at debug level: nothing in an info log, the failures still counted', async () => {
    const { lines, metrics } = await probeRefused([]);
    expect(lines).toEqual([]);
    expect(samples(metrics, 'wowza_exporter_probe_failures_total', { module: 'edge', reason: 'network' })[0]?.value).toBe(20);
  }, 120_000);
});
