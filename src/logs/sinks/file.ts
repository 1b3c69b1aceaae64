import type { LogEntry } from '../transform/entry.js';
import { encodeNdjson } from './ndjson.js';
import type { LogSink } from './sink.js';
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

  encode(entries: readonly LogEntry[]): Buffer {
    return encodeNdjson(entries);
  }

  send(entries: readonly LogEntry[], _signal?: AbortSignal, encoded?: Buffer): Promise<void> {
    return this.file.append(encoded ?? this.encode(entries));
  }

  close(): Promise<void> {
    return this.file.close();
  }
}
