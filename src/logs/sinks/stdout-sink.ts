import type { LogEntry } from '../log-entry.js';
import { encodeNdjson } from './ndjson.js';
import { DeliveryError, type LogSink } from './log-sink.js';

/** Writes one JSON object per line (NDJSON) to a stream, stdout by default. */
export class StdoutSink implements LogSink {
  private closedBy: NodeJS.ErrnoException | undefined;

  constructor(
    readonly name: string = 'stdout',
    private readonly out: NodeJS.WritableStream = process.stdout,
  ) {
    // A reader that goes away (`serve | head`) makes the stream emit 'error' (EPIPE); unheard, that
    // kills the process. The sink fails its batches instead.
    out.on('error', (err: NodeJS.ErrnoException) => (this.closedBy ??= err));
  }

  encode(entries: readonly LogEntry[]): Buffer {
    return encodeNdjson(entries);
  }

  send(entries: readonly LogEntry[], _signal?: AbortSignal, encoded?: Buffer): Promise<void> {
    if (this.closedBy) return Promise.reject(new DeliveryError(`stdout is closed (${this.closedBy.code ?? this.closedBy.message})`, false));
    const body = encoded ?? this.encode(entries);
    // The callback fires once the stream handed the data on: only then is the batch acknowledged.
    return new Promise((resolve, reject) => {
      this.out.write(body, (err) => (err ? reject(err) : resolve()));
    });
  }

  async close(): Promise<void> {
    // stdout belongs to the process; nothing to close.
  }
}
