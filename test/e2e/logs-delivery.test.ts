import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { startExporterProcess, writeLogsConfig, type RunningExporter } from '../helpers/exporter-process.js';
import { startLokiReceiver, type LokiReceiver, type ReceivedLine } from '../helpers/loki-receiver.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 5 acceptance: 10,000 access-log lines written across two rotations reach a Loki-compatible
 * receiver that is down for 30 s in the middle, while the exporter is killed with SIGKILL twice and
 * restarted with the same config and positions file. Every line arrives at least once, first deliveries
 * in order, at most one batch of duplicates per kill, and every push body is valid.
 */

const ACCESS = 'wowzastreamingengine_access';
const TOTAL = 10_000;
/** batch.max_lines (and line_count): the duplicate budget of one kill. */
const MAX_LINES = 200;
/** Lines a second the "server" writes. */
const RATE = 300;
const OUTAGE_MS = 30_000;

/** A play event carrying its sequence number; the columns not given are written as `-`. */
function playRecord(seq: number) {
  return {
    'x-event': 'play',
    'x-category': 'stream',
    'x-severity': 'INFO',
    'x-status': 200,
    'x-ctx': 'stream1',
    'x-comment': `seq=${seq}`,
    'x-vhost': '_defaultVHost_',
    'x-app': 'live',
    'x-appinst': '_definst_',
    'x-duration': 12.5,
    'c-ip': '198.51.100.7',
    'c-proto': 'rtmp',
    'cs-bytes': 3400,
    'sc-bytes': 1_000_000 + seq,
    'x-sname': 'stream1',
  };
}

/** Writes numbered lines at a steady pace up to a target that the scenario raises. */
class PacedWriter {
  written = 0;
  private target = 0;
  private readonly timer: NodeJS.Timeout;
  private waiters: Array<{ n: number; resolve: () => void }> = [];

  constructor(
    private readonly sim: Simulator,
    perSecond: number,
  ) {
    const perTick = Math.max(1, Math.round(perSecond / 20));
    this.timer = setInterval(() => {
      const n = Math.min(perTick, this.target - this.written);
      if (n <= 0) return;
      this.sim.logs.append(ACCESS, Array.from({ length: n }, (_, i) => playRecord(this.written + i + 1)));
      this.written += n;
      this.waiters = this.waiters.filter((w) => (w.n <= this.written ? (w.resolve(), false) : true));
    }, 50);
  }

  writeUpTo(n: number): void {
    this.target = Math.max(this.target, Math.min(n, TOTAL));
  }

  reached(n: number): Promise<void> {
    return n <= this.written ? Promise.resolve() : new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

interface Delivered extends ReceivedLine {
  seq: number;
  record: Record<string, unknown>;
}

/** The accepted lines that carry a sequence number (the server's own startup lines do not), parsed once. */
class DeliveryLog {
  readonly lines: Delivered[] = [];
  private read = 0;
  private highest = 0;

  constructor(private readonly receiver: LokiReceiver) {}

  /** Takes in what arrived since the last call. */
  update(): this {
    for (; this.read < this.receiver.lines.length; this.read++) {
      const l = this.receiver.lines[this.read]!;
      const record = JSON.parse(l.line) as Record<string, unknown>;
      const m = /^seq=(\d+)$/.exec(String(record['x-comment']));
      if (!m) continue;
      const seq = Number(m[1]);
      this.lines.push({ ...l, seq, record });
      this.highest = Math.max(this.highest, seq);
    }
    return this;
  }

  /** The highest sequence number delivered so far. */
  get max(): number {
    return this.update().highest;
  }
}

describe('log shipping survives SIGKILLs, rotations and a receiver outage', () => {
  let dir: string;
  let sim: Simulator;
  let receiver: LokiReceiver;
  let log: DeliveryLog;
  let writer: PacedWriter;
  let exporter: RunningExporter | undefined;
  const outputs: string[] = [];
  /** receiver.pushes when each run was killed: pushes after it belong to the next run. */
  const killedAtPush: number[] = [];
  /** receiver.pushes when the outage began and ended. */
  const outage = { from: 0, to: 0 };
  let exitCode: number | null | undefined;

  const context = () =>
    `written ${writer.written}, delivered up to ${log.max}; exporter output:\n${outputs.concat(exporter?.output() ?? '').join('\n--- restart ---\n').slice(-4000)}`;
  const until = (what: string, check: () => boolean, timeoutMs = 20_000) =>
    waitFor(what, () => (check() ? true : undefined), timeoutMs, 20).catch((err: Error) => {
      throw new Error(`${err.message}; ${context()}`);
    });

  const start = async (config: string) => {
    exporter = await startExporterProcess(['--config', config], { WOWZA_PASSWORD: sim.password });
  };
  const kill = async () => {
    const running = exporter!;
    await running.stop('SIGKILL');
    killedAtPush.push(receiver.pushes);
    outputs.push(running.output());
    exporter = undefined;
  };
  /**
   * Waits for steady streaming: the exporter caught up with the writer (at least `seq` delivered), kept
   * up for a further second, and the writer is still ahead; a kill then hits a follower mid-stream.
   * (Killed while a backlog drains at full speed, it re-sends what one positions_sync_interval let
   * through at that speed, several batches: the at-least-once design, not what this test bounds.)
   */
  const streamingPast = async (seq: number, what: string) => {
    await until(`${what}: caught up past ${seq}`, () => log.max >= seq && writer.written - log.max < RATE / 2);
    const from = log.max;
    await until(`${what}: a second of streaming after ${from}`, () => log.max >= from + RATE && writer.written > log.max + 20);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-logs-e2e-'));
    sim = await startSimulator({ auth: 'basic', frozen: true, logs: { linesPerSecond: 0 } });
    receiver = await startLokiReceiver();
    log = new DeliveryLog(receiver);
    const config = writeLogsConfig(dir, sim, {
      positions_sync_interval: '100ms',
      follow_interval: '200ms',
      line_count: MAX_LINES,
      start_at: 'beginning',
      log_types: ['access'],
      sinks: [{ type: 'loki', url: receiver.url, timeout: '2s' }],
      batch: { max_lines: MAX_LINES, max_wait: '200ms' },
      retry: { min_backoff: '100ms', max_backoff: '1s' },
      // Smaller than the outage's backlog: the followers must pause, then catch up.
      queue_lines: 2000,
      drain_timeout: '3s',
    });
    writer = new PacedWriter(sim, RATE);

    // Run 1: streaming, killed mid-stream; the log rotates while no exporter runs.
    await start(config);
    writer.writeUpTo(3_000);
    await streamingPast(400, 'run 1');
    await kill();
    await writer.reached(writer.written + 30);
    sim.logs.rotate(ACCESS);

    // Run 2: resumes in the rolled file; then the receiver is down for 30 s (refusing connections, then
    // answering 503) while the server keeps writing and rotates again.
    await start(config);
    await streamingPast(1_200, 'run 2');
    writer.writeUpTo(8_000);
    outage.from = receiver.pushes;
    await receiver.down('refuse');
    await new Promise((r) => setTimeout(r, OUTAGE_MS / 2));
    sim.logs.rotate(ACCESS);
    await receiver.down('unavailable');
    await new Promise((r) => setTimeout(r, OUTAGE_MS / 2));
    await receiver.up();
    outage.to = receiver.pushes;

    // While the backlog drains (positions are saved as sinks acknowledge, so this costs no more than one
    // batch either), it is killed a second time, restarted and left to finish.
    writer.writeUpTo(TOTAL);
    const drainedFrom = log.max;
    await until('draining the backlog', () => log.max >= drainedFrom + 3 * MAX_LINES);
    await kill();
    await start(config);
    await writer.reached(TOTAL);
    await until('every line delivered', () => log.max >= TOTAL && new Set(log.lines.map((l) => l.seq)).size === TOTAL);
    exitCode = await exporter!.stop('SIGTERM');
    outputs.push(exporter!.output());
    exporter = undefined;
    log.update();
  }, 120_000);

  afterAll(async () => {
    writer?.stop();
    await exporter?.stop('SIGKILL');
    await receiver?.close();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the scenario really rotated twice, was refused and answered 503, and ended with a clean exit', () => {
    const rolled = sim.logs.files().filter((f) => f.logType === ACCESS && !f.current);
    expect(rolled).toHaveLength(2);
    expect(receiver.unavailableAnswers).toBeGreaterThan(0);
    expect(outage.to).toBe(outage.from); // nothing got through while down
    expect(killedAtPush).toHaveLength(2);
    expect(outputs.join('\n').match(/log file rotated/g)).toHaveLength(2);
    expect(exitCode).toBe(0);
    const deadLetters = join(dir, 'dead-letter.ndjson');
    expect(existsSync(deadLetters) ? readFileSync(deadLetters, 'utf8') : '').toBe('');
  });

  it('delivers every line at least once, first deliveries in the order written', () => {
    const first: number[] = [];
    const seen = new Set<number>();
    for (const l of log.lines) {
      if (seen.has(l.seq)) continue;
      seen.add(l.seq);
      first.push(l.seq);
    }
    expect(first.length).toBe(TOTAL);
    const outOfOrder = first.findIndex((seq, i) => seq !== i + 1);
    expect(outOfOrder, `first deliveries out of order near ${first.slice(Math.max(0, outOfOrder - 3), outOfOrder + 3).join(',')}`).toBe(-1);
  });

  it('re-sends at most one batch per kill, right after the restart; the outage re-sends nothing', () => {
    const runOf = (push: number) => killedAtPush.filter((k) => push > k).length;
    const duplicatesPerRun = [0, 0, 0];
    const duplicatePushes: number[] = [];
    const seen = new Set<number>();
    for (const l of log.lines) {
      if (seen.has(l.seq)) {
        duplicatesPerRun[runOf(l.push)]!++;
        duplicatePushes.push(l.push);
      }
      seen.add(l.seq);
    }
    expect(duplicatesPerRun[0]).toBe(0); // no kill before run 1
    expect(duplicatesPerRun[1]).toBeLessThanOrEqual(MAX_LINES);
    expect(duplicatesPerRun[2]).toBeLessThanOrEqual(MAX_LINES);
    // The batch that was retried through the outage arrived once: no duplicate after it began.
    expect(duplicatePushes.filter((p) => p > outage.from && p <= killedAtPush[1]!)).toEqual([]);
  });

  it('every push matched the Loki schema: nothing was rejected; gzipped bodies, a service_name for Loki 3', () => {
    expect(receiver.rejections).toEqual([]);
    for (const l of log.lines) expect(l.labels).toEqual({ service_name: 'wowza', server: 'wse-1', log_type: ACCESS, severity: 'info' });
    expect(receiver.pushes).toBeGreaterThan(0);
    expect(receiver.gzipped).toBe(receiver.pushes);
  });

  it('a play line arrives as a typed record: ISO-8601 UTC timestamp, numbers for bytes, null for "-"', () => {
    const l = log.lines.find((d) => d.seq === 1234)!;
    const r = l.record;
    expect(r.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);
    expect(BigInt(l.ns)).toBe(BigInt(Date.parse(String(r.timestamp))) * 1_000_000n);
    expect(r['x-event']).toBe('play');
    expect(r['sc-bytes']).toBe(1_001_234);
    expect(r['cs-bytes']).toBe(3400);
    expect(r['x-duration']).toBe(12.5);
    expect(r['c-referrer']).toBeNull();
    expect(r['c-user-agent']).toBeNull();
    expect(r['x-file-size']).toBeNull();
    expect(r['x-sname']).toBe('stream1');
    // date, time and tz live on in `timestamp` only.
    expect(r).not.toHaveProperty('date');
    expect(r).not.toHaveProperty('tz');
  });
});
