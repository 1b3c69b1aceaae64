import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { startExporterProcess, writeLogsConfig, type RunningExporter } from '../helpers/exporter-process.js';
import { startLokiReceiver, type LokiReceiver } from '../helpers/loki-receiver.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 10 acceptance: a log-shipping run stopped with SIGTERM mid-stream exits 0, loses no line and
 * restarts exactly where it stopped: not one line twice. Positions are synced only every 30 s here, so
 * what the restart resumes from is what the shutdown saved.
 */

const ACCESS = 'wowzastreamingengine_access';
const TOTAL = 4_000;
const RATE = 500;

describe('SIGTERM stops log shipping without losing or repeating a line', () => {
  let dir: string;
  let sim: Simulator;
  let receiver: LokiReceiver;
  let config: string;
  let written = 0;
  let timer: NodeJS.Timeout | undefined;
  let exporter: RunningExporter | undefined;
  const exitCodes: Array<number | null> = [];
  let outputs = '';

  /** Sequence numbers in the order the receiver accepted them. */
  const delivered = () =>
    receiver.lines.map((l) => /"x-comment":"seq=(\d+)"/.exec(l.line)).flatMap((m) => (m ? [Number(m[1])] : []));
  const until = (what: string, check: () => boolean) =>
    waitFor(what, () => (check() ? true : undefined), 20_000, 20).catch((err: Error) => {
      throw new Error(`${err.message}; written ${written}, delivered ${delivered().length}; output:\n${(outputs + (exporter?.output() ?? '')).slice(-3000)}`);
    });
  const start = async () => {
    exporter = await startExporterProcess(['--config', config], { WOWZA_PASSWORD: sim.password });
  };
  const terminate = async () => {
    exitCodes.push(await exporter!.stop('SIGTERM'));
    outputs += exporter!.output();
    exporter = undefined;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-logs-sigterm-'));
    sim = await startSimulator({ auth: 'basic', frozen: true, logs: { linesPerSecond: 0 } });
    receiver = await startLokiReceiver();
    config = writeLogsConfig(dir, sim, {
      positions_sync_interval: '30s',
      follow_interval: '200ms',
      line_count: 200,
      start_at: 'beginning',
      log_types: ['access'],
      sinks: [{ type: 'loki', url: receiver.url }],
      batch: { max_lines: 200, max_wait: '200ms' },
      retry: { min_backoff: '100ms', max_backoff: '1s' },
      drain_timeout: '5s',
    });
    timer = setInterval(() => {
      const n = Math.min(RATE / 20, TOTAL - written);
      sim.logs.append(
        ACCESS,
        Array.from({ length: n }, (_, i) => ({ 'x-event': 'play', 'x-category': 'stream', 'x-severity': 'INFO', 'x-comment': `seq=${written + i + 1}`, 'sc-bytes': 100 })),
      );
      written += n;
    }, 50);

    await start();
    for (const stopAt of [600, 1_600]) {
      // Mid-stream: lines are being written, read and sent when the signal arrives.
      await until(`${stopAt} lines delivered mid-stream`, () => delivered().length >= stopAt && written > delivered().length + 20);
      await terminate();
      await start();
    }
    await until('every line delivered', () => written === TOTAL && new Set(delivered()).size === TOTAL);
    await terminate();
  }, 60_000);

  afterAll(async () => {
    clearInterval(timer);
    await exporter?.stop('SIGKILL');
    await receiver?.close();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('exits 0 on every SIGTERM', () => {
    expect(exitCodes).toEqual([0, 0, 0]);
    expect(outputs.match(/log shipping stopped/g)).toHaveLength(3);
    expect(outputs.match(/resuming log from saved position/g)).toHaveLength(2);
  });

  it('delivers every line exactly once, in order, across the restarts', () => {
    const seqs = delivered();
    expect(seqs.length).toBe(TOTAL);
    expect(seqs).toEqual(Array.from({ length: TOTAL }, (_, i) => i + 1));
    expect(receiver.rejections).toEqual([]);
  });

  it('leaves the positions file at the end of the log: nothing is left to read', () => {
    const saved = JSON.parse(readFileSync(join(dir, 'positions.json'), 'utf8')) as { positions: Array<{ log_type: string; offset: number }> };
    const access = saved.positions.find((p) => p.log_type === ACCESS);
    expect(access?.offset).toBe(sim.logs.bytes(ACCESS).length);
  });
});

describe('SIGTERM while the receiver is down', () => {
  let dir: string;
  let sim: Simulator;
  let receiver: LokiReceiver;
  let exporter: RunningExporter | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-logs-sigterm-down-'));
    sim = await startSimulator({ auth: 'basic', frozen: true, logs: { linesPerSecond: 0 } });
    receiver = await startLokiReceiver();
  });
  afterAll(async () => {
    await exporter?.stop('SIGKILL');
    await receiver?.close();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('gives up after drain_timeout, exits 0, and the next start delivers what was held, once', async () => {
    const config = writeLogsConfig(dir, sim, {
      follow_interval: '200ms',
      start_at: 'beginning',
      log_types: ['access'],
      sinks: [{ type: 'loki', url: receiver.url }],
      batch: { max_wait: '200ms' },
      retry: { min_backoff: '100ms', max_backoff: '500ms' },
      drain_timeout: '1s',
    });
    await receiver.down('unavailable');
    sim.logs.append(ACCESS, Array.from({ length: 500 }, (_, i) => ({ 'x-event': 'play', 'x-severity': 'INFO', 'x-comment': `seq=${i + 1}` })));
    exporter = await startExporterProcess(['--config', config], { WOWZA_PASSWORD: sim.password });
    await waitFor('a push refused with 503', () => (receiver.unavailableAnswers > 0 ? true : undefined), 45_000, 20);

    const stoppingAt = Date.now();
    expect(await exporter.stop('SIGTERM')).toBe(0);
    expect(Date.now() - stoppingAt).toBeLessThan(5_000);
    expect(exporter.output()).toContain('sink did not take every line before the shutdown deadline');

    await receiver.up();
    exporter = await startExporterProcess(['--config', config], { WOWZA_PASSWORD: sim.password });
    const seqs = () => receiver.lines.map((l) => /"x-comment":"seq=(\d+)"/.exec(l.line)).flatMap((m) => (m ? [Number(m[1])] : []));
    await waitFor('all 500 lines delivered', () => (seqs().length >= 500 ? true : undefined), 45_000, 20);
    expect(await exporter.stop('SIGTERM')).toBe(0);
    expect(seqs()).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    expect(receiver.rejections).toEqual([]);
  }, 30_000);
});
