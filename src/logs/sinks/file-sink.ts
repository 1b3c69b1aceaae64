import { entryDocument, type LogEntry } from '../log-entry.js';
import type { LogSink } from './log-sink.js';
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
    let text = '';
    for (const e of entries) text += JSON.stringify(entryDocument(e)) + '\n';
    return this.file.append(text);
  }

  close(): Promise<void> {
    return this.file.close();
  }
}
