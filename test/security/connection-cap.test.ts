import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { RESERVE, WRITE_DEADLINE_MS, type ShedReason } from '../../src/http/connection-cap.js';
import { sendText, startExporterServer, type RouteHandler } from '../../src/http/server.js';
import { silentLogger } from '../../src/base/logger.js';
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
    // Every connection over the cap is shed and counted: the longest-idle one to make room for a newer one, or, when
    // the flood found every fresh one still too young, from the reserve once it sent no request for 2 s (refused).
    await waitFor('every connection over the cap shed', async () => {
      const text = await (await fetch(`${exporter.url}/metrics`)).text();
      expect(samples(text, 'wowza_exporter_http_max_connections')[0]?.value).toBe(256);
      const shed = (reason: string) => samples(text, 'wowza_exporter_http_connections_shed_total', { reason })[0]?.value ?? 0;
      return shed('idle') + shed('refused') >= IDLE - 256 ? true : undefined;
    }, 30_000);
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

/**
 * Issue 47: with the cap at 64, clients that asked for a large /metrics and never read the answer held every slot
 * with a young request, and the exporter refused 87 of 151 health checks and 3 of 8 scrapes. Health checks now have a
 * reserve over the cap, an answer that does not move makes room and is cut off after WRITE_DEADLINE_MS, and a scrape
 * over the cap waits for a slot.
 */
describe('clients that ask for a large /metrics and never read it', () => {
  const MAX = 64;
  const ATTACKERS = 70;
  const PROBES = 100;
  /** Larger than what loopback's socket buffers take from a client that reads nothing (about 4 MB). */
  const BODY = Buffer.alloc(8 * 1024 * 1024, '#');

  /** GET over a connection of its own, as kubelet probes and Prometheus (here) open them: status and body length. */
  function getOwn(url: string, path: string, timeoutMs: number): Promise<{ status: number; bytes: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = get(`${url}${path}`, { agent: false, timeout: timeoutMs }, (res) => {
        let bytes = 0;
        let body = '';
        res.on('data', (d: Buffer) => {
          bytes += d.length;
          if (body.length < 100) body += d.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, body }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
    });
  }

  it(`cap ${MAX}, ${ATTACKERS} non-readers that come back when cut off: ${PROBES} of ${PROBES} health checks answer, non-readers are cut off and counted, scrapes succeed`, async () => {
    const shed: Record<ShedReason, number> = { idle: 0, slow_reader: 0, stalled: 0, refused: 0 };
    const routes = new Map<string, RouteHandler>([
      [
        '/metrics',
        (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/plain', 'content-length': BODY.length });
          res.end(BODY);
        },
      ],
      ['/-/healthy', (_req, res) => sendText(res, 200, 'OK\n')],
    ]);
    const exporter = await startExporterServer({
      listen: [{ address: '127.0.0.1:0' }],
      logger: silentLogger(),
      routes,
      links: [],
      maxConnections: MAX,
      onConnectionShed: (reason) => shed[reason]++,
    });
    const port = Number(new URL(exporter.url).port);

    // The attackers' connections as the server sees them: a client that does not read never learns its connection
    // was closed, so the test tells it (and it comes back, as a determined attacker would). Attackers connect from
    // 127.0.0.2, so their port names their connection; a port is used again only once its attacker was told.
    const ATTACKER_ADDRESS = '127.0.0.2';
    /** Ports whose connection the server closed before its attacker saw it connected. */
    const closedEarly = new Set<number>();
    const attackerAt = new Map<number, () => void>();
    let attackerConnections = 0;
    let attackersClosedByServer = 0;
    exporter.servers[0]!.prependListener('connection', (s: Socket) => {
      if (s.remoteAddress !== ATTACKER_ADDRESS) return;
      const remote = s.remotePort!;
      s.once('close', () => {
        const cutOff = attackerAt.get(remote);
        if (cutOff) cutOff();
        else closedEarly.add(remote);
      });
    });
    let attacking = true;
    const open = new Set<Socket>();
    const attack = () => {
      if (!attacking) return;
      const s = connect({ port, host: '127.0.0.1', localAddress: ATTACKER_ADDRESS });
      s.pause(); // never reads
      s.on('error', () => undefined);
      open.add(s);
      s.once('connect', () => {
        const local = s.localPort!;
        attackerConnections++;
        let over = false;
        const cutOff = () => {
          if (over) return;
          over = true;
          attackersClosedByServer++;
          attackerAt.delete(local);
          open.delete(s);
          s.destroy();
          setTimeout(attack, 100 + Math.random() * 100);
        };
        if (closedEarly.delete(local)) cutOff();
        else {
          attackerAt.set(local, cutOff);
          s.write('GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n');
        }
      });
    };
    try {
      for (let i = 0; i < ATTACKERS; i++) attack();

      // Health checks every 100-250 ms, each on a connection of its own with a 3 s timeout; three reading scrapes
      // in between.
      const probes: Array<Promise<string>> = [];
      const scrapes: Array<Promise<{ status: number; bytes: number }>> = [];
      for (let i = 0; i < PROBES; i++) {
        probes.push(getOwn(exporter.url, '/-/healthy', 3000).then((r) => (r.status === 200 && r.body === 'OK\n' ? 'ok' : `status ${r.status}`), (err: Error) => err.message));
        if (i % 33 === 10) scrapes.push(getOwn(exporter.url, '/metrics', 60_000));
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 150));
      }
      const answers = await Promise.all(probes);
      const failed = answers.filter((a) => a !== 'ok');
      expect(failed, `${failed.length} of ${PROBES} health checks failed; shed ${JSON.stringify(shed)}`).toEqual([]);
      for (const scrape of await Promise.all(scrapes)) expect(scrape).toEqual({ status: 200, bytes: BODY.length, body: expect.any(String) });

      // The attack stops: what non-readers are left are cut off at the write deadline, each counted.
      attacking = false;
      const left = open.size;
      const slowBefore = shed.slow_reader;
      expect(left).toBeGreaterThan(RESERVE);
      await waitFor('every non-reader cut off', () => (open.size === 0 ? true : undefined), 2 * WRITE_DEADLINE_MS + 30_000, 100);
      // Those holding a slot (all but at most a reserve's worth) were cut off as slow readers.
      expect(shed.slow_reader - slowBefore).toBeGreaterThanOrEqual(left - RESERVE);
      expect(attackersClosedByServer).toBe(attackerConnections);
      // Each was counted (besides them, at most a health check or scrape connection idle after its answer).
      expect(shed.idle + shed.slow_reader + shed.stalled + shed.refused).toBeGreaterThanOrEqual(attackersClosedByServer);
    } finally {
      attacking = false;
      for (const s of open) s.destroy();
      await exporter.close();
    }
  }, 240_000);
});
