import { createServer, request, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { samples, startExporterProcess } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 31: the cheap source was off unless configured. A server without connectioncounts_url now has its default
 * provider (`<host>:8086/connectioncounts`, WSE's admin port) asked once at start, and used when it answers.
 * A stand-in listens on 127.0.0.1:8086 and hands the requests to the simulator's provider.
 */
const PORT = 8086;

async function portFree(port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

const free = await portFree(PORT);
if (!free) console.warn(`SKIPPED: 127.0.0.1:${PORT} is in use, so the default connectioncounts address cannot be stood in for`);

describe.skipIf(!free)('connectioncounts found at its default address', () => {
  let sim: Simulator;
  let provider: Server;
  let asked = 0;

  beforeAll(async () => {
    // A password of its own: every other simulator of the suite answers to admin/admin, and their exporters ask
    // 127.0.0.1:8086 too (test:busy once counted two of their requests here as this exporter's).
    sim = await startSimulator({ auth: 'basic', apps: 2, streams: 5, password: `detect-${process.pid}-${Date.now()}` });
    const upstream = new URL(sim.url);
    // Other suites' exporters running beside this one ask 127.0.0.1:8086 too: only this simulator's credentials
    // are passed on, so none of them finds a provider that is not theirs.
    const ours = `Basic ${Buffer.from(`${sim.username}:${sim.password}`).toString('base64')}`;
    provider = createServer((req, res) => {
      if (req.headers.authorization !== ours) {
        res.writeHead(req.headers.authorization ? 403 : 401, req.headers.authorization ? {} : { 'www-authenticate': 'Basic realm="Wowza"' }).end();
        return;
      }
      asked++;
      const forward = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: 'GET', headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forward.on('error', () => res.writeHead(502).end());
      forward.end();
    });
    await new Promise<void>((r) => provider.listen(PORT, '127.0.0.1', r));
  });
  afterAll(async () => {
    await new Promise((r) => provider?.close(r));
    await sim?.close();
  });

  it('a server with no connectioncounts setting uses the provider that answers on :8086', async () => {
    // 127.0.0.1 is the simulator's host, so its default provider address is the stand-in.
    const exporter = await startExporterProcess(['--wowza.url', sim.url.replace('localhost', '127.0.0.1'), '--wowza.username', sim.username, '--wowza.auth', 'basic', '--poll.interval', '1s'], { WOWZA_PASSWORD: sim.password });
    try {
      const text = await waitFor('the connectioncounts collector', async () => {
        const t = await exporter.metrics();
        return samples(t, 'wowza_exporter_collector_success', { collector: 'connectioncounts' })[0]?.value === 1 ? t : undefined;
      }, 20_000);
      expect(samples(text, 'wowza_stream_connections_current').length).toBeGreaterThan(0);
      const status = (await (await fetch(`${exporter.url}/api/v1/status`)).json()) as { servers: Array<{ viewers_from: { source: string; detected: boolean } }> };
      expect(status.servers[0]!.viewers_from).toMatchObject({ source: 'connectioncounts', detected: true });
      expect(exporter.output()).toMatch(/connectioncounts provider found/);
    } finally {
      await exporter.stop();
    }
  }, 40_000);

  it('connectioncounts_url: off never asks it', async () => {
    // A request the previous exporter sent just before it stopped may be counted after: wait until the count rests.
    await waitFor('the provider quiet for a second', async () => {
      const now = asked;
      await new Promise((r) => setTimeout(r, 1000));
      return asked === now ? true : undefined;
    });
    const before = asked;
    const exporter = await startExporterProcess(
      ['--wowza.url', sim.url, '--wowza.username', sim.username, '--wowza.auth', 'basic', '--wowza.connectioncounts-url', 'off', '--poll.interval', '1s'],
      { WOWZA_PASSWORD: sim.password },
    );
    try {
      const text = await exporter.metrics();
      expect(samples(text, 'wowza_exporter_collector_success', { collector: 'connectioncounts' })).toEqual([]);
      expect(asked).toBe(before);
    } finally {
      await exporter.stop();
    }
  }, 40_000);
});
