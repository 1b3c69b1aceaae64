import type { Logger } from '../../base/logger.js';
import type { AckTicket } from '../acks/ack-tracker.js';
import { sleep } from '../../base/abortable-sleep.js';
import { scrubSecrets } from '../../base/secret-scrubber.js';
import { backoffDelay } from './backoff.js';
import type { DeadLetterFile } from './dead-letter.js';
import { entryBytes, entryFootprint, type LogEntry } from '../transform/entry.js';
import type { LogMetrics } from '../metrics.js';
import { DeliveryError, type LogSink } from './sink.js';

export interface BatchSettings {
  /** A batch is sent once it holds this many lines... */
  maxLines: number;
  /** ...or this many bytes of lines... */
  maxBytes: number;
  /** ...or its oldest line waited this long. */
  maxWaitMs: number;
}

export interface RetrySettings {
  minBackoffMs: number;
  maxBackoffMs: number;
  /** Retries before a batch goes to the dead-letter file; unset retries for ever (and backpressure holds). */
  maxRetries?: number;
}

export interface SinkWorkerOptions {
  sink: LogSink;
  batch: BatchSettings;
  retry: RetrySettings;
  /** Lines the worker holds (queued and in flight) before producers must wait. */
  capacity: number;
  /** Bytes the worker holds (queued and in flight, by entryFootprint) before producers must wait. */
  capacityBytes: number;
  deadLetter?: DeadLetterFile;
  metrics?: LogMetrics;
  logger: Logger;
  random?: () => number;
  /**
   * Runs after each acknowledged batch, before the next one is sent: the shipper saves positions here,
   * so a crash re-sends at most the batch that was in flight.
   */
  afterAck?: () => Promise<void>;
}

interface Queued {
  entry: LogEntry;
  ticket: AckTicket;
  bytes: number;
  /** What the entry holds in memory, for the byte limit. */
  footprint: number;
  at: number;
}

/** A batch taken from the queue, encoded for the sink when the sink encodes ahead. */
interface Prepared {
  batch: Queued[];
  encoded?: Promise<Buffer | undefined>;
}

/** Counts per (server, log_type) of a batch, for the labelled metrics. Runs of one log are the rule. */
function byLog(entries: readonly LogEntry[]): Array<{ server: string; log_type: string; n: number }> {
  const groups: Array<{ server: string; log_type: string; n: number }> = [];
  let last: (typeof groups)[number] | undefined;
  for (const { server, logType } of entries) {
    if (last === undefined || last.server !== server || last.log_type !== logType) {
      last = groups.find((g) => g.server === server && g.log_type === logType);
      if (last === undefined) {
        last = { server, log_type: logType, n: 0 };
        groups.push(last);
      }
    }
    last.n++;
  }
  return groups;
}

/**
 * Feeds one sink: a queue bounded in lines and bytes, batches closed by size or age, one batch in flight, retries with
 * exponential backoff and jitter (or the receiver's Retry-After), dead letters for refusals. Every line
 * is acknowledged once the sink holds it or it was dead-lettered; never before.
 */
export class SinkWorker {
  readonly name: string;
  private readonly queue: Queued[] = [];
  private queuedBytes = 0;
  private inFlight = 0;
  /** Footprint of the lines queued and in flight. */
  private heldBytes = 0;
  private stopping = false;
  /** Send without waiting for batches to age, until the queue is empty. */
  private flushing = false;
  private readonly abort = new AbortController();
  private wakers: Array<() => void> = [];
  private roomWaiters: Array<() => void> = [];
  private readonly loop: Promise<void>;

  constructor(private readonly options: SinkWorkerOptions) {
    this.name = options.sink.name;
    // run() handles its own failures; this catch only keeps a bug from becoming an unhandled rejection.
    this.loop = this.run().catch((err: unknown) => {
      options.logger.error({ error: scrubSecrets((err as Error).message ?? String(err)) }, 'sink worker stopped unexpectedly');
    });
  }

  /** Lines queued or being sent. */
  get pending(): number {
    return this.queue.length + this.inFlight;
  }

  /** Bytes of the lines queued or being sent (by entryFootprint). */
  get pendingBytes(): number {
    return this.heldBytes;
  }

  /**
   * Room for `lines` more of `bytes`; an empty worker always takes a chunk, however large (a single line over the
   * byte limit then goes alone), so nothing deadlocks.
   */
  hasRoom(lines: number, bytes = 0): boolean {
    return this.pending === 0 || (this.pending + lines <= this.options.capacity && this.heldBytes + bytes <= this.options.capacityBytes);
  }

  /** Resolves once there is room for `lines` of `bytes`; rejects when `signal` aborts. */
  async waitForRoom(lines: number, bytes: number, signal: AbortSignal): Promise<void> {
    while (!this.hasRoom(lines, bytes)) {
      signal.throwIfAborted();
      await new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener('abort', done);
          resolve();
        };
        this.roomWaiters.push(done);
        signal.addEventListener('abort', done, { once: true });
      });
    }
    signal.throwIfAborted();
  }

  /**
   * Queues lines. With `flush`, what is queued is sent without waiting for `maxWait`: the producer has
   * nothing more for now (a follower that caught up), so waiting would only add delay.
   */
  enqueue(entries: readonly LogEntry[], ticket: AckTicket, flush = false): void {
    if (this.stopping) throw new Error(`sink ${this.name} is shutting down`);
    if (entries.length === 0) return;
    if (flush) this.flushing = true;
    const at = Date.now();
    for (const entry of entries) {
      const bytes = entryBytes(entry);
      const footprint = entryFootprint(entry);
      this.queue.push({ entry, ticket, bytes, footprint, at });
      this.queuedBytes += bytes;
      this.heldBytes += footprint;
    }
    this.options.metrics?.queueBytes.set({ sink: this.name }, this.heldBytes);
    for (const g of byLog(entries)) this.options.metrics?.queue.inc({ server: g.server, log_type: g.log_type, sink: this.name }, g.n);
    this.wake();
  }

  /**
   * Sends everything queued without waiting for batches to fill, retrying until `timeoutMs`; then
   * gives up on what is left (it stays unacknowledged, so it is read again after a restart).
   * Resolves true when everything was delivered.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    this.stopping = true;
    this.wake();
    const timer = setTimeout(() => this.abort.abort(), timeoutMs);
    try {
      await this.loop;
    } finally {
      clearTimeout(timer);
    }
    const left = this.pending;
    if (left > 0) this.options.logger.warn({ lines: left }, 'sink did not take every line before the shutdown deadline: they are read again at the next start');
    return left === 0;
  }

  private wake(): void {
    const w = this.wakers;
    this.wakers = [];
    for (const f of w) f();
  }

  /** Waits for new lines, the shutdown, or `ms`. */
  private waitForWake(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        if (timer) clearTimeout(timer);
        resolve();
      };
      if (ms !== undefined) timer = setTimeout(() => {
        this.wakers = this.wakers.filter((f) => f !== done);
        resolve();
      }, ms);
      this.wakers.push(done);
    });
  }

  private batchFull(): boolean {
    return this.queue.length >= this.options.batch.maxLines || this.queuedBytes >= this.options.batch.maxBytes;
  }

  private async run(): Promise<void> {
    const { maxWaitMs } = this.options.batch;
    let next: Prepared | undefined;
    for (;;) {
      if (this.abort.signal.aborted) return;
      if (!next) {
        if (this.queue.length === 0) {
          this.flushing = false;
          if (this.stopping) return;
          await this.waitForWake();
          continue;
        }
        const closeAt = this.queue[0]!.at + maxWaitMs;
        if (!this.stopping && !this.flushing && !this.batchFull() && Date.now() < closeAt) {
          await this.waitForWake(closeAt - Date.now());
          continue;
        }
        next = this.prepare(this.takeBatch());
      }
      const current = next;
      next = undefined;
      const sending = this.deliver(current);
      // In a backlog the next batch is encoded while this one is on its way; it is still sent only after
      // this one was acknowledged and the positions saved.
      if (this.options.sink.encode && this.queue.length > 0 && (this.batchFull() || this.stopping || this.flushing)) {
        await new Promise((resolve) => setImmediate(resolve)); // let the send reach the socket first
        if (!this.abort.signal.aborted && this.queue.length > 0) next = this.prepare(this.takeBatch());
      }
      await sending;
      // The save is handed over before the producers waiting for room are let in: they parse the next page on the
      // event loop at once, and a save started after that would wait for it, with the next batch behind the save.
      const saved = this.options.afterAck?.();
      this.wakeRoomWaiters();
      await saved;
    }
  }

  private prepare(batch: Queued[]): Prepared {
    const encode = this.options.sink.encode;
    if (!encode) return { batch };
    // An encoding that fails (a bug) leaves the batch to send(), which encodes it again and reports what fails.
    const encoded = Promise.resolve()
      .then(() => encode.call(this.options.sink, batch.map((q) => q.entry)))
      .catch(() => undefined);
    return { batch, encoded };
  }

  private takeBatch(): Queued[] {
    const { maxLines, maxBytes } = this.options.batch;
    let n = 0;
    let bytes = 0;
    while (n < this.queue.length && n < maxLines && (n === 0 || bytes + this.queue[n]!.bytes <= maxBytes)) bytes += this.queue[n++]!.bytes;
    // End the batch where a follower chunk ends, when one does: a chunk's position commits only once all its
    // lines are acknowledged, so a chunk split over two batches would be sent again after a crash between them.
    if (n < this.queue.length && this.queue[n]!.ticket === this.queue[n - 1]!.ticket) {
      let cut = n - 1;
      while (cut > 0 && this.queue[cut - 1]!.ticket === this.queue[n]!.ticket) cut--;
      if (cut > 0) {
        for (let i = cut; i < n; i++) bytes -= this.queue[i]!.bytes;
        n = cut;
      }
    }
    const batch = this.queue.splice(0, n);
    this.queuedBytes -= bytes;
    this.inFlight += batch.length;
    return batch;
  }

  private async deliver(prepared: Prepared): Promise<void> {
    const { sink, retry, metrics, logger } = this.options;
    const { batch } = prepared;
    const encoded = await prepared.encoded;
    const entries = batch.map((q) => q.entry);
    const groups = byLog(entries);
    for (let attempt = 1; ; attempt++) {
      try {
        await sink.send(entries, this.abort.signal, encoded);
        for (const g of groups) metrics?.forwarded.inc({ server: g.server, log_type: g.log_type, sink: this.name }, g.n);
        this.finish(batch, groups);
        return;
      } catch (err) {
        if (this.abort.signal.aborted) return; // shutdown deadline: the batch stays unacknowledged
        const failure = err instanceof DeliveryError ? err : new DeliveryError((err as Error).message ?? String(err), true);
        // A sink's message may quote its receiver: no configured secret reaches the log or the dead-letter file.
        const message = scrubSecrets(failure.message);
        for (const g of groups) metrics?.failures.inc({ server: g.server, log_type: g.log_type, sink: this.name });
        if (!failure.retryable) {
          await this.deadLetter(batch, groups, message, failure.details.status);
          return;
        }
        if (retry.maxRetries !== undefined && attempt > retry.maxRetries) {
          await this.deadLetter(batch, groups, `gave up after ${retry.maxRetries} retries: ${message}`, failure.details.status);
          return;
        }
        const delay = failure.details.retryAfterMs ?? backoffDelay(attempt, { minMs: retry.minBackoffMs, maxMs: retry.maxBackoffMs }, this.options.random);
        logger.warn({ error: message, lines: batch.length, attempt, retryInMs: delay }, 'sending logs failed; retrying');
        await sleep(delay, this.abort.signal);
        if (this.abort.signal.aborted) return;
      }
    }
  }

  private async deadLetter(batch: Queued[], groups: ReturnType<typeof byLog>, reason: string, status?: number): Promise<void> {
    const { deadLetter, metrics, logger } = this.options;
    let where = 'dropped (no dead_letter_file configured)';
    if (deadLetter) {
      try {
        await deadLetter.write(this.name, reason, batch.map((q) => q.entry), status);
        where = deadLetter.path;
      } catch (err) {
        where = `dropped: cannot write ${deadLetter.path} (${(err as Error).message})`;
      }
    }
    for (const g of groups) metrics?.deadLetters.inc({ server: g.server, log_type: g.log_type, sink: this.name }, g.n);
    logger.error({ reason, lines: batch.length, dead_letter: where }, 'sink refused a batch for good; moved to the dead-letter file');
    this.finish(batch, groups);
  }

  private finish(batch: Queued[], groups: ReturnType<typeof byLog>): void {
    this.inFlight -= batch.length;
    for (const q of batch) this.heldBytes -= q.footprint;
    this.options.metrics?.queueBytes.set({ sink: this.name }, this.heldBytes);
    for (const g of groups) this.options.metrics?.queue.dec({ server: g.server, log_type: g.log_type, sink: this.name }, g.n);
    // One ack per ticket and run of lines: a chunk's lines are contiguous in the queue.
    let i = 0;
    while (i < batch.length) {
      const ticket = batch[i]!.ticket;
      let n = 0;
      while (i < batch.length && batch[i]!.ticket === ticket) {
        n++;
        i++;
      }
      ticket.ack(n);
    }
  }

  /** Lets in the producers waiting for room (run() does, after each batch it delivered or gave up on). */
  private wakeRoomWaiters(): void {
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const w of waiters) w();
  }
}
