import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { silentLogger } from '../../../src/base/logger.js';
import { LogsConfigSchema, type LogsConfigInput } from '../../../src/config/logs.js';
import { entryRecord, type LogEntry } from '../../../src/logs/transform/entry.js';
import { startLogShipping, type LogShipping } from '../../../src/logs/pipeline.js';
import { ACCESS_LOG_FIELDS, ERROR_LOG_FIELDS, MemoryLogSource, w3cLine } from '../../helpers/memory-log-source.js';
import type { LogSink } from '../../../src/logs/sinks/sink.js';
import { waitFor } from '../../helpers/ports.js';

const ACCESS = 'wowzastreamingengine_access';
const ERROR = 'wowzastreamingengine_error';

function access(comment: string, severity = 'INFO', event = 'play'): string {
  return w3cLine(ACCESS_LOG_FIELDS, {
    date: '2024-01-15', time: '10:00:00', tz: 'UTC', 'x-event': event, 'x-category': 'stream', 'x-severity': severity,
    'x-comment': comment, 'x-app': 'live', 'sc-bytes': '100',
  });
}
const numbered = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => access(`line ${from + i}`));

/** A sink under the test's control: delivers, or holds every send until released (an unresponsive receiver). */
class TestSink implements LogSink {
  readonly received: LogEntry[] = [];
  sends = 0;
  private waiting: Array<() => void> = [];

  constructor(
    readonly name = 'test',
    private hanging = false,
    /** Sends that succeed before the sink starts hanging. */
    private okBeforeHang = Infinity,
  ) {}

  async send(entries: readonly LogEntry[], signal: AbortSignal): Promise<void> {
    this.sends++;
    if (this.hanging || this.sends > this.okBeforeHang) {
      await new Promise<void>((resolve, reject) => {
        this.waiting.push(resolve);
        signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      });
    }
    this.received.push(...entries);
  }

  release(): void {
    this.hanging = false;
    this.okBeforeHang = Infinity;
    for (const w of this.waiting.splice(0)) w();
  }

  comments(): string[] {
    return this.received.map((e) => String(entryRecord(e)['x-comment']));
  }

  async close(): Promise<void> {}
}

let dir: string;
const running: LogShipping[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'log-shipping-'));
});
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function ship(source: MemoryLogSource, sinks: LogSink[], input: LogsConfigInput = {}, logger = silentLogger()) {
  const registry = new Registry();
  const config = LogsConfigSchema.parse({
    positions_file: join(dir, 'positions.json'),
    dead_letter_file: join(dir, 'dead-letter.ndjson'),
    start_at: 'beginning',
    log_types: [ACCESS],
    line_count: 4,
    follow_interval: '10ms',
    positions_sync_interval: '10ms',
    batch: { max_lines: 4, max_wait: '10ms' },
    retry: { min_backoff: '5ms', max_backoff: '20ms' },
    drain_timeout: '200ms',
    ...input,
  });
  const shipping = await startLogShipping({ sources: [source], config, registry, logger, sinks });
  running.push(shipping);
  const metric = async (name: string, labels: Record<string, string> = {}) => {
    const values = (await registry.getSingleMetric(name)!.get()).values.filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want));
    return values.reduce((sum, v) => sum + v.value, 0);
  };
  const stop = async () => {
    running.splice(running.indexOf(shipping), 1);
    await shipping.stop();
  };
  return { shipping, metric, stop, registry };
}

/** The saved offset of a log, as a crash would leave the positions file on disk right now. */
function savedOffset(logType = ACCESS): number | undefined {
  try {
    const doc = JSON.parse(readFileSync(join(dir, 'positions.json'), 'utf8')) as { positions: Array<{ log_type: string; offset: number }> };
    return doc.positions.find((p) => p.log_type === logType)?.offset;
  } catch {
    return undefined;
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('log shipping', () => {
  it('a configured log type the server does not list is named, with the ones it has, and skipped', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, numbered(1, 2));
    const said: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void said.push(line) });
    const sink = new TestSink();
    const { shipping } = await ship(src, [sink], { log_types: ['access', 'error'] }, logger);
    await waitFor('the access lines', () => sink.received.length === 2 || undefined);
    expect(shipping.followers().map((f) => f.logType)).toEqual([ACCESS]);
    expect(said.map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain(`the server has no log type "${ERROR}": skipped (it lists ${ACCESS})`);
    expect(src.callsOf('readLog').every((c) => c.name === ACCESS)).toBe(true);
  });

  it('stops polling when a sink queue is full, and resumes without dropping anything', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    const firstRecord = src.size(ACCESS); // pages of header lines alone may be acknowledged at once
    src.append(ACCESS, numbered(1, 60));
    const sink = new TestSink('slow', true);
    const { metric } = await ship(src, [sink], { queue_lines: 8 });

    await waitFor('the first batch at the sink', () => sink.sends > 0 || undefined);
    await pause(100);
    const reads = src.callsOf('readLog').length;
    await pause(150);
    expect(src.callsOf('readLog').length).toBe(reads); // paused, not dropping
    expect(reads).toBeLessThan(8); // 65 lines need 17 pages: most of the file was not read
    expect(await metric('wowza_log_forward_queue_lines', { sink: 'slow' })).toBeLessThanOrEqual(8);
    expect(savedOffset() ?? 0).toBeLessThanOrEqual(firstRecord);

    sink.release();
    await waitFor('every line', () => sink.received.length === 60 || undefined);
    expect(sink.comments()).toEqual(Array.from({ length: 60 }, (_, i) => `line ${i + 1}`));
    await waitFor('position at the end', () => savedOffset() === src.size(ACCESS) || undefined);
  });

  it('stops polling when a sink queue is full in bytes; a chunk over the limit still goes, alone, and nothing is dropped', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    const long = (n: number, size: number) => access(`line ${n} ${'x'.repeat(size)}`);
    src.append(ACCESS, [long(1, 300_000), ...Array.from({ length: 39 }, (_, i) => long(i + 2, 10_000))]);
    const sink = new TestSink('slow', true);
    const { metric } = await ship(src, [sink], { max_queue_bytes: 64 * 1024 });

    await waitFor('the first batch at the sink', () => sink.sends > 0 || undefined);
    await pause(100);
    const reads = src.callsOf('readLog').length;
    await pause(150);
    expect(src.callsOf('readLog').length).toBe(reads); // paused, not dropping
    expect(reads).toBeLessThan(6); // 40 lines need 10 pages of 4
    // The first chunk, 300 KB and more, was taken by the empty queue; nothing was let in beside it.
    expect(await metric('wowza_log_forward_queue_bytes', { sink: 'slow' })).toBeGreaterThan(300_000);
    expect(await metric('wowza_log_forward_queue_lines', { sink: 'slow' })).toBeLessThanOrEqual(4);

    sink.release();
    await waitFor('every line', () => sink.received.length === 40 || undefined);
    expect(sink.comments().map((c) => c.split(' ').slice(0, 2).join(' '))).toEqual(Array.from({ length: 40 }, (_, i) => `line ${i + 1}`));
    await waitFor('the queue empty', async () => (await metric('wowza_log_forward_queue_bytes', { sink: 'slow' })) === 0 || undefined);
  });

  it('never saves a position before the sink acknowledged, so a crash loses nothing', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, numbered(1, 10));
    // First run: the sink takes one batch, then hangs; then the process "crashes".
    const first = new TestSink('loki', false, 1);
    const run1 = await ship(src, [first]);
    await waitFor('the hanging send', () => first.sends >= 2 || undefined);
    await pause(60); // several position syncs happen meanwhile
    const onDisk = savedOffset() ?? 0;
    const acked = first.comments();
    expect(acked.length).toBeGreaterThan(0);
    expect(acked.length).toBeLessThan(10);
    // The saved offset lies at or before the first unacknowledged line.
    const firstUnacked = src.size(ACCESS) - Buffer.byteLength(numbered(acked.length + 1, 10).map((l) => l + '\n').join(''));
    expect(onDisk).toBeLessThanOrEqual(firstUnacked);
    await run1.stop(); // the drain deadline passes with the batch still unacknowledged
    expect(savedOffset() ?? 0).toBe(onDisk);

    // Restart with a working sink: everything not acknowledged arrives; nothing is lost.
    const second = new TestSink('loki');
    await ship(src, [second]);
    await waitFor('the rest', () => second.comments().includes('line 10') || undefined);
    const all = new Set([...acked, ...second.comments()]);
    expect([...all].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).sort());
    expect(second.comments()).toContain(`line ${acked.length + 1}`);
  });

  it('resumes after a clean restart exactly where it stopped', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, numbered(1, 5));
    const first = new TestSink();
    const run1 = await ship(src, [first], { start_at: 'end' });
    await waitFor('the start position saved', () => savedOffset() === src.size(ACCESS) || undefined);
    src.append(ACCESS, numbered(6, 7));
    await waitFor('lines 6 and 7', () => first.received.length === 2 || undefined);
    await run1.stop();
    expect(savedOffset()).toBe(src.size(ACCESS));

    src.append(ACCESS, numbered(8, 9)); // written while the exporter was down
    const second = new TestSink();
    await ship(src, [second], { start_at: 'end' });
    await waitFor('lines 8 and 9', () => second.received.length === 2 || undefined);
    await pause(50);
    expect(first.comments()).toEqual(['line 6', 'line 7']);
    expect(second.comments()).toEqual(['line 8', 'line 9']);
  });

  it('sends lines as soon as the follower caught up, without waiting for max_wait', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    const sink = new TestSink();
    const started = Date.now();
    await ship(src, [sink], { batch: { max_lines: 1000, max_wait: '1m' } });
    src.append(ACCESS, numbered(1, 3));
    await waitFor('the lines', () => sink.received.length === 3 || undefined);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(sink.comments()).toEqual(['line 1', 'line 2', 'line 3']);
  });

  it('flushes queued lines and saves positions on stop', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, numbered(1, 3));
    const sink = new TestSink('test', true); // holds every send until released
    const { stop, metric } = await ship(src, [sink], { batch: { max_lines: 1000, max_wait: '1m' }, positions_sync_interval: '1h' });
    await waitFor('the first batch in flight', () => sink.sends === 1 || undefined);
    src.append(ACCESS, numbered(4, 6));
    await waitFor('lines queued behind it', async () => (await metric('wowza_log_forward_queue_lines')) === 6 || undefined);
    const stopping = stop();
    sink.release();
    await stopping;
    expect(sink.comments()).toEqual(['line 1', 'line 2', 'line 3', 'line 4', 'line 5', 'line 6']);
    expect(savedOffset()).toBe(src.size(ACCESS));
  });

  it('advances positions only when every sink acknowledged', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    const firstRecord = src.size(ACCESS);
    src.append(ACCESS, numbered(1, 4));
    const fast = new TestSink('fast');
    const stuck = new TestSink('stuck', true);
    await ship(src, [fast, stuck]);
    await waitFor('the fast sink', () => fast.received.length === 4 || undefined);
    await pause(60);
    expect(savedOffset() ?? 0).toBeLessThanOrEqual(firstRecord);
    stuck.release();
    await waitFor('position after both acknowledged', () => savedOffset() === src.size(ACCESS) || undefined);
    expect(stuck.comments()).toEqual(fast.comments());
  });

  it('filters on the client, counts every line read, and bounds label values', async () => {
    const src = new MemoryLogSource('edge-1').addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, [
      access('debug', 'DEBUG'),
      access('info', 'INFO'),
      access('warn', 'WARN', 'user-defined-event'),
      access('error', 'ERROR'),
      'a broken line',
    ]);
    const sink = new TestSink();
    const { metric, registry } = await ship(src, [sink], { filters: { min_severity: 'warn' } });
    await waitFor('filtered lines', () => sink.received.length === 3 || undefined);
    expect(sink.received.map((e) => entryRecord(e)['x-comment'] ?? entryRecord(e).raw)).toEqual(['warn', 'error', 'a broken line']);

    const labels = { server: 'edge-1', log_type: ACCESS };
    expect(await metric('wowza_log_lines_total', { ...labels, severity: 'info' })).toBe(1);
    expect(await metric('wowza_log_lines_total', { ...labels, severity: 'debug' })).toBe(1);
    expect(await metric('wowza_log_lines_total', { ...labels, severity: 'none' })).toBe(1);
    expect(await metric('wowza_log_events_total', { ...labels, category: 'stream', event: 'other' })).toBe(1);
    expect(await metric('wowza_log_events_total', { ...labels, category: 'stream', event: 'play' })).toBe(3);
    expect(await metric('wowza_log_parse_errors_total', labels)).toBe(1);
    await waitFor('forwarded', async () => (await metric('wowza_log_forwarded_lines_total', { ...labels, sink: 'test' })) === 3 || undefined);
    expect(await metric('wowza_log_follower_offset_bytes', labels)).toBe(src.size(ACCESS));
    const lag = await metric('wowza_log_follower_lag_seconds', labels);
    expect(lag).toBeGreaterThan((Date.now() - Date.UTC(2024, 0, 15, 10)) / 1000 - 60);
    const text = await registry.metrics();
    expect(text).not.toMatch(/user-defined-event/);
  });

  it('blanks credentials and tokens in URLs before lines leave (unless turned off)', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    const secretLine = w3cLine(ACCESS_LOG_FIELDS, {
      date: '2024-01-15', time: '10:00:00', tz: 'UTC', 'x-event': 'publish', 'x-severity': 'INFO',
      'x-suri': 'rtsp://admin:cam3ra@192.0.2.5:554/stream1?token=abc123&profile=hd',
      'x-comment': 'pulling rtsp://admin:cam3ra@192.0.2.5:554/stream1 failed',
    });
    src.append(ACCESS, [secretLine]);
    const sink = new TestSink();
    const run = await ship(src, [sink]);
    await waitFor('the line', () => sink.received.length === 1 || undefined);
    expect(entryRecord(sink.received[0]!)).toMatchObject({
      'x-suri': 'rtsp://192.0.2.5:554/stream1?token=REDACTED&profile=hd',
      'x-comment': 'pulling rtsp://192.0.2.5:554/stream1 failed',
    });
    expect(sink.received[0]!.line).not.toContain('cam3ra');
    await run.stop();

    rmSync(join(dir, 'positions.json'), { force: true });
    const plain = new TestSink();
    await ship(src, [plain], { redact_secrets: false });
    await waitFor('the line', () => plain.received.length === 1 || undefined);
    expect(plain.received[0]!.line).toBe(secretLine);
  });

  it('follows every log type the server lists with log_types "*"', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS).addLog(ERROR, ERROR_LOG_FIELDS);
    src.append(ACCESS, [access('from access')]);
    src.append(ERROR, [w3cLine(ERROR_LOG_FIELDS, { 'x-severity': 'ERROR', date: '2024-01-15', time: '10:00:00', 'x-comment': 'from error' })]);
    src.failNext(1); // the listing is retried
    const sink = new TestSink();
    await ship(src, [sink], { log_types: '*' });
    await waitFor('both logs', () => sink.received.length === 2 || undefined);
    expect(new Set(sink.received.map((e) => e.logType))).toEqual(new Set([ACCESS, ERROR]));
  });

  it('refuses two sources with the same server name', async () => {
    const a = new MemoryLogSource('same');
    const b = new MemoryLogSource('same');
    const config = LogsConfigSchema.parse({ positions_file: join(dir, 'p.json') });
    await expect(startLogShipping({ sources: [a, b], config, registry: new Registry(), logger: silentLogger(), sinks: [new TestSink()] })).rejects.toThrow(
      'two servers are named "same"',
    );
  });
});
