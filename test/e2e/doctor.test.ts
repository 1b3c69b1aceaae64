import { vocabularyCache } from '../../src/collectors/label-vocabulary.js';
import { mkdtempSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import pLimit from 'p-limit';
import { Discovery } from '../../src/collectors/discovery.js';
import { WSE_COLLECTORS } from '../../src/collectors/registry.js';
import { runCollector } from '../../src/polling/poll-result.js';
import { parseConfig } from '../../src/config/load.js';
import { runDoctor } from '../../src/doctor/checks.js';
import type { CheckResult } from '../../src/doctor/report.js';
import { silentLogger } from '../../src/base/logger.js';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { WowzaClient, type WowzaTarget } from '../../src/wowza/client.js';
import { runCli, startExporterProcess } from '../helpers/exporter-process.js';
import { missingOpenssl, selfSignedCert } from '../helpers/faults-tls.js';

const config = parseConfig({});
const opened: Array<{ close(): unknown }> = [];
afterAll(async () => {
  for (const o of opened) await o.close();
});

async function sim(opts: Parameters<typeof startSimulator>[0]): Promise<Simulator> {
  const s = await startSimulator(opts);
  opened.push(s);
  return s;
}

/** As the config loader makes it: no connectioncounts_url means the default provider is looked for. */
function target(url: string, over: Partial<WowzaTarget> = {}): WowzaTarget {
  const auto = over.connectionCountsUrl === undefined;
  return { name: 't', url, username: 'admin', password: 'admin', auth: 'auto', timeoutMs: 2000, maxResponseBytes: 32 << 20, serverName: '_defaultServer_', connections: 8, ...(auto ? { connectionCountsAuto: true } : {}), ...over };
}

/** A reverse proxy in front of the simulator that serves the admin port's /connectioncounts beside the REST API. */
async function proxyOf(s: Simulator): Promise<string> {
  const server = createServer((req, res) => {
    const upstream = new URL(req.url!.startsWith('/connectioncounts') ? s.adminUrl : s.url);
    const forward = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.writeHead(502).end());
    req.pipe(forward);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  opened.push({ close: () => new Promise((r) => server.close(r)) });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function doctor(t: WowzaTarget): Promise<CheckResult[]> {
  return runDoctor({ target: t, config, collectors: [...WSE_COLLECTORS], intervalMs: 15_000, logger: silentLogger() });
}

const byName = (results: CheckResult[], check: string) => results.find((r) => r.check === check);
const failed = (results: CheckResult[]) => results.filter((r) => r.status === 'fail');

describe('doctor against the simulator', () => {
  for (const auth of ['basic', 'digest'] as const) {
    it(`all checks pass in ${auth} mode`, async () => {
      const s = await sim({ auth, frozen: true });
      const results = await doctor(target(s.url));
      expect(failed(results)).toEqual([]);
      expect(results.map((r) => r.check)).toEqual(['dns', 'tcp', 'http', 'auth', 'content-type', 'version', 'discovery', 'connectioncounts', 'logs']);
      expect(byName(results, 'auth')!.message).toContain(`auto picks ${auth === 'basic' ? 'Basic' : 'Digest'}`);
      expect(byName(results, 'version')!.message).toContain('4.9.4');
      expect(byName(results, 'logs')!.message).toMatch(/wowzastreamingengine_access \(\d+ bytes\)/);
    });
  }

  it('the cost estimate matches a real poll within 10%', async () => {
    const s = await sim({ auth: 'basic', frozen: true, apps: 4, streams: 5 });
    const results = await doctor(target(s.url));
    const cost = byName(results, 'discovery')!.details as { requests: number; series: number };
    // A real poll: every collector once, counting requests at the simulator and series on the result.
    s.counters.reset();
    const client = new WowzaClient(target(s.url, { auth: 'basic' }));
    const limit = pLimit(8);
    const signal = AbortSignal.timeout(10_000);
    const ctx = { client, server: 't', limit, signal, discovery: new Discovery(client, limit, config.discovery, 60_000, silentLogger()), log: silentLogger(), vanished: () => {}, vocabulary: vocabularyCache() };
    const polled = await Promise.all(WSE_COLLECTORS.filter((c) => c.appliesTo?.(client.target) ?? true).map((c) => runCollector(c, ctx)));
    await client.close();
    expect(polled.every((r) => r.ok)).toBe(true);
    expect(Math.abs(cost.requests - s.counters.total) / s.counters.total).toBeLessThanOrEqual(0.1);
    // Series: what the real exporter serves for this server once every collector has polled.
    const exporter = await startExporterProcess(['--wowza.url', s.url, '--wowza.username', 'admin', '--poll.interval', '2s', '--wowza.timeout', '1s'], { WOWZA_PASSWORD: 'admin' });
    const text = await exporter.metrics();
    await exporter.stop();
    const series = text.split('\n').filter((l) => /^wowza_/.test(l) && !/^wowza_exporter_(api_requests_total|api_request_duration_seconds|concurrency_limit|build_info)/.test(l)).length;
    expect(Math.abs(cost.series - series) / series).toBeLessThanOrEqual(0.1);
  });

  it('finds the connectioncounts provider, says what it would save, and checks a configured one', async () => {
    // Behind a reverse proxy that serves the provider beside the REST API: found there, but serve would not look.
    const s = await sim({ auth: 'digest', adminAuth: 'digest', frozen: true, apps: 3, streams: 4 });
    const proxy = await proxyOf(s);
    const streams = s.topology.streams().length;
    const offered = byName(await doctor(target(proxy)), 'connectioncounts')!;
    expect(offered.status).toBe('warn');
    expect(offered.message).toContain(`offers connectioncounts at ${proxy}/connectioncounts (${streams} stream(s), `);
    expect(offered.fix).toContain(`--wowza.connectioncounts-url ${proxy}/connectioncounts`);
    expect(offered.fix).toContain(`viewers of ${streams} stream(s) in 1 request instead of ${streams}`);
    const used = byName(await doctor(target(s.url, { connectionCountsUrl: s.countsUrl })), 'connectioncounts')!;
    expect(used.status).toBe('pass');
    const wrong = byName(await doctor(target(s.url, { connectionCountsUrl: `${s.url}/nope` })), 'connectioncounts')!;
    expect(wrong.status).toBe('fail');
    expect(wrong.message).toMatch(/\/connectioncounts answered HTTP 404/);
    expect(wrong.fix).toMatch(/HTTPConnectionCountsXML/);
  });

  it('names the scheme of each port: a default install has REST on Basic and the admin port on Digest', async () => {
    const s = await sim({ auth: 'basic', adminAuth: 'digest', frozen: true, apps: 1, streams: 2 });
    const check = byName(await doctor(target(s.url, { connectionCountsUrl: s.countsUrl })), 'connectioncounts')!;
    expect(check.status).toBe('pass');
    const restPort = new URL(s.url).port;
    const adminPort = new URL(s.adminUrl).port;
    expect(check.message).toContain(`REST on :${restPort} uses Basic, :${adminPort} uses Digest`);
  });

  it('connectioncounts_url: off: the provider is not asked', async () => {
    const s = await sim({ auth: 'basic', frozen: true, apps: 1, streams: 2 });
    s.counters.reset();
    const check = byName(await doctor(target(s.url, { connectionCountsAuto: false })), 'connectioncounts')!;
    expect(check.status).toBe('pass');
    expect(check.message).toMatch(/connectioncounts_url is off/);
    expect(s.counters.route('GET /connectioncounts')).toBe(0);
  });

  it('a wrong password: the auth check fails and says to check the password', async () => {
    const s = await sim({ auth: 'digest' });
    const results = await doctor(target(s.url, { password: 'wrong-pa55' }));
    const auth = byName(results, 'auth')!;
    expect(auth.status).toBe('fail');
    expect(auth.message).toContain('wrong username or password: user "admin" was rejected with Digest');
    expect(auth.fix).toMatch(/password file/);
    expect(JSON.stringify(results)).not.toContain('wrong-pa55');
  });

  it('an endpoint answering 500 past authentication: the credentials pass, the failure is the endpoint\'s (issue 45: it said "wrong password")', async () => {
    const s = await sim({ auth: 'basic' });
    s.faults.inject('/v2/machine/monitoring/current', { type: 'status', status: 500, message: 'MachineMonitor unavailable' });
    const results = await doctor(target(s.url));
    expect(byName(results, 'auth')).toMatchObject({ status: 'pass', message: expect.stringContaining('Basic accepted for user') });
    expect(failed(results).map((r) => r.check)).toEqual(['discovery']);
    expect(byName(results, 'discovery')!.message).toContain('machine (/v2/machine/monitoring/current answered HTTP 500: MachineMonitor unavailable');
  });

  it('the wrong scheme forced: the auth check names the scheme to use', async () => {
    const s = await sim({ auth: 'digest' });
    const results = await doctor(target(s.url, { auth: 'basic' }));
    const auth = byName(results, 'auth')!;
    expect(auth.status).toBe('fail');
    expect(auth.message).toContain('auth is set to Basic but the server offers only Digest (Digest works with these credentials)');
    expect(auth.fix).toBe('use --wowza.auth digest or auto');
  });

  it('a wrong port (a web server that is not Wowza): the http check says so', async () => {
    const web: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><html><head><title>Welcome</title></head><body>It works</body></html>');
    });
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    opened.push({ close: () => new Promise((r) => web.close(r)) });
    const results = await doctor(target(`http://127.0.0.1:${(web.address() as AddressInfo).port}`));
    const http = byName(results, 'http')!;
    expect(http.status).toBe('fail');
    expect(http.message).toContain('with an HTML page: not the WSE REST API');
    expect(http.fix).toContain('REST port, 8087 by default');
    expect(byName(results, 'auth')).toBeUndefined();
  });

  it.skipIf(missingOpenssl('doctor with a self-signed certificate'))('a self-signed certificate: the tls check suggests --wowza.ca-file or --wowza.insecure-skip-verify', async () => {
    const cert = await selfSignedCert(mkdtempSync(join(tmpdir(), 'wowza-doctor-')), 'doctor');
    const s = await sim({ auth: 'basic', tls: { cert: cert.cert, key: cert.key } });
    const results = await doctor(target(s.url));
    const tls = byName(results, 'tls')!;
    expect(tls.status).toBe('fail');
    expect(tls.message).toContain('self-signed');
    expect(tls.fix).toContain('--wowza.ca-file');
    expect(tls.fix).toContain('--wowza.insecure-skip-verify');
    const trusted = await doctor(target(s.url, { tls: { caFile: cert.certPath } }));
    expect(failed(trusted)).toEqual([]);
  });

  it('a server that answers XML only: the content-type check explains the Accept header', async () => {
    const s = await sim({ auth: 'basic', xmlOnly: true });
    const results = await doctor(target(s.url));
    const ct = byName(results, 'content-type')!;
    expect(ct.status).toBe('fail');
    expect(ct.message).toBe('the server answered XML although Accept: application/json was sent');
    expect(ct.fix).toMatch(/proxy .* drops it/);
  });

  it('the CLI exits 0 when all pass, 1 otherwise, and --json is machine-readable', async () => {
    const s = await sim({ auth: 'basic' });
    const ok = await runCli(['doctor', '--wowza.url', s.url, '--wowza.username', 'admin'], { env: { WOWZA_PASSWORD: 'admin' } });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('✔ auth:');
    expect(ok.stdout).toContain('all checks passed');
    const bad = await runCli(['doctor', '--json', '--wowza.url', s.url, '--wowza.username', 'admin'], { env: { WOWZA_PASSWORD: 'nope-secret' } });
    expect(bad.code).toBe(1);
    const report = JSON.parse(bad.stdout) as { ok: boolean; servers: Array<{ results: CheckResult[] }> };
    expect(report.ok).toBe(false);
    expect(report.servers[0]!.results.at(-1)!.check).toBe('auth');
    expect(bad.stdout + bad.stderr).not.toContain('nope-secret');
  });
});
