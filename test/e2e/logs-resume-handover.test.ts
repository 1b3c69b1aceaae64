import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, writeLogsConfig, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

const ACCESS = 'wowzastreamingengine_access';

/** An HTTP log sink (JSON arrays of records) that can answer 503; records every `seq=N` it accepted. */
class HttpReceiver {
  unavailable = false;
  readonly arrivals = new Map<number, number>();
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (d: Buffer) => parts.push(d));
      req.on('end', () => {
        if (this.unavailable) {
          res.writeHead(503).end();
          return;
        }
        for (const r of JSON.parse(Buffer.concat(parts).toString('utf8')) as Array<Record<string, unknown>>) {
          const m = /^seq=(\d+)/.exec(String(r['x-comment']));
          if (m) this.arrivals.set(Number(m[1]), (this.arrivals.get(Number(m[1])) ?? 0) + 1);
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/logs`;
    return this;
  }

  missing(upTo: number): number[] {
    return Array.from({ length: upTo }, (_, i) => i + 1).filter((n) => !this.arrivals.has(n));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const record = (comment: string) => ({ 'x-event': 'play', 'x-category': 'stream', 'x-severity': 'INFO', 'x-comment': comment });

describe('log shipping across a restart and rotations (issue 32)', () => {
  let dir: string;
  let sim: Simulator;
  let receiver: HttpReceiver;
  let exporter: RunningExporter | undefined;
  let seq = 0;
  const write = (n: number, text = (s: number) => `seq=${s}`) => sim.logs.append(ACCESS, Array.from({ length: n }, () => record(text(++seq))));
  /** 200 lines the way the issue writes them: 150, 10 with UTF-8 comments, 3 of 10 KB, 37. */
  const write200 = () => {
    write(150);
    write(10, (s) => `seq=${s} ünïcødé 日本語 😀 ∑`);
    write(3, (s) => `seq=${s} ${'x'.repeat(10_000)}`);
    write(37);
  };
  const start = async (config: string) => {
    exporter = await startExporterProcess(['--config', config, '--no-collector.stream'], { WOWZA_PASSWORD: sim.password });
  };
  const everyLine = (what: string, timeoutMs = 20_000) =>
    waitFor(what, () => (receiver.missing(seq).length === 0 ? true : undefined), timeoutMs).catch((err: Error) => {
      throw new Error(`${err.message}: missing seq ${receiver.missing(seq).slice(0, 20).join(', ')}; output:\n${exporter?.output().slice(-3000)}`);
    });

  beforeEach(async (ctx) => {
    seq = 0;
    dir = mkdtempSync(join(tmpdir(), 'wowza-handover-'));
    // The first test's files all start within one second, as size rotations on a busy server do.
    const clock = ctx.task.name.startsWith('a file that rolls') ? () => Date.UTC(2025, 0, 14, 9, 30, 0) : undefined;
    sim = await startSimulator({ auth: 'basic', frozen: true, logs: { linesPerSecond: 0, ...(clock ? { clock } : {}) } });
    receiver = await new HttpReceiver().start();
  });
  afterEach(async () => {
    await exporter?.stop('SIGKILL');
    exporter = undefined;
    await receiver?.close();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a file that rolls while the rolled files are read after a resume is read too, from its first line', async () => {
    const config = writeLogsConfig(dir, sim, {
      start_at: 'beginning',
      follow_interval: '200ms',
      log_types: ['access'],
      positions_sync_interval: '100ms',
      sinks: [{ type: 'http', url: receiver.url }],
      batch: { max_lines: 200, max_wait: '200ms' },
    });
    await start(config);
    write(20);
    await everyLine('the first lines');
    await waitFor('their position saved', async () => ((samples(await exporter!.metrics(), 'wowza_log_follower_offset_bytes')[0]?.value ?? 0) > 0 ? true : undefined));
    await new Promise((r) => setTimeout(r, 300)); // two positions_sync_interval: the position is on disk
    await exporter!.stop('SIGKILL');

    // While no exporter runs: more lines in the file it was reading, a rotation, lines in the new file. Every
    // file starts in the same second, so only their first lines tell them apart.
    write(20);
    sim.logs.rotate(ACCESS);
    write200();
    // The restarted follower reads the new file's head, then lists the rolled files; right then the new file
    // rolls too and a third one fills. Before the fix the follower took the second file for the current one
    // (it had its head), read the third from offset 0 under the second's name without comparing heads, and never
    // read the second's lines.
    sim.faults.inject('GET /v2/servers/{server}/logfiles', {
      type: 'before',
      run: () => {
        sim.logs.rotate(ACCESS);
        write200();
      },
    }, { times: 1 });
    await start(config);
    await everyLine('every line after the restart');
    const metrics = await exporter!.metrics();
    expect(samples(metrics, 'wowza_log_rotation_gaps_total')[0]?.value ?? 0).toBe(0);
    expect(sim.logs.files().filter((f) => f.logType === ACCESS && !f.current)).toHaveLength(2);
  }, 60_000);

  it("the issue's sequence: a 503 outage, rotations, SIGKILL and a restart lose nothing", async () => {
    const config = writeLogsConfig(dir, sim, {
      start_at: 'beginning',
      follow_interval: '1s',
      log_types: ['access'],
      sinks: [{ type: 'http', url: receiver.url }],
      batch: { max_lines: 200, max_wait: '500ms' },
    });
    // The server's steady 20 lines a second, beside the batches below.
    const steady = setInterval(() => write(1, (s) => `seq=${s} steady`), 50);
    try {
      await start(config);
      receiver.unavailable = true;
      write200();
      await new Promise((r) => setTimeout(r, 6000));
      // The lines read and refused for 6 s show as a delivery that waits.
      expect(samples(await exporter!.metrics(), 'wowza_log_follower_oldest_unacked_seconds', { log_type: ACCESS })[0]?.value).toBeGreaterThan(2);
      receiver.unavailable = false;
      sim.logs.rotate(ACCESS);
      write200();
      write200();
      await exporter!.stop('SIGKILL');
      sim.logs.rotate(ACCESS);
      write200();
      await start(config);
      write200();
    } finally {
      clearInterval(steady);
    }
    const last = seq;
    await everyLine('every line, the last within 10 s', 10_000);
    expect(receiver.arrivals.has(last)).toBe(true);
    await waitFor('nothing waiting for delivery', async () => (samples(await exporter!.metrics(), 'wowza_log_follower_oldest_unacked_seconds', { log_type: ACCESS })[0]?.value === 0 ? true : undefined));
  }, 60_000);
});
