import { appendDocument, type LogEntry } from '../log-entry.js';
import type { LogSink } from './log-sink.js';
import { Utf8Builder } from './utf8-builder.js';
import { RotatingFile, type RotatingFileOptions } from './rotating-file.js';

/** Appends NDJSON to a local file, rotated by size. */
export class FileSink implements LogSink {
  private readonly file: RotatingFile;

  constructor(
    readonly name: string,
    options: RotatingFileOptions,
  ) {
    this.file = new RotatingFile(options);
  }

  send(entries: readonly LogEntry[]): Promise<void> {
    const text = new Utf8Builder();
    for (const e of entries) {
      appendDocument(text, e);
      text.add('\n');
    }
    return this.file.append(text.toBuffer());
  }

  close(): Promise<void> {
    return this.file.close();
  }
}
