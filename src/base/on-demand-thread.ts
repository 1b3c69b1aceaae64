import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';

export interface OnDemandThreadOptions {
  /** The compiled worker module. */
  url: URL;
  resourceLimits: ResourceLimits;
  /** The thread stops this long after its last answer. */
  idleMs: number;
  /** What a request waiting for an answer fails with when the thread errs or exits (`why` says how). */
  failure: (why: { error?: Error & { code?: string }; exitCode?: number }) => Error;
  /** Told when the thread could not start or died, with requests or none under way (not when it was stopped). */
  onDeath?: () => void;
}

/** A request as its caller gives it: the thread numbers it. */
export type Unnumbered<Req> = Req extends unknown ? Omit<Req, 'id'> : never;

/**
 * One worker thread, started by the first request and stopped when idle, answering requests by the id it gives them. It holds the
 * process only while it works: a request made as the process's last act is answered before the process ends, and an
 * idle thread never keeps it. It runs with none of the process's own flags (a script given with -e, --cpu-prof, a
 * debugger's): they are not the thread's.
 */
export class OnDemandThread<Req extends { id: number }, Res extends { id: number }> {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve: (r: Res) => void; reject: (e: Error) => void }>();
  private idle: NodeJS.Timeout | undefined;
  /** Threads to stop as soon as they have nothing queued (they parsed something that left a big heap behind). */
  private readonly stopWhenDone = new WeakSet<Worker>();
  private nextId = 1;

  constructor(private readonly o: OnDemandThreadOptions) {}

  /**
   * The thread of a compiled worker, or undefined where there is none: run from the TypeScript sources (unit tests),
   * its callers do the work on the event loop.
   */
  static ifCompiled<Req extends { id: number }, Res extends { id: number }>(o: OnDemandThreadOptions): OnDemandThread<Req, Res> | undefined {
    return existsSync(fileURLToPath(o.url)) ? new OnDemandThread<Req, Res>(o) : undefined;
  }

  /** Sends `body` (moving `transfer`); with `stopAfter`, the thread stops once it has nothing more queued. */
  request(body: Unnumbered<Req>, transfer: readonly ArrayBuffer[] = [], stopAfter = false): Promise<Res> {
    const request = { ...body, id: this.nextId++ };
    return new Promise<Res>((resolve, reject) => {
      const worker = this.thread();
      if (stopAfter) this.stopWhenDone.add(worker);
      clearTimeout(this.idle);
      worker.ref();
      this.pending.set(request.id, { resolve, reject });
      worker.postMessage(request, [...transfer]);
    });
  }

  /** Stops the thread; the requests under way fail with `reason`. The next request starts another. */
  async close(reason: Error): Promise<void> {
    clearTimeout(this.idle);
    const w = this.worker;
    this.worker = undefined;
    this.failAll(reason);
    await w?.terminate();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    let worker: Worker;
    try {
      worker = new Worker(this.o.url, { execArgv: [], resourceLimits: this.o.resourceLimits });
    } catch (err) {
      this.o.onDeath?.();
      throw this.o.failure({ error: err as Error & { code?: string } });
    }
    worker.on('message', (r: Res) => {
      const p = this.pending.get(r.id);
      this.pending.delete(r.id);
      if (this.pending.size === 0) this.rest(worker);
      p?.resolve(r);
    });
    const died = (why: { error?: Error & { code?: string }; exitCode?: number }) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.o.onDeath?.();
      this.failAll(this.o.failure(why));
    };
    worker.on('error', (error: Error & { code?: string }) => died({ error }));
    worker.on('exit', (exitCode) => died({ exitCode }));
    worker.unref(); // after the listeners: adding one refs it again
    this.worker = worker;
    return worker;
  }

  /** Nothing under way: the thread no longer holds the process, and stops when idle (at once when marked to). */
  private rest(worker: Worker): void {
    worker.unref();
    clearTimeout(this.idle);
    if (this.stopWhenDone.delete(worker) && this.worker === worker) {
      this.worker = undefined;
      void worker.terminate().catch(() => undefined);
      return;
    }
    this.idle = setTimeout(() => {
      if (this.worker !== worker || this.pending.size > 0) return;
      this.worker = undefined;
      void worker.terminate().catch(() => undefined);
    }, this.o.idleMs);
    this.idle.unref();
  }

  private failAll(err: Error): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(err);
  }
}
