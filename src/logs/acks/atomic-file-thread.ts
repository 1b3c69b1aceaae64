import { OnDemandThread, type Unnumbered } from '../../base/on-demand-thread.js';
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
  private readonly thread: OnDemandThread<AtomicFileRequest, AtomicFileResponse> | undefined;
  private failures = 0;

  constructor(url: URL = new URL('./atomic-file-worker.js', import.meta.url)) {
    this.thread = OnDemandThread.ifCompiled({
      url,
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
      idleMs: IDLE_MS,
      failure: ({ error, exitCode }) => new FileThreadError(error ? `the file thread failed: ${error.message}` : `the file thread exited with code ${exitCode}`),
      onDeath: () => this.failures++,
    });
  }

  /** replaceFileSync, off the event loop. */
  async replace(path: string, text: string, options: ReplaceOptions = {}): Promise<Written> {
    if (!this.threaded()) return replaceFileSync(path, text, options);
    return (await this.send({ op: 'replace', path, text, options })).written!;
  }

  /** keepCopySync, off the event loop. */
  async keepCopy(source: string, previous: string, share: boolean): Promise<void> {
    if (!this.threaded()) return keepCopySync(source, previous, share);
    await this.send({ op: 'keep-copy', source, previous, share });
  }

  /** Stops the thread (what it was doing fails); the next operation starts another. */
  async close(): Promise<void> {
    await this.thread?.close(new FileThreadError('the file thread was stopped'));
  }

  private threaded(): boolean {
    return this.thread !== undefined && this.failures < MAX_FAILURES;
  }

  private async send(request: Unnumbered<AtomicFileRequest>): Promise<AtomicFileResponse> {
    const r = await this.thread!.request(request);
    if (r.error) throw new FileThreadError(r.error.message, r.error.code);
    return r;
  }
}
