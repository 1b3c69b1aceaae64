import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

const PASSWORD = 'reload-pa55';

/** Reloading the configuration (SIGHUP, POST /-/reload) as Prometheus does: a broken one is refused whole. */
describe('configuration reload', () => {
  let dir: string;
  let a: Simulator;
  let b: Simulator;
  let exporter: RunningExporter;
  const config = () => join(dir, 'config.yaml');
  const write = (doc: unknown) => writeFileSync(config(), typeof doc === 'string' ? doc : stringify(doc));
  const server = (s: Simulator, name: string) => ({ name, url: s.url, username: 'admin', password_file: join(dir, 'password'), auth: 'digest' });
  const metric = async (name: string, labels: Record<string, string> = {}) => samples(await exporter.metrics(), name, labels)[0]?.value;
  const reloadByHttp = async () => {
    const res = await fetch(`${exporter.url}/-/reload`, { method: 'POST' });
    return { status: res.status, text: await res.text() };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-reload-'));
    writeFileSync(join(dir, 'password'), PASSWORD, { mode: 0o600 });
    a = await startSimulator({ auth: 'digest', password: PASSWORD, apps: 1, streams: 1 });
    b = await startSimulator({ auth: 'digest', password: PASSWORD, apps: 1, streams: 1 });
    write({ servers: [server(a, 'a')], poll: { interval: '1s' } });
    exporter = await startExporterProcess(['--config', config(), '--web.enable-lifecycle']);
  });
  afterAll(async () => {
    await exporter?.stop();
    await a?.close();
    await b?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('starts with the configuration counted as loaded', async () => {
    expect(await metric('wowza_exporter_config_last_reload_successful')).toBe(1);
    expect(await metric('wowza_exporter_config_last_reload_success_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
  });

  it('SIGHUP with a broken configuration: refused whole, the process stays up and keeps polling what it polled', async () => {
    write({ servers: [server(a, 'a'), { ...server(b, 'b'), urll: 'typo' }], poll: { interval: '1s' } });
    exporter.proc.kill('SIGHUP');
    await waitFor('the refusal', async () => ((await metric('wowza_exporter_config_last_reload_successful')) === 0 ? true : undefined));
    expect(exporter.output()).toMatch(/configuration reload refused: the previous configuration stays in use/);
    expect(exporter.output()).toMatch(/servers\[1\]\.urll: unknown key/);
    const before = (await metric('wowza_exporter_last_poll_timestamp_seconds', { server: 'a', collector: 'machine' }))!;
    await waitFor('a later poll of a', async () => ((await metric('wowza_exporter_last_poll_timestamp_seconds', { server: 'a', collector: 'machine' }))! > before ? true : undefined));
    expect(exporter.proc.exitCode).toBeNull();
    expect(await metric('wowza_up', { server: 'a' })).toBe(1);
    expect(await metric('wowza_up', { server: 'b' })).toBeUndefined();
    // POST /-/reload says why, with HTTP 500.
    const refused = await reloadByHttp();
    expect(refused.status).toBe(500);
    expect(refused.text).toMatch(/servers\[1\]\.urll: unknown key \(did you mean "url"\?\)/);
  });

  it('fixed, POST /-/reload answers 200; the new server is polled, the unchanged one keeps its digest nonce', async () => {
    const challengesBefore = a.counters.authChallenges;
    write({ servers: [server(a, 'a'), server(b, 'b')], poll: { interval: '1s' } });
    const ok = await reloadByHttp();
    expect(ok).toEqual({ status: 200, text: 'configuration reloaded\n' });
    expect(await metric('wowza_exporter_config_last_reload_successful')).toBe(1);
    await waitFor('b up', async () => ((await metric('wowza_up', { server: 'b' })) === 1 ? true : undefined));
    // Server a kept its client (and nonce): no new challenge round trip was needed for it.
    expect(a.counters.authChallenges).toBe(challengesBefore);
    expect((await fetch(`${exporter.url}/-/reload`)).status).toBe(405);
  });

  it('a reload a browser sends from another site is refused, whatever the credentials: form types, Origin, Sec-Fetch-Site', async () => {
    const before = a.counters.total;
    const attempts: Array<Record<string, string>> = [
      { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site', 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'text/plain;charset=UTF-8' },
      { 'content-type': 'multipart/form-data; boundary=x' },
      { origin: 'http://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of attempts) {
      const res = await fetch(`${exporter.url}/-/reload`, { method: 'POST', headers, body: headers['content-type'] ? 'a=b' : undefined });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(await res.text()).toMatch(/^refused: /);
    }
    // The exporter's own origin, as its status page would send it, is fine.
    const own = await fetch(`${exporter.url}/-/reload`, { method: 'POST', headers: { origin: exporter.url, 'sec-fetch-site': 'same-origin' } });
    expect(own.status).toBe(200);
    expect(a.counters.total).toBeGreaterThanOrEqual(before);
  });

  it('a server removed by a reload stops, and its series go', async () => {
    write({ servers: [server(b, 'b')], poll: { interval: '1s' } });
    expect((await reloadByHttp()).status).toBe(200);
    const text = await waitFor('a gone', async () => {
      const t = await exporter.metrics();
      return t.includes('server="a"') ? undefined : t;
    });
    expect(samples(text, 'wowza_up', { server: 'b' })[0]!.value).toBe(1);
    a.counters.reset();
    await new Promise((r) => setTimeout(r, 1500));
    expect(a.counters.total).toBe(0);
  });
});

describe('probe-only mode', () => {
  it('servers: [] with a module polls nothing until /probe is called', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wowza-probe-only-'));
    const sim = await startSimulator({ auth: 'basic', password: PASSWORD, apps: 1, streams: 1 });
    writeFileSync(join(dir, 'password'), PASSWORD, { mode: 0o600 });
    writeFileSync(
      join(dir, 'config.yaml'),
      stringify({ servers: [], modules: { default: { username: 'admin', password_file: join(dir, 'password'), allowed_targets: [sim.url.replace(/\./g, '\\.')] } } }),
    );
    const exporter = await startExporterProcess(['--config', join(dir, 'config.yaml')]);
    try {
      await new Promise((r) => setTimeout(r, 1500));
      expect(sim.counters.total).toBe(0);
      const text = await exporter.metrics();
      expect(samples(text, 'wowza_up')).toEqual([]);
      expect(samples(text, 'wowza_exporter_servers')[0]!.value).toBe(0);
      // Without --web.enable-lifecycle there is no reload over HTTP.
      const reload = await fetch(`${exporter.url}/-/reload`, { method: 'POST' });
      expect(reload.status).toBe(403);
      expect(await reload.text()).toMatch(/--web\.enable-lifecycle/);
      const probe = await fetch(`${exporter.url}/probe?target=${encodeURIComponent(sim.url)}&module=default`);
      expect(probe.status).toBe(200);
      expect(samples(await probe.text(), 'wowza_up')[0]!.value).toBe(1);
      expect(sim.counters.total).toBeGreaterThan(0);
      expect(exporter.output()).not.toMatch(/127\.0\.0\.1:8087|ECONNREFUSED/);
    } finally {
      await exporter.stop();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
