import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { CLI } from '../helpers/exporter-process.js';
import { missingOpenssl, selfSignedCert } from '../helpers/faults-tls.js';
import { freePort, waitFor } from '../helpers/ports.js';

describe.skipIf(missingOpenssl('the --web.config.file end-to-end test'))('--web.config.file: TLS and basic auth on the real exporter', () => {
  let sim: Simulator;
  let proc: ReturnType<typeof spawn>;
  let url: string;
  let agent: Agent;
  let output = '';

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wowza-web-'));
    const cert = await selfSignedCert(dir, 'exporter');
    const hash = bcrypt.hashSync('scrape-pa55', 4);
    writeFileSync(join(dir, 'web.yml'), `tls_server_config:\n  cert_file: ${cert.certPath}\n  key_file: ${cert.keyPath}\nbasic_auth_users:\n  prometheus: ${hash}\n`);
    sim = await startSimulator({ auth: 'basic', frozen: true });
    const port = await freePort();
    url = `https://127.0.0.1:${port}`;
    proc = spawn(process.execPath, [CLI, 'serve', '--web.listen-address', `127.0.0.1:${port}`, '--web.config.file', join(dir, 'web.yml'), '--wowza.url', sim.url, '--wowza.username', 'admin', '--poll.interval', '2s', '--wowza.timeout', '1s'], {
      env: { ...process.env, WOWZA_PASSWORD: sim.password },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    agent = new Agent({ connect: { ca: cert.cert } });
    await waitFor(`exporter over TLS (${output.slice(-300)})`, async () => {
      const res = await request(`${url}/-/healthy`, { dispatcher: agent });
      await res.body.dump();
      return res.statusCode === 200 ? true : undefined;
    });
  });
  afterAll(async () => {
    proc?.kill('SIGTERM');
    await agent?.close();
    await sim?.close();
  });

  const get = async (path: string, auth?: string) => {
    const res = await request(`${url}${path}`, { dispatcher: agent, headers: auth ? { authorization: `Basic ${Buffer.from(auth).toString('base64')}` } : {} });
    return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
  };

  it('/metrics without credentials is 401, with them 200, over TLS', async () => {
    const anon = await get('/metrics');
    expect(anon.status).toBe(401);
    expect(anon.headers['www-authenticate']).toMatch(/^Basic/);
    expect((await get('/metrics', 'prometheus:wrong')).status).toBe(401);
    const ok = await get('/metrics', 'prometheus:scrape-pa55');
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('wowza_up');
  });

  it('protects the status page and its JSON like every other endpoint', async () => {
    for (const path of ['/', '/api/v1/status', '/favicon.ico']) expect((await get(path)).status, path).toBe(401);
    const page = await get('/', 'prometheus:scrape-pa55');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'/);
    const status = await get('/api/v1/status', 'prometheus:scrape-pa55');
    expect(status.status).toBe(200);
    expect(JSON.parse(status.body).servers.length).toBe(1);
  });

  it('answers the shipped Kubernetes probes without credentials (kubelet sends none), and nothing else', async () => {
    const deployment = parse(readFileSync(new URL('../../deploy/kubernetes/deployment.yaml', import.meta.url), 'utf8')) as {
      spec: { template: { spec: { containers: Array<Record<string, { httpGet?: { path: string } } | undefined>> } } };
    };
    const container = deployment.spec.template.spec.containers[0]!;
    const paths = ['startupProbe', 'livenessProbe', 'readinessProbe'].map((p) => container[p]!.httpGet!.path);
    expect(new Set(paths)).toEqual(new Set(['/-/healthy', '/-/ready']));
    await waitFor('ready without credentials', async () => ((await get('/-/ready')).status === 200 ? true : undefined));
    for (const path of paths) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.body).toMatch(/^(OK|ready)\n$/);
    }
    // Only those two: a path below them, or with a query, is guarded like the rest.
    expect((await get('/-/healthy/x')).status).toBe(401);
    expect((await get('/-/reload')).status).toBe(401);
  });

  it('protects /probe too, and plain HTTP is not served', async () => {
    expect((await get('/probe?target=http://127.0.0.1:1&module=default')).status).toBe(401);
    await expect(fetch(url.replace('https', 'http') + '/metrics')).rejects.toThrow();
    expect(output).not.toContain('scrape-pa55');
  });
});
