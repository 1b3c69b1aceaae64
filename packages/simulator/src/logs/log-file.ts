import { headerLines, type LogHeader, type LogType } from './log-format.js';

/** One log file: its bytes (growing in place, so appends stay cheap) and what its header says. */
export class LogFile {
  private buf: Buffer;
  private length = 0;

  constructor(
    public name: string,
    readonly logType: LogType,
    readonly startMs: number,
    readonly header: LogHeader,
  ) {
    this.buf = Buffer.alloc(16 * 1024);
    this.append(headerLines(header).join('\n') + '\n');
  }

  get size(): number {
    return this.length;
  }

  /** The file's bytes (a view: copy it to keep it across appends). */
  content(): Buffer {
    return this.buf.subarray(0, this.length);
  }

  append(text: string | Buffer): void {
    const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    if (this.length + bytes.length > this.buf.length) {
      const grown = Buffer.alloc(Math.max(this.buf.length * 2, this.length + bytes.length));
      this.buf.copy(grown, 0, 0, this.length);
      this.buf = grown;
    }
    bytes.copy(this.buf, this.length);
    this.length += bytes.length;
  }
}
