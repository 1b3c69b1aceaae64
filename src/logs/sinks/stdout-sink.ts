import { appendDocument, type LogEntry } from '../log-entry.js';
import { Utf8Builder } from './utf8-builder.js';
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

  send(entries: readonly LogEntry[]): Promise<void> {
    if (this.closedBy) return Promise.reject(new DeliveryError(`stdout is closed (${this.closedBy.code ?? this.closedBy.message})`, false));
    const text = new Utf8Builder();
    for (const e of entries) {
      appendDocument(text, e);
      text.add('\n');
    }
    const body = text.toBuffer();
    // The callback fires once the stream handed the data on: only then is the batch acknowledged.
    return new Promise((resolve, reject) => {
      this.out.write(body, (err) => (err ? reject(err) : resolve()));
    });
  }

  async close(): Promise<void> {
    // stdout belongs to the process; nothing to close.
  }
}
