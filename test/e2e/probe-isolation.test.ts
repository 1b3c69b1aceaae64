import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';

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
    expect(added).toEqual([]);
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
