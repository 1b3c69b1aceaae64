import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { CLI, samples } from '../helpers/exporter-process.js';
import { freePort, waitFor } from '../helpers/ports.js';

/**
 * Issue 41: 700 idle connections to an exporter under `ulimit -n 512` used up its file descriptors, and from then on
 * every health probe was accepted and dropped at once. The exporter now caps its connections below the descriptor
 * limit and closes the longest-idle one to make room for a new one.
 */

const IDLE = 700;

/** `serve` under `ulimit -n 512`, as a container or unit with a low descriptor limit runs it. */
async function startLimited(sim: Simulator, extra: string[] = []): Promise<{ proc: ChildProcess; url: string; port: number; output: () => string }> {
  const port = await freePort();
  const args = [CLI, 'serve', '--web.listen-address', `127.0.0.1:${port}`, '--wowza.url', sim.url, '--wowza.username', sim.username, '--wowza.auth', 'basic', ...extra];
  const proc = spawn('sh', ['-c', 'ulimit -n 512 && exec "$@"', 'sh', process.execPath, ...args], { env: { ...process.env, WOWZA_PASSWORD: sim.password }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`exporter on ${url}`, async () => {
    if (proc.exitCode !== null) throw new Error(`exporter exited with ${proc.exitCode}: ${out.slice(-2000)}`);
    return (await fetch(`${url}/-/ready`)).status === 200 ? true : undefined;
  }, 60_000);
  return { proc, url, port, output: () => out };
}

/** Opens `count` connections that never send a byte; resolves once each has connected or been closed. */
async function openIdle(port: number, count: number): Promise<Socket[]> {
  const sockets: Socket[] = [];
  const settled: Array<Promise<void>> = [];
  for (let i = 0; i < count; i++) {
    const s = connect(port, '127.0.0.1');
    sockets.push(s);
    settled.push(new Promise<void>((resolve) => {
      s.once('connect', () => resolve());
      s.once('close', () => resolve());
      s.on('error', () => resolve());
    }));
    // A few at a time: the listen backlog is not what is under test.
    if (i % 50 === 49) await Promise.all(settled.slice(-50));
  }
  await Promise.all(settled);
  return sockets;
}

/** Opens `count` keep-alive connections that each ask /-/healthy once and then stay open, idle. */
async function openUsed(port: number, count: number): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i++) {
    const s = connect(port, '127.0.0.1');
    sockets.push(s);
    s.on('error', () => undefined);
    await new Promise<void>((resolve) => {
      s.once('data', () => resolve());
      s.once('close', () => resolve());
      s.once('connect', () => s.write('GET /-/healthy HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
    });
  }
  return sockets;
}

async function healthy(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/-/healthy`, { signal: AbortSignal.timeout(10_000) });
    return res.status === 200 && (await res.text()) === 'OK\n';
  } catch {
    return false;
  }
}

describe('many idle connections under a low descriptor limit', () => {
  let sim: Simulator;
  let dir: string;
  const stops: Array<() => void> = [];
  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic' });
    dir = mkdtempSync(join(tmpdir(), 'wowza-connection-cap-'));
  });
  afterAll(async () => {
    for (const stop of stops) stop();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`${IDLE} idle connections with ulimit -n 512: /-/healthy still answers, and the shedding is counted`, async () => {
    const exporter = await startLimited(sim);
    stops.push(() => exporter.proc.kill());
    const idle = await openIdle(exporter.port, IDLE);
    stops.push(() => idle.forEach((s) => s.destroy()));
    const answers: boolean[] = [];
    for (let i = 0; i < 10; i++) answers.push(await healthy(exporter.url));
    expect(answers.filter(Boolean).length, exporter.output().slice(-2000)).toBe(10);
    const text = await (await fetch(`${exporter.url}/metrics`)).text();
    expect(samples(text, 'wowza_exporter_http_max_connections')[0]?.value).toBe(256);
    expect(samples(text, 'wowza_exporter_http_connections_shed_total', { reason: 'idle' })[0]?.value).toBeGreaterThanOrEqual(IDLE - 256);
    expect(exporter.proc.exitCode).toBeNull();
  }, 120_000);

  it('web.max_connections sets the cap; a connection in the middle of a request is never the one closed', async () => {
    // The webhook receiver reads an event's body before it answers: a request whose body is still coming is busy.
    const config = join(dir, 'webhooks.yaml');
    writeFileSync(config, 'webhooks: {enabled: true, insecure_allow_unauthenticated: true}\n');
    const exporter = await startLimited(sim, ['--config', config, '--web.max-connections', '20']);
    stops.push(() => exporter.proc.kill());
    const port = exporter.port;
    const busy = connect(port, '127.0.0.1');
    stops.push(() => busy.destroy());
    let busyClosed = false;
    let busyAnswer = '';
    busy.on('close', () => (busyClosed = true));
    busy.on('data', (d: Buffer) => (busyAnswer += d.toString()));
    busy.on('error', () => undefined);
    await new Promise<void>((r) => busy.once('connect', () => r()));
    const event = JSON.stringify({ name: 'stream.started', id: 'busy-1', timestamp: Date.now(), source: 'test', data: {} });
    busy.write(`POST /webhooks/wowza HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${event.length}\r\n\r\n${event.slice(0, 10)}`);
    // Time for a loaded machine to parse the headers and start the request: from then on it is busy.
    await new Promise((r) => setTimeout(r, 1000));
    // Keep-alive connections that have been answered: idle for less time than the busy one has been open, so only
    // its request keeps it from being the first to go.
    const used = await openUsed(port, 60);
    stops.push(() => used.forEach((s) => s.destroy()));
    expect(await healthy(exporter.url)).toBe(true);
    const text = await (await fetch(`${exporter.url}/metrics`)).text();
    expect(samples(text, 'wowza_exporter_http_max_connections')[0]?.value).toBe(20);
    expect(samples(text, 'wowza_exporter_http_connections_shed_total', { reason: 'idle' })[0]?.value).toBeGreaterThanOrEqual(40);
    expect(busyClosed).toBe(false);
    // The busy request still completes: its answer comes once the rest of the body does.
    busy.write(event.slice(10));
    await waitFor('the webhook answer on the busy connection', () => (busyAnswer.startsWith('HTTP/1.1 ') ? true : undefined), 30_000);
    expect(busyClosed).toBe(false);
  }, 120_000);
});
