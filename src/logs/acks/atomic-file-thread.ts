import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { keepCopySync, replaceFileSync, type ReplaceOptions, type Written } from './atomic-file.js';

export type AtomicFileRequest =
  | { id: number; op: 'replace'; path: string; text: string; options: ReplaceOptions }
  | { id: number; op: 'keep-copy'; source: string; previous: string; share: boolean };

export type AtomicFileResponse = { id: number; written?: Written; error?: { message: string; code?: string } };

/** A few MB hold the largest positions document (10,000 servers) twice over. */
const THREAD_HEAP_MB = 64;
/** Longer than the follow interval, so a shipper that keeps saving keeps its thread. */
const IDLE_MS = 30_000;
/** Thread starts or crashes after which the operations run on the event loop instead. */
const MAX_FAILURES = 3;

class FileThreadError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/**
 * Runs the blocking file operations of atomic-file.ts on a thread beside the event loop. A positions save is then one
 * hand-off and one answer, whatever its steps (create, write, fsync, link, rename, close): done with promises, each
 * step waited for a turn of an event loop busy parsing the next lines, and the save after each batch was most of a
 * log backlog's time between two pushes. A disk that hangs holds this thread, not libuv's pool, which DNS lookups and
 * gzip share. The thread starts at the first operation and stops when idle; where there is no compiled worker
 * (tests run from the TypeScript sources) or it failed repeatedly, the operations run on the event loop.
 */
export class AtomicFileThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve: (r: AtomicFileResponse) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private failures = 0;
  private idle: NodeJS.Timeout | undefined;
  private readonly workerUrl: URL | undefined;

  constructor(url: URL = new URL('./atomic-file-worker.js', import.meta.url)) {
    this.workerUrl = existsSync(fileURLToPath(url)) ? url : undefined;
  }

  /** replaceFileSync, off the event loop. */
  async replace(path: string, text: string, options: ReplaceOptions = {}): Promise<Written> {
    if (!this.threaded()) return replaceFileSync(path, text, options);
    return (await this.send({ id: this.nextId++, op: 'replace', path, text, options })).written!;
  }

  /** keepCopySync, off the event loop. */
  async keepCopy(source: string, previous: string, share: boolean): Promise<void> {
    if (!this.threaded()) return keepCopySync(source, previous, share);
    await this.send({ id: this.nextId++, op: 'keep-copy', source, previous, share });
  }

  /** Stops the thread (what it was doing fails); the next operation starts another. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    clearTimeout(this.idle);
    this.failAll(new FileThreadError('the file thread was stopped'));
    await w?.terminate();
  }

  private threaded(): boolean {
    return this.workerUrl !== undefined && this.failures < MAX_FAILURES;
  }

  private send(request: AtomicFileRequest): Promise<AtomicFileResponse> {
    const worker = this.thread();
    clearTimeout(this.idle);
    // Held while it works: a save at shutdown, the last thing the process waits for, must end before the process does.
    worker.ref();
    return new Promise<AtomicFileResponse>((resolve, reject) => {
      this.pending.set(request.id, { resolve, reject });
      worker.postMessage(request);
    }).then((r) => {
      if (r.error) throw new FileThreadError(r.error.message, r.error.code);
      return r;
    });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    // None of the process's own flags (a script given with -e, --cpu-prof, a debugger's): they are not this thread's.
    const worker = new Worker(this.workerUrl!, { execArgv: [], resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB } });
    worker.on('message', (r: AtomicFileResponse) => {
      const p = this.pending.get(r.id);
      this.pending.delete(r.id);
      if (this.pending.size === 0) {
        worker.unref();
        this.stopWhenIdle(worker);
      }
      p?.resolve(r);
    });
    const died = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.failures++;
      this.failAll(new FileThreadError(why));
    };
    worker.on('error', (err: Error) => died(`the file thread failed: ${err.message}`));
    worker.on('exit', (code) => died(`the file thread exited with code ${code}`));
    worker.unref(); // idle, never what keeps the process alive (unref after the listeners: adding one refs it)
    this.worker = worker;
    return worker;
  }

  private stopWhenIdle(worker: Worker): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (this.worker !== worker || this.pending.size > 0) return;
      this.worker = undefined;
      void worker.terminate().catch(() => undefined);
    }, IDLE_MS);
    this.idle.unref();
  }

  private failAll(err: Error): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(err);
  }
}
