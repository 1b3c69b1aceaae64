import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, writeLogsConfig, type RunningExporter } from '../helpers/exporter-process.js';
import { startLokiReceiver, type LokiReceiver } from '../helpers/loki-receiver.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 41, finding 4: the sink queues were bounded in lines only. With 1 MiB log lines and a Loki answering 503,
 * the exporter read on into a queue of 10,000 lines and reached 1.6 GB of RSS in 7 s. Now each sink holds at most
 * max_queue_bytes (64 MiB by default): the follower stops reading, memory stays bounded, and every line arrives
 * once the sink is back.
 */

const ACCESS = 'wowzastreamingengine_access';
const LINE_BYTES = 1024 * 1024;
/** 256 MiB of log: held whole (a line costs its text and its Loki line, 2 MiB or more) it is over 500 MB. */
const LINES = 256;
/** How long the sink answers 503: the 60 s (the old build passed 300 MB within seconds). */
const OUTAGE_MS = 60_000;
const RSS_LIMIT_MB = 300;

function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/** A play line whose user agent is 1 MiB, numbered in x-comment. */
function bigRecord(seq: number) {
  const pad = `seq${seq}-`.padEnd(LINE_BYTES, 'abcdefghijklmnopqrstuvwxyz0123456789');
  return { 'x-event': 'play', 'x-category': 'stream', 'x-severity': 'INFO', 'x-status': 200, 'x-comment': `seq=${seq}`, 'x-app': 'live', 'c-user-agent': pad };
}

describe('1 MiB log lines while the sink answers 503', () => {
  let dir = '';
  let sim: Simulator;
  let receiver: LokiReceiver;
  let exporter: RunningExporter | undefined;
  let fileBytes = 0;
  const rss: number[] = [];
  let peakMb = 0;
  let offsetWhileDown = 0;
  let queueBytesWhileDown = 0;
  let unavailableAnswers = 0;

  const delivered = () => {
    const seqs = new Set<number>();
    for (const l of receiver.lines) {
      // The record's JSON, its columns in header order: x-comment comes long before the 1 MiB user agent.
      const m = /"x-comment":"seq=(\d+)"/.exec(l.line.slice(0, 4096));
      if (m) seqs.add(Number(m[1]));
    }
    return seqs;
  };
  const context = () => `exporter output:\n${exporter?.output().slice(-3000) ?? ''}`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'log-queue-bytes-'));
    // Room for the whole log in one file: the test is about the exporter, not about lines rotated out meanwhile.
    sim = await startSimulator({ auth: 'basic', frozen: true, logs: { linesPerSecond: 0, maxFileBytes: 1024 * 1024 * 1024 } });
    receiver = await startLokiReceiver();
    await receiver.down('unavailable');
    const config = writeLogsConfig(dir, sim, {
      start_at: 'beginning',
      log_types: ['access'],
      follow_interval: '200ms',
      // 1000 lines of 1 MiB would be a 1 GB answer, far over max_response_size: pages of 8 lines.
      line_count: 8,
      sinks: [{ type: 'loki', url: receiver.url, timeout: '5s' }],
      retry: { min_backoff: '200ms', max_backoff: '1s' },
      // queue_lines (10,000) and max_queue_bytes (64 MiB) stay at their defaults: the defaults must hold memory down.
    });
    for (let seq = 1; seq <= LINES; seq += 8) sim.logs.append(ACCESS, Array.from({ length: 8 }, (_, i) => bigRecord(seq + i)));
    fileBytes = sim.logs.bytes(ACCESS).length;

    exporter = await startExporterProcess(['--config', config], { WOWZA_PASSWORD: sim.password });
    const pid = exporter.proc.pid!;
    const until = Date.now() + OUTAGE_MS;
    while (Date.now() < until) {
      rss.push(statusMb(pid, 'VmRSS'));
      await new Promise((r) => setTimeout(r, 250));
    }
    peakMb = statusMb(pid, 'VmHWM');
    const text = await exporter.metrics();
    offsetWhileDown = samples(text, 'wowza_log_follower_offset_bytes', { log_type: ACCESS })[0]?.value ?? 0;
    queueBytesWhileDown = samples(text, 'wowza_log_forward_queue_bytes', { sink: 'loki' })[0]?.value ?? 0;
    unavailableAnswers = receiver.unavailableAnswers;

    await receiver.up();
    await waitFor('every line delivered after the sink came back', () => (delivered().size === LINES ? true : undefined), 240_000, 500).catch((err: Error) => {
      throw new Error(`${err.message}: ${delivered().size} of ${LINES}; ${context()}`);
    });
  }, 420_000);

  afterAll(async () => {
    await exporter?.stop('SIGKILL');
    await receiver?.close();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the sink was really down: it answered 503 and the exporter kept trying', () => {
    expect(unavailableAnswers).toBeGreaterThan(3);
  });

  it(`keeps the exporter under ${RSS_LIMIT_MB} MB while the sink is down`, () => {
    expect(Math.max(...rss), `RSS samples (MB): ${rss.map((v) => v.toFixed(0)).join(' ')}`).toBeLessThan(RSS_LIMIT_MB);
    expect(peakMb).toBeLessThan(RSS_LIMIT_MB);
  });

  it('stopped reading once the queue was full, instead of reading the whole log into memory', () => {
    expect(offsetWhileDown).toBeGreaterThan(0);
    expect(offsetWhileDown).toBeLessThan(fileBytes / 2);
    // 64 MiB by default, with room for one more chunk of 8 lines (a line counts its text and its Loki line).
    expect(queueBytesWhileDown).toBeGreaterThan(0);
    expect(queueBytesWhileDown).toBeLessThanOrEqual(64 * 1024 * 1024);
  });

  it('delivers every line once the sink is back, none dead-lettered', async () => {
    expect(delivered().size).toBe(LINES);
    expect(receiver.rejections).toEqual([]);
    const text = await exporter!.metrics();
    expect(samples(text, 'wowza_log_dead_letter_lines_total', { sink: 'loki' }).reduce((n, s) => n + s.value, 0)).toBe(0);
  });
});
