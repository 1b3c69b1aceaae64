import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * How `serve` ends: SIGTERM and SIGINT stop it cleanly (polling stopped, sinks flushed, positions saved,
 * exit 0) within a bounded time; a second signal during a slow shutdown exits at once; and nothing
 * else — failing servers, sinks or clients, a closed output pipe — makes it exit.
 */

const PASSWORD = 'lifecycle-password';
const ACCESS = 'wowzastreamingengine_access';

/** A loopback Loki that accepts connections and never answers: a sink stuck in flight. */
async function hangingLoki(): Promise<{ url: string; pushes: () => number; close(): Promise<void> }> {
  let pushes = 0;
  const server: Server = createServer(() => {
    pushes++;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pushes: () => pushes,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

interface Positions {
  positions: Array<{ server: string; log_type: string; offset: number }>;
}

describe('serve lifecycle', () => {
  let dir: string;
  let sim: Simulator;
  let loki: Awaited<ReturnType<typeof hangingLoki>>;
  const running: RunningExporter[] = [];
  let runs = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-lifecycle-'));
    sim = await startSimulator({ auth: 'basic', password: PASSWORD, logs: { linesPerSecond: 20 } });
    loki = await hangingLoki();
  });
  afterEach(async () => {
    for (const e of running.splice(0)) await e.stop('SIGKILL');
  });
  afterAll(async () => {
    await sim?.close();
    await loki?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Starts `serve` following the simulator's logs into `sinks`; each run gets its own files. */
  async function start(logs: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    const run = ++runs;
    const files = { positions: join(dir, `positions-${run}.json`), records: join(dir, `records-${run}.ndjson`), deadLetter: join(dir, `dead-${run}.ndjson`) };
    const config = join(dir, `config-${run}.yaml`);
    writeFileSync(
      config,
      stringify({
        servers: [{ name: 'wse', url: sim.url, username: 'admin', auth: 'basic' }],
        poll: { interval: '1s', timeout: '800ms' },
        logs: {
          positions_file: files.positions,
          dead_letter_file: files.deadLetter,
          follow_interval: '200ms',
          start_at: 'beginning',
          batch: { max_wait: '200ms' },
          sinks: [{ type: 'file', path: files.records }],
          ...logs,
        },
        ...extra,
      }),
    );
    const exporter = await startExporterProcess(['--config', config], { WOWZA_PASSWORD: PASSWORD });
    running.push(exporter);
    return { exporter, files };
  }

  const recordsIn = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((l) => l !== '').length : 0);

  /** Sends `signal` and resolves with the exit code and how long the process took to go. */
  async function stopTimed(exporter: RunningExporter, signal: NodeJS.Signals): Promise<{ code: number | null; ms: number }> {
    const started = Date.now();
    const code = await exporter.stop(signal);
    return { code, ms: Date.now() - started };
  }

  it.each(['SIGTERM', 'SIGINT'] as const)('%s: flushes the sinks, saves positions and exits 0 within 5 s', async (signal) => {
    const { exporter, files } = await start({ log_types: [ACCESS] });
    await waitFor('records in the file sink', () => (recordsIn(files.records) > 20 ? true : undefined));

    const { code, ms } = await stopTimed(exporter, signal);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(5_000);
    // The saved position is exactly past the last line the sink holds: nothing read is lost or sent twice.
    const saved = (JSON.parse(readFileSync(files.positions, 'utf8')) as Positions).positions.find((p) => p.log_type === ACCESS);
    expect(saved?.offset).toBeGreaterThan(0);
    const upToPosition = sim.logs.bytes(ACCESS).subarray(0, saved!.offset).toString('utf8');
    const linesBefore = upToPosition.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
    expect(upToPosition.endsWith('\n')).toBe(true);
    expect(recordsIn(files.records)).toBe(linesBefore);
    const log = exporter.output();
    expect(log).toContain(`"signal":"${signal}"`);
    expect(log).toMatch(/"msg":"log shipping stopped"/);
    expect(log).toMatch(/"msg":"stopped"/);
  });

  it('a second signal during a slow shutdown exits at once, with a non-zero code', async () => {
    // The Loki push never gets an answer and the drain may take 30 s: the first SIGTERM waits for it.
    const { exporter } = await start({ drain_timeout: '30s', sinks: [{ type: 'loki', url: loki.url, timeout: '30s' }] });
    await waitFor('a push in flight to the hanging Loki', () => (loki.pushes() > 0 ? true : undefined));
    exporter.proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(exporter.proc.exitCode, 'the first signal should still be draining').toBeNull();

    const { code, ms } = await stopTimed(exporter, 'SIGINT');
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(ms).toBeLessThan(1_000);
    expect(exporter.output()).toMatch(/second signal: exiting now/);
  });

  it('a hung sink holds the shutdown no longer than drain_timeout', async () => {
    // Counted before the start: the first push may leave before the exporter says it is ready.
    const before = loki.pushes();
    const { exporter } = await start({ drain_timeout: '1s', sinks: [{ type: 'loki', url: loki.url, timeout: '30s' }] });
    await waitFor('a push in flight to the hanging Loki', () => (loki.pushes() > before ? true : undefined));
    const { code, ms } = await stopTimed(exporter, 'SIGTERM');
    expect(code).toBe(0);
    expect(ms).toBeLessThan(5_000);
    expect(exporter.output()).toMatch(/did not take every line before the shutdown deadline/);
  });

  it('keeps running through failing servers, sinks and clients, and a closed log pipe', async () => {
    // A Loki that cuts every connection, and a file sink beside it.
    const resetting = createServer((req) => req.socket.destroy());
    await new Promise<void>((r) => resetting.listen(0, '127.0.0.1', r));
    try {
      const { exporter } = await start(
        { sinks: [{ type: 'file', path: join(dir, 'reset-records.ndjson') }, { type: 'loki', name: 'cut', url: `http://127.0.0.1:${(resetting.address() as AddressInfo).port}` }], retry: { min_backoff: '50ms', max_backoff: '100ms', max_retries: 1 } },
        {
          webhooks: { enabled: true, insecure_allow_unauthenticated: true },
          modules: { default: { username: 'admin', auth: 'basic', allowed_targets: [sim.url.replace(/\./g, '\\.')] } },
        },
      );
      // The Wowza API fails in every way it can.
      for (const fault of ['reset', 'garbage', 'html', 'hang'] as const) {
        sim.faults.inject('/v2/machine/monitoring/current', fault, { times: 2 });
      }
      sim.faults.inject('*', 'reset', { times: 5 });
      // Clients that hang up mid-request: a probe (the target hangs), a webhook body, a scrape.
      sim.faults.inject('*', 'hang', { times: 3 });
      const aborted = new AbortController();
      const probe = fetch(`${exporter.url}/probe?target=${encodeURIComponent(sim.url)}`, { signal: aborted.signal }).catch(() => undefined);
      setTimeout(() => aborted.abort(), 200);
      await probe;
      const socket = connect(exporter.port, '127.0.0.1');
      await new Promise<void>((r) => socket.on('connect', r));
      socket.write('POST /webhooks/wowza HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"id":');
      socket.destroy();
      for (let i = 0; i < 5; i++) {
        const c = new AbortController();
        const scrape = fetch(`${exporter.url}/metrics`, { signal: c.signal, headers: { 'accept-encoding': 'gzip' } }).catch(() => undefined);
        c.abort();
        await scrape;
      }
      // Whoever read its log went away (a pager quit, a collector restarted).
      exporter.proc.stderr!.destroy();
      await waitFor('the Loki sink failing for good at least once', async () => ((await (await fetch(`${exporter.url}/metrics`)).text()).match(/wowza_log_forward_failures_total\{[^}]*sink="cut"[^}]*\} [1-9]/) ? true : undefined));
      sim.faults.clear();
      await new Promise((r) => setTimeout(r, 1_500));

      expect(exporter.proc.exitCode).toBeNull();
      expect((await fetch(`${exporter.url}/-/healthy`)).status).toBe(200);
      expect((await fetch(`${exporter.url}/metrics`)).status).toBe(200);
      expect((await stopTimed(exporter, 'SIGTERM')).code).toBe(0);
    } finally {
      resetting.closeAllConnections();
      await new Promise((r) => resetting.close(r));
    }
  });

  it('keeps running when the reader of its stdout sink goes away (`serve | head`)', async () => {
    const { exporter } = await start({ sinks: [{ type: 'stdout' }] });
    await waitFor('records on stdout', () => (exporter.output().includes('"log_type":"wowzastreamingengine_access"') ? true : undefined));
    exporter.proc.stdout!.destroy();
    await new Promise((r) => setTimeout(r, 2_000));
    expect(exporter.proc.exitCode, exporter.output().slice(-1500)).toBeNull();
    expect((await fetch(`${exporter.url}/-/healthy`)).status).toBe(200);
    expect((await stopTimed(exporter, 'SIGTERM')).code).toBe(0);
  });
});
