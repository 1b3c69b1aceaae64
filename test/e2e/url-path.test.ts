import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { runCli, samples, startExporterProcess } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 45: `--wowza.url http://host:8087/sub/path` polled `/v2/...` at the root and said wowza_up 1. A URL's path is
 * the REST API's base (a server behind a reverse proxy under a prefix): asked there, never dropped.
 */
describe('a server URL with a path', () => {
  let sim: Simulator;
  let proxy: Server;
  let proxyUrl: string;
  const asked: string[] = [];

  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic', password: 'path-pw' });
    const target = new URL(sim.url);
    // A reverse proxy that serves the simulator under /wowza-7 and nothing at its root.
    proxy = createServer((req, res) => {
      asked.push(req.url ?? '');
      if (!req.url?.startsWith('/wowza-7/')) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>no such page</body></html>');
      const upstream = request({ host: target.hostname, port: target.port, path: req.url.slice('/wowza-7'.length), method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    proxy.closeAllConnections();
    await new Promise((r) => proxy.close(r));
    await sim.close();
  });

  /** An exporter polling the proxy under `path`; what the proxy was asked is counted from now. */
  const exporterAt = (path: string) => {
    asked.length = 0;
    return startExporterProcess(['--wowza.url', `${proxyUrl}${path}`, '--wowza.username', sim.username, '--wowza.connectioncounts-url', 'off'], { WOWZA_PASSWORD: 'path-pw' });
  };

  it('is the API base: every request goes under it, wowza_up is 1, and the server label ends with the path', async () => {
    const exporter = await exporterAt('/wowza-7/');
    try {
      const up = await waitFor('wowza_up', async () => samples(await exporter.metrics(), 'wowza_up')[0]);
      expect(up.labels.server).toBe(`${new URL(proxyUrl).host}/wowza-7`);
      await waitFor('wowza_up 1', async () => (samples(await exporter.metrics(), 'wowza_up')[0]?.value === 1 ? true : undefined));
      await waitFor('a stream polled', async () => (samples(await exporter.metrics(), 'wowza_stream_uptime_seconds').length > 0 ? true : undefined));
      expect(asked.length).toBeGreaterThan(0);
      expect(asked.filter((p) => !p.startsWith('/wowza-7/v2/'))).toEqual([]);
    } finally {
      await exporter.stop();
    }
  }, 60_000);

  it('a path that is not where the API is: wowza_up 0, with the 404 named, never the root polled instead', async () => {
    const exporter = await exporterAt('/elsewhere');
    try {
      const down = await waitFor('the server down line', () => exporter.output().split('\n').find((l) => l.includes('server down')));
      expect(down).toContain('404');
      expect(samples(await exporter.metrics(), 'wowza_up')[0]?.value).toBe(0);
      expect(asked.length).toBeGreaterThan(0);
      expect(asked.filter((p) => !p.startsWith('/elsewhere/v2/'))).toEqual([]);
    } finally {
      await exporter.stop();
    }
  }, 60_000);

  it('a query or fragment is refused with a clear error', async () => {
    const { code, stdout, stderr } = await runCli(['serve', '--wowza.url', 'http://wowza:8087/?x=1', '--config.check']);
    expect(code).toBe(1);
    expect(stdout + stderr).toMatch(/servers\[0\]\.url: must not carry a query or fragment/);
  });
});
