import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { LogsConfigSchema } from '../../src/config/logs.js';
import { entryRecord, type LogEntry } from '../../src/logs/transform/entry.js';
import { startLogShipping, type LogShipping } from '../../src/logs/pipeline.js';
import { DeliveryError, type LogSink } from '../../src/logs/sinks/sink.js';
import { ACCESS_LOG_FIELDS, MemoryLogSource, w3cLine } from './memory-log-source.js';

/**
 * A randomized model of the log pipeline (follower -> encoders -> sink worker -> acknowledgement -> positions):
 * a seeded scenario of appends (plain, UTF-8, 10 KB lines), rotations (several while the exporter is down),
 * sink outages (503, 429 with Retry-After, hangs) and SIGKILL-like stops at random points, checked against the
 * pipeline's promises:
 * - every line written is delivered at least once;
 * - a kill re-sends at most one chunk and one batch (what was in flight);
 * - with the sink up, a line arrives within follow_interval + max_wait + 2 s of being written;
 * - the saved position never goes backwards and never passes a line no sink acknowledged.
 */

const ACCESS = 'wowzastreamingengine_access';
const ENCODER = new URL('../../dist/logs/transform/encode-worker.js', import.meta.url);

/** mulberry32: small, fast, and the same sequence for a seed on every machine. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type SinkMode = { kind: 'up' } | { kind: 'unavailable' } | { kind: 'rate_limited'; retryAfterMs: number } | { kind: 'hang' };

/** A sink whose answers the scenario sets; once `dead` (the process was killed) it holds every send until aborted. */
class ModelSink implements LogSink {
  readonly name = 'model';
  mode: SinkMode = { kind: 'up' };
  dead = false;
  private hung: Array<() => void> = [];

  constructor(private readonly onLines: (entries: readonly LogEntry[]) => void) {}

  setMode(mode: SinkMode): void {
    this.mode = mode;
    if (mode.kind !== 'hang') for (const wake of this.hung.splice(0)) wake();
  }

  async send(entries: readonly LogEntry[], signal: AbortSignal): Promise<void> {
    for (;;) {
      if (this.dead || this.mode.kind === 'hang') {
        await new Promise<void>((resolve, reject) => {
          const onAbort = () => reject(new Error('aborted'));
          this.hung.push(() => {
            signal.removeEventListener('abort', onAbort);
            resolve();
          });
          signal.addEventListener('abort', onAbort, { once: true });
        });
        continue;
      }
      if (this.mode.kind === 'unavailable') throw new DeliveryError('HTTP 503', true, { status: 503 });
      if (this.mode.kind === 'rate_limited') throw new DeliveryError('HTTP 429', true, { status: 429, retryAfterMs: this.mode.retryAfterMs });
      this.onLines(entries);
      return;
    }
  }

  async close(): Promise<void> {}
}

export interface ModelOptions {
  /** Scenario steps; default 60. */
  steps?: number;
  /** How long the end may take to deliver everything before the run fails. Default 20 s. */
  settleMs?: number;
}

export interface ModelResult {
  seed: number;
  written: number;
  delivered: number;
  duplicates: number;
  kills: number;
  rotations: number;
  /** Every broken promise, with what was seen; empty when the run passed. */
  failures: string[];
  /** The scenario's steps, to replay a failure by reading. */
  trace: string[];
}

interface Written {
  at: number;
}

const FOLLOW_MS = 50;
const MAX_WAIT_MS = 50;
const LATENCY_BOUND_MS = FOLLOW_MS + MAX_WAIT_MS + 2000;
/** Lines written this soon after a disturbance may wait behind the backlog it left. */
const SETTLE_MS = 3000;

const fingerprint = (line: string) => createHash('sha256').update(line).digest('base64url').slice(0, 22);

/** Runs one seeded scenario against the real pipeline; never throws for a broken promise, it reports it. */
export async function runLogModel(seed: number, options: ModelOptions = {}): Promise<ModelResult> {
  const rnd = random(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const dir = mkdtempSync(join(tmpdir(), `log-model-${seed}-`));
  const positionsFile = join(dir, 'positions.json');
  const trace: string[] = [];
  const failures: string[] = [];
  const fail = (what: string) => {
    if (failures.length < 20) failures.push(what);
  };

  let second = 0;
  const date = () => new Date(Date.UTC(2024, 0, 15, 0, 0, second)).toISOString().slice(0, 19).replace('T', ' ');
  const source = new MemoryLogSource('wse-model').addLog(ACCESS, ACCESS_LOG_FIELDS, date());

  const written = new Map<number, Written>();
  const arrivals = new Map<number, number[]>();
  let seq = 0;
  let rotations = 0;
  let kills = 0;
  /** Times the pipeline could not deliver (sink not up, exporter down): [from, to], to open while ongoing. */
  const disturbances: Array<[number, number]> = [];
  const disturb = () => disturbances.push([Date.now(), Infinity]);
  const settle = () => {
    const open = disturbances.at(-1);
    if (open && open[1] === Infinity) open[1] = Date.now();
  };

  const lineCount = int(20, 400);
  const maxLines = int(10, 300);
  const config = LogsConfigSchema.parse({
    positions_file: positionsFile,
    dead_letter_file: join(dir, 'dead-letter.ndjson'),
    start_at: 'beginning',
    log_types: [ACCESS],
    line_count: lineCount,
    follow_interval: `${FOLLOW_MS}ms`,
    positions_sync_interval: '50ms',
    batch: { max_lines: maxLines, max_wait: `${MAX_WAIT_MS}ms` },
    retry: { min_backoff: '10ms', max_backoff: '100ms' },
    queue_lines: int(maxLines, 2000),
    // Threads (the compiled worker, built by `npm test`) or the event loop: both paths are shipped.
    parse_threads: rnd() < 0.5 && existsSync(fileURLToPath(ENCODER)) ? 2 : 0,
    drain_timeout: '300ms',
  });
  trace.push(`seed ${seed}: line_count ${lineCount}, batch.max_lines ${maxLines}, queue_lines ${config.queue_lines}, parse_threads ${config.parse_threads}`);

  /** Delivered records without a sequence number: none are written, so each is a corrupted line. */
  const unmatched: string[] = [];
  const record = (entries: readonly LogEntry[]) => {
    const now = Date.now();
    for (const e of entries) {
      const m = /^seq=(\d+)/.exec(String(entryRecord(e)['x-comment']));
      if (!m) {
        if (unmatched.length < 5) unmatched.push(JSON.stringify(entryRecord(e)).slice(0, 300));
        continue;
      }
      const n = Number(m[1]);
      const list = arrivals.get(n);
      if (list) list.push(now);
      else arrivals.set(n, [now]);
    }
  };

  const append = (kind: 'plain' | 'utf8' | 'big', n: number) => {
    const lines: string[] = [];
    const now = Date.now();
    for (let i = 0; i < n; i++) {
      seq++;
      written.set(seq, { at: now });
      const comment = kind === 'utf8' ? `seq=${seq} ünïcødé 日本語 😀 ∑` : kind === 'big' ? `seq=${seq} ${'x'.repeat(10_000)}` : `seq=${seq}`;
      lines.push(w3cLine(ACCESS_LOG_FIELDS, { date: '2024-01-15', time: '10:00:00', tz: 'UTC', 'x-event': 'play', 'x-category': 'stream', 'x-severity': 'INFO', 'x-comment': comment }));
    }
    source.append(ACCESS, lines);
    trace.push(`append ${n} ${kind} (to seq ${seq})`);
  };
  const rotate = () => {
    if (rnd() < 0.7) second++; // else within the same second: the date cannot tell the files apart
    source.rotate(ACCESS, date());
    rotations++;
    trace.push(`rotate (file ${date()})`);
  };

  /** The highest seq the saved position is past: every line up to it must have arrived. */
  let lastEntry = '';
  const committedSeq = (): number | undefined => {
    if (!existsSync(positionsFile)) return undefined;
    let entry: { file_id: string; file_head?: string; prev_file_head?: string; offset: number } | undefined;
    try {
      const doc = JSON.parse(readFileSync(positionsFile, 'utf8')) as { positions: Array<NonNullable<typeof entry>> };
      entry = doc.positions[0];
    } catch {
      return undefined; // written by rename, so never half a file; unreadable means not there yet
    }
    if (!entry) return undefined;
    lastEntry = JSON.stringify(entry);
    let highest = 0;
    // A position without a fingerprint is in the first file of its date after the one it names as before it.
    let afterPrevious = entry.file_head !== undefined || entry.prev_file_head === undefined;
    for (const f of source.allFiles()) {
      const lines = f.content.toString('utf8').split('\n');
      const first = lines.find((l) => l !== '' && !l.startsWith('#'));
      const head = first === undefined ? undefined : fingerprint(first);
      const same = f.startDate === entry.file_id && (entry.file_head === undefined ? afterPrevious : head === entry.file_head);
      if (head !== undefined && head === entry.prev_file_head) afterPrevious = true;
      let at = 0;
      for (const l of lines) {
        const end = at + Buffer.byteLength(l) + 1;
        const m = /\tseq=(\d+)/.exec(l);
        if (m && (!same || end <= entry.offset)) highest = Math.max(highest, Number(m[1]));
        at = end;
      }
      if (same) return highest;
    }
    fail(`the saved position names a file that does not exist: ${JSON.stringify(entry)}`);
    return undefined;
  };

  let baseline = 0;
  let watching = true;
  const watch = () => {
    if (!watching) return;
    const c = committedSeq();
    if (c === undefined) return;
    if (c < baseline) fail(`the saved position went back from seq ${baseline} to ${c}`);
    baseline = Math.max(baseline, c);
    for (let n = 1; n <= c; n++) {
      if (!arrivals.has(n)) {
        fail(`the saved position passed seq ${n}, which no sink acknowledged (position at seq ${c}: ${lastEntry})`);
        break;
      }
    }
  };
  const watcher = setInterval(watch, 20);

  // The pipeline's own log, shown with a failure.
  const logLines: string[] = [];
  const logger = pino(
    { level: 'info', base: null, timestamp: false },
    new Writable({ write: (chunk: Buffer, _enc, done) => (logLines.push(chunk.toString().trim()), done()) }),
  );
  const sink = new ModelSink(record);
  let shipping: LogShipping | undefined;
  const start = async () => {
    sink.dead = false;
    // Two CPUs assumed, so one encoder thread runs whatever the machine has; small segments stay on the event loop.
    shipping = await startLogShipping({ sources: [source], config, registry: new Registry(), logger, sinks: [sink], encoderWorkerUrl: ENCODER });
  };
  /** What SIGKILL leaves: the positions file as it is now; nothing the old process does after counts. */
  const kill = async () => {
    watch();
    watching = false;
    const snapshot = existsSync(positionsFile) ? readFileSync(positionsFile) : undefined;
    sink.dead = true;
    disturb();
    await shipping!.stop();
    shipping = undefined;
    if (snapshot) writeFileSync(positionsFile, snapshot);
    else if (existsSync(positionsFile)) unlinkSync(positionsFile);
    kills++;
    trace.push('kill');
    logLines.push('--- kill ---');
  };
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

  try {
    await start();
    const steps = options.steps ?? 60;
    for (let step = 0; step < steps; step++) {
      const r = rnd();
      if (r < 0.4) {
        const k = rnd();
        append(k < 0.7 ? 'plain' : k < 0.9 ? 'utf8' : 'big', k < 0.7 ? int(1, 150) : k < 0.9 ? int(1, 10) : int(1, 3));
      } else if (r < 0.48) {
        rotate();
      } else if (r < 0.56) {
        if (sink.mode.kind === 'up') {
          const k = rnd();
          const mode: SinkMode = k < 0.4 ? { kind: 'unavailable' } : k < 0.7 ? { kind: 'rate_limited', retryAfterMs: int(20, 200) } : { kind: 'hang' };
          disturb();
          sink.setMode(mode);
          trace.push(`sink ${mode.kind}`);
        }
      } else if (r < 0.68) {
        if (sink.mode.kind !== 'up') {
          sink.setMode({ kind: 'up' });
          settle();
          trace.push('sink up');
        }
      } else if (r < 0.74 && existsSync(positionsFile)) {
        // Before its first position is saved, a log is new to a restarted exporter (it starts at `start_at`):
        // a kill is survived once that position is on disk.
        await kill();
        for (let i = int(0, 3); i > 0; i--) {
          append(rnd() < 0.8 ? 'plain' : 'utf8', int(1, 100));
          if (rnd() < 0.6) rotate();
        }
        await start();
        watching = true;
        if (sink.mode.kind === 'up') settle();
        trace.push('restart');
      } else {
        await pause(int(0, 250));
      }
    }
    if (sink.mode.kind !== 'up') {
      sink.setMode({ kind: 'up' });
      settle();
      trace.push('sink up');
    }
    const end = Date.now() + (options.settleMs ?? 20_000);
    while (Date.now() < end && [...written.keys()].some((n) => !arrivals.has(n))) await pause(20);
    if ([...written.keys()].some((n) => !arrivals.has(n))) {
      trace.push(`at the end: followers ${JSON.stringify(shipping!.followers())}, positions ${existsSync(positionsFile) ? readFileSync(positionsFile, 'utf8').replace(/\s+/g, ' ').slice(0, 300) : 'none'}`);
      trace.push(`files: ${source.allFiles().map((f) => `${f.id} ${f.startDate} ${f.content.length}`).join('; ')}`);
    }
    watch();
    await shipping!.stop();
    shipping = undefined;
    watch();
  } catch (err) {
    fail(`the scenario threw: ${(err as Error).stack ?? String(err)}`);
  } finally {
    clearInterval(watcher);
    await shipping?.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }

  if (unmatched.length > 0) fail(`records arrived without their seq=N comment: ${unmatched.join(' | ')}`);
  const missing = [...written.keys()].filter((n) => !arrivals.has(n));
  if (missing.length > 0) fail(`${missing.length} lines never arrived: seq ${missing.slice(0, 30).join(', ')}${missing.length > 30 ? ', ...' : ''}`);
  let duplicates = 0;
  for (const list of arrivals.values()) duplicates += list.length - 1;
  const allowed = kills * (lineCount + maxLines);
  if (duplicates > allowed) fail(`${duplicates} duplicates after ${kills} kills: at most ${allowed} (one chunk and one batch per kill)`);
  for (const [n, w] of written) {
    const first = arrivals.get(n)?.[0];
    if (first === undefined) continue;
    const quiet = disturbances.every(([from, to]) => to < w.at - SETTLE_MS || from > w.at + LATENCY_BOUND_MS);
    if (quiet && first - w.at > LATENCY_BOUND_MS) {
      fail(`seq ${n} took ${first - w.at} ms with the sink up (bound ${LATENCY_BOUND_MS} ms)`);
      break;
    }
  }
  if (failures.length > 0) trace.push('pipeline log:', ...logLines.slice(-80));
  return { seed, written: written.size, delivered: arrivals.size, duplicates, kills, rotations, failures, trace };
}
