import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../base/logger.js';
import { Utf8Writer } from '../../base/utf8-builder.js';
import { LineEncoder, type EncodedSegment, type EncodingSettings, type LineSegment } from './line-encoding.js';

export interface EncoderPoolOptions {
  settings: EncodingSettings;
  /** Worker threads at most; 0 encodes everything on the event loop. */
  threads: number;
  /**
   * CPUs the process may use (default `os.availableParallelism()`). The event loop keeps one of them busy (reading,
   * queueing, sending), so at most one thread fewer than CPUs runs, and none on two CPUs or fewer: there a thread
   * forwarded no more lines than the event loop alone, in the bench and through `serve`, for more CPU
   * (bench/RESULTS.md, issue 48).
   */
  cpus?: number;
  logger: Logger;
  /** Segments shorter than this are encoded on the event loop: a round trip to a thread costs more. */
  minLinesPerThread?: number;
  /** The worker script; by default the compiled `encode-worker.js` next to this module. */
  workerUrl?: URL;
  /** A thread without work for this long stops, giving its memory back (about 15 MB); default 30 s. */
  idleMs?: number;
}

interface Pending {
  segment: LineSegment;
  resolve: (result: EncodedSegment) => void;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  idle?: NodeJS.Timeout;
}

/**
 * What a thread is sent: the lines as UTF-8 in one transferred buffer, and where each ends. Joining them into one
 * string cost about 2 us a line (more where one line has a character beyond Latin-1, which makes the whole string
 * two bytes a character), and the structured clone copied it again; writing UTF-8 costs a tenth of that and the
 * buffer moves without a copy. The thread decodes line by line: decoding the whole text at once takes V8's slow
 * path for all of it as soon as one line is not ASCII.
 */
export interface EncodeRequest {
  id: number;
  server: string;
  logType: string;
  fields: string | undefined;
  utf8: Uint8Array;
  /** The byte offset after each line in `utf8`. */
  ends: Int32Array;
}

/**
 * The request of a segment, written through `out` (the pool's, reused: only the bytes written are copied out, into a
 * buffer of their own that moves to the thread), or undefined when a line is not well-formed UTF-16 (a lone
 * surrogate): UTF-8 cannot carry it, and the encoder writes such a line its own way, so that segment stays on the
 * event loop.
 */
function requestOf(id: number, { server, logType, fields, lines }: LineSegment, out: Utf8Writer): EncodeRequest | undefined {
  for (const line of lines) if (!line.isWellFormed()) return undefined;
  const ends = new Int32Array(lines.length);
  for (let i = 0; i < lines.length; i++) {
    out.string(lines[i]!);
    ends[i] = out.pos;
  }
  return { id, server, logType, fields, utf8: out.take(), ends };
}

/** The segment of a request, on the thread. */
export function segmentOf({ server, logType, fields, utf8, ends }: EncodeRequest): LineSegment {
  const bytes = Buffer.from(utf8.buffer, utf8.byteOffset, utf8.length);
  const lines = new Array<string>(ends.length);
  let at = 0;
  for (let i = 0; i < ends.length; i++) lines[i] = bytes.toString('utf8', at, (at = ends[i]!));
  return { server, logType, fields, lines };
}

/** Failed thread starts or crashes after which the pool stops trying and encodes on the event loop. */
const MAX_FAILURES = 3;

/**
 * Encodes log lines (redact, parse, count, filter, JSON) on worker threads, so a backlog of hundreds of
 * thousands of lines uses more than one core and the event loop stays free for scrapes and the sinks.
 * Threads start on first use and stop when idle. A thread that fails hands its segments back to the event
 * loop: the result is the same, only slower; after repeated failures the pool stops using threads.
 */
export class EncoderPool {
  private readonly inline: LineEncoder;
  private readonly threads: Thread[] = [];
  private readonly workerUrl: URL | undefined;
  private readonly minLines: number;
  /** Threads that may run: `threads`, but not more than the CPUs beside the event loop's, and none on two CPUs. */
  private readonly maxThreads: number;
  /** Where requests to the threads are written; made with the first. */
  private outgoing: Utf8Writer | undefined;
  private nextId = 1;
  private failures = 0;
  private closed = false;

  constructor(private readonly options: EncoderPoolOptions) {
    this.inline = new LineEncoder(options.settings);
    this.minLines = options.minLinesPerThread ?? 200;
    const cpus = options.cpus ?? availableParallelism();
    this.maxThreads = cpus <= 2 ? 0 : Math.min(options.threads, cpus - 1);
    const url = options.workerUrl ?? new URL('./encode-worker.js', import.meta.url);
    // Run from TypeScript sources (tests) there is no compiled worker: encode on the event loop then.
    this.workerUrl = this.maxThreads > 0 && existsSync(fileURLToPath(url)) ? url : undefined;
    if (this.maxThreads > 0 && !this.workerUrl) options.logger.debug({ worker: url.href }, 'no compiled encoder worker: log lines are parsed on the event loop');
  }

  /** Threads that are running now. */
  get size(): number {
    return this.threads.length;
  }

  /** Lines to give each thread for `total` lines: as even as possible, and not below the minimum. */
  partSize(total: number): number {
    if (!this.usesThreads()) return Math.max(total, 1);
    return Math.max(this.minLines, Math.ceil(total / this.maxThreads));
  }

  encode(segment: LineSegment): Promise<EncodedSegment> {
    if (!this.usesThreads() || segment.lines.length < this.minLines) return Promise.resolve(this.inline.encodeSafely(segment));
    const thread = this.pickThread();
    const id = this.nextId++;
    const request = thread && requestOf(id, segment, (this.outgoing ??= new Utf8Writer(1024 * 1024)));
    if (!thread || !request) return Promise.resolve(this.inline.encodeSafely(segment));
    clearTimeout(thread.idle);
    return new Promise<EncodedSegment>((resolve) => {
      thread.pending.set(id, { segment, resolve });
      thread.worker.postMessage(request, [request.ends.buffer as ArrayBuffer, request.utf8.buffer as ArrayBuffer]);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const threads = this.threads.splice(0);
    for (const t of threads) {
      clearTimeout(t.idle);
      this.handBack(t);
    }
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }

  private usesThreads(): boolean {
    return this.workerUrl !== undefined && !this.closed && this.failures < MAX_FAILURES;
  }

  /** The least busy thread; starts another while below the limit and every running one is busy. */
  private pickThread(): Thread | undefined {
    let best: Thread | undefined;
    for (const t of this.threads) if (!best || t.pending.size < best.pending.size) best = t;
    if (best && (best.pending.size === 0 || this.threads.length >= this.maxThreads)) return best;
    return this.startThread() ?? best;
  }

  private startThread(): Thread | undefined {
    let worker: Worker;
    try {
      worker = new Worker(this.workerUrl!, { workerData: this.options.settings });
    } catch (err) {
      this.fail(undefined, err);
      return undefined;
    }
    worker.unref(); // never what keeps the process alive; close() ends them
    const thread: Thread = { worker, pending: new Map() };
    worker.on('message', (m: { id: number; result?: EncodedSegment; error?: string }) => {
      const p = thread.pending.get(m.id);
      if (!p) return;
      thread.pending.delete(m.id);
      if (thread.pending.size === 0) this.stopWhenIdle(thread);
      if (m.result) p.resolve(m.result);
      else {
        this.options.logger.warn({ error: m.error }, 'encoder thread failed on a segment: encoding it on the event loop');
        p.resolve(this.inline.encodeSafely(p.segment));
      }
    });
    worker.on('error', (err) => this.fail(thread, err));
    worker.on('exit', (code) => {
      if (!this.closed && this.threads.includes(thread)) this.fail(thread, new Error(`exited with code ${code}`));
    });
    this.threads.push(thread);
    return thread;
  }

  private stopWhenIdle(thread: Thread): void {
    clearTimeout(thread.idle);
    thread.idle = setTimeout(() => {
      const at = this.threads.indexOf(thread);
      if (at < 0 || thread.pending.size > 0) return;
      this.threads.splice(at, 1); // no longer ours: its exit is not a failure
      void thread.worker.terminate().catch(() => undefined);
    }, this.options.idleMs ?? 30_000);
    thread.idle.unref();
  }

  private fail(thread: Thread | undefined, err: unknown): void {
    if (thread) {
      const at = this.threads.indexOf(thread);
      if (at < 0) return; // already handled ('error' is followed by 'exit')
      this.threads.splice(at, 1);
      clearTimeout(thread.idle);
      this.handBack(thread);
      void thread.worker.terminate().catch(() => undefined);
    }
    this.failures++;
    const gaveUp = this.failures >= MAX_FAILURES;
    this.options.logger[gaveUp ? 'error' : 'warn'](
      { error: (err as Error).message ?? String(err), failures: this.failures },
      gaveUp ? 'encoder threads keep failing: log lines are parsed on the event loop from now on' : 'encoder thread failed: its lines are parsed on the event loop',
    );
  }

  /** Encodes on the event loop what a thread had not answered yet. */
  private handBack(thread: Thread): void {
    const pending = [...thread.pending.values()];
    thread.pending.clear();
    for (const p of pending) p.resolve(this.inline.encodeSafely(p.segment));
  }
}
