import { entryDocument, type LogEntry } from '../log-entry.js';
import type { LogSink } from './log-sink.js';

/** Writes one JSON object per line (NDJSON) to a stream, stdout by default. */
export class StdoutSink implements LogSink {
  constructor(
    readonly name: string = 'stdout',
    private readonly out: NodeJS.WritableStream = process.stdout,
  ) {}

  send(entries: readonly LogEntry[]): Promise<void> {
    let text = '';
    for (const e of entries) text += JSON.stringify(entryDocument(e)) + '\n';
    // The callback fires once the stream handed the data on: only then is the batch acknowledged.
    return new Promise((resolve, reject) => {
      this.out.write(text, (err) => (err ? reject(err) : resolve()));
    });
  }

  async close(): Promise<void> {
    // stdout belongs to the process; nothing to close.
  }
}
