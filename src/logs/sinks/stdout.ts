import { write } from 'node:fs';
import type { LogEntry } from '../transform/entry.js';
import { encodeNdjson } from './ndjson.js';
import { DeliveryError, type LogSink } from './sink.js';

/** Where the sink writes: a stream (tests), or standard output itself. */
export type StdoutTarget = NodeJS.WritableStream | { fd: number };

/**
 * Writes all of `buf` to `fd`, in as many parts as a pipe takes; calls back once it is all in the pipe. Writing
 * the descriptor itself, not `process.stdout`, means an acknowledged batch is in the pipe whatever thread writes it
 * (a worker thread's `process.stdout` only hands data to the main thread).
 */
function writeAll(fd: number, buf: Buffer, done: (err: NodeJS.ErrnoException | null) => void, from = 0): void {
  write(fd, buf, from, buf.length - from, null, (err, written) => {
    if (err) return done(err);
    if (from + written < buf.length) return writeAll(fd, buf, done, from + written);
    done(null);
  });
}

/** Writes one JSON object per line (NDJSON) to standard output, or to a stream. */
export class StdoutSink implements LogSink {
  private closedBy: NodeJS.ErrnoException | undefined;

  constructor(
    readonly name: string = 'stdout',
    private readonly out: StdoutTarget = { fd: 1 },
  ) {
    // A reader that goes away (`serve | head`) makes the stream emit 'error' (EPIPE); unheard, that
    // kills the process. The sink fails its batches instead.
    if ('on' in out) out.on('error', (err: NodeJS.ErrnoException) => (this.closedBy ??= err));
  }

  encode(entries: readonly LogEntry[]): Buffer {
    return encodeNdjson(entries);
  }

  send(entries: readonly LogEntry[], _signal?: AbortSignal, encoded?: Buffer): Promise<void> {
    if (this.closedBy) return Promise.reject(new DeliveryError(`stdout is closed (${this.closedBy.code ?? this.closedBy.message})`, false));
    const body = encoded ?? this.encode(entries);
    // The callback fires once the data was handed on: only then is the batch acknowledged.
    return new Promise((resolve, reject) => {
      const done = (err: NodeJS.ErrnoException | null | undefined) => {
        if (!err) return resolve();
        if (err.code === 'EPIPE') this.closedBy ??= err;
        reject(this.closedBy ? new DeliveryError(`stdout is closed (${err.code ?? err.message})`, false) : err);
      };
      const out = this.out;
      if ('fd' in out) writeAll(out.fd, body, done);
      else out.write(body, done);
    });
  }

  async close(): Promise<void> {
    // stdout belongs to the process; nothing to close.
  }
}
