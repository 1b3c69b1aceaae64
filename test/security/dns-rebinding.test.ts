import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 41: with the lifecycle API on, a page served from a name that then resolves to the exporter (DNS rebinding)
 * could POST /-/reload: the browser sees one origin, so Sec-Fetch-Site and Origin say nothing, and any Host header
 * was accepted. Now a state-changing /-/ request must name the exporter: a listen address, localhost, or a name of
 * --web.allowed-hosts. Scrapes and health checks stay open to any name.
 */

/** A request with the Host header a rebinding browser sends (fetch will not let a caller set it). */
function send(port: number, method: string, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('DNS rebinding against the lifecycle API', () => {
  let sim: Simulator;
  let exporter: RunningExporter;
  const reloads = async () => samples(await exporter.metrics(), 'wowza_exporter_config_last_reload_success_timestamp_seconds')[0]?.value;

  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic' });
    exporter = await startExporterProcess(
      ['--wowza.url', sim.url, '--wowza.username', sim.username, '--wowza.auth', 'basic', '--web.enable-lifecycle', '--web.allowed-hosts', 'exporter.example.com,metrics.internal'],
      { WOWZA_PASSWORD: sim.password },
    );
  }, 90_000);
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
  });

  it('a POST /-/reload naming another host is refused with 403 and does not reload', async () => {
    const before = await reloads();
    for (const host of ['evil.example', `evil.example:${exporter.port}`, 'exporter.example.com.evil.example', '127.0.0.1.evil.example']) {
      const res = await send(exporter.port, 'POST', '/-/reload', host);
      expect(res.status, host).toBe(403);
      expect(res.body).toContain(`Host ${JSON.stringify(host)} is not a name of this exporter`);
      expect(res.body).toMatch(/web\.allowed_hosts/);
    }
    expect((await send(exporter.port, 'PUT', '/-/reload', 'evil.example')).status).toBe(403);
    expect(exporter.output()).toMatch(/refused a lifecycle request for another host name/);
    expect(exporter.output()).not.toMatch(/configuration reloaded/);
    expect(await reloads()).toBe(before);
  }, 60_000);

  it('a POST /-/reload to a listen address, localhost or a configured name reloads', async () => {
    for (const host of [`127.0.0.1:${exporter.port}`, '127.0.0.1', `localhost:${exporter.port}`, 'LocalHost', `[::1]:${exporter.port}`, 'exporter.example.com', `metrics.internal:${exporter.port}`]) {
      const before = await reloads();
      // The reload time has a resolution of a millisecond: two reloads in one would look like none.
      await new Promise((r) => setTimeout(r, 5));
      const res = await send(exporter.port, 'POST', '/-/reload', host);
      expect(res, host).toEqual({ status: 200, body: 'configuration reloaded\n' });
      await waitFor(`the reload for Host ${host} on /metrics`, async () => ((await reloads())! > before! ? true : undefined), 30_000);
    }
  }, 90_000);

  it('scrapes and health checks answer whatever name they are addressed to', async () => {
    for (const path of ['/metrics', '/-/healthy', '/-/ready', '/api/v1/status']) {
      expect((await send(exporter.port, 'GET', path, 'evil.example')).status, path).toBe(200);
    }
  }, 30_000);
});
