import type { LogGenerator } from './log-generator.js';
import { fieldsOf, formatRecord, isLogType, LOG_TYPES, type LogRecord, type LogType } from './log-format.js';
import type { LogFileInfo, LogStore } from './log-store.js';

/** A line as written (`\n` added when missing) or a record keyed by field name (missing fields are `-`). */
export type LogEntry = string | LogRecord;

export class LogTypeError extends Error {}

/** The simulator's log writing: test-driven appends and rotations, and a background writer. */
export class ServerLogs {
  private timer: NodeJS.Timeout | undefined;
  private written = 0;

  constructor(
    private readonly store: LogStore,
    private readonly generator: LogGenerator,
    private readonly now: () => number = Date.now,
  ) {}

  get types(): LogType[] {
    return this.store.types();
  }

  /** Appends complete lines to the current file of `logType`. */
  append(logType: string, entries: LogEntry | LogEntry[]): void {
    const type = this.type(logType);
    const list = Array.isArray(entries) ? entries : [entries];
    const when = this.now();
    const text = list.map((e) => (typeof e === 'string' ? (e.endsWith('\n') ? e : e + '\n') : formatRecord(fieldsOf(type), e, when) + '\n')).join('');
    if (text !== '') this.store.write(type, text);
  }

  /** Appends bytes exactly as given, e.g. half a line whose newline comes later. */
  appendRaw(logType: string, text: string): void {
    this.store.write(this.type(logType), text);
  }

  /** Appends `count` generated lines. */
  generate(logType: string, count = 1): void {
    const type = this.type(logType);
    this.append(type, Array.from({ length: count }, () => this.generator.next(type)));
  }

  /** Rolls the current file of one log type (or all); returns the rolled files' names. */
  rotate(logType?: string): string[] {
    const types = logType === undefined ? this.types : [this.type(logType)];
    return types.map((t) => this.store.rotate(t));
  }

  files(): LogFileInfo[] {
    return this.store.files();
  }

  /** A copy of a file's bytes, by file name or by log type (its current file). */
  bytes(fileOrType: string): Buffer {
    const file = isLogType(fileOrType) ? this.store.currentFile(fileOrType) : this.store.file(fileOrType);
    if (!file) throw new LogTypeError(`no log file "${fileOrType}": use a log type (${LOG_TYPES.join(', ')}) or a name from files()`);
    return Buffer.from(file.content());
  }

  /** Writes what a starting server logs. */
  writeStartup(version: string): void {
    for (const type of this.types) this.append(type, this.generator.startup(type, version));
  }

  /** Writes about `linesPerSecond` generated lines a second (7 access : 2 error : 1 stats) until stop(). */
  start(linesPerSecond: number): void {
    this.stop();
    if (!(linesPerSecond > 0)) return;
    let last = this.now();
    let carry = 0;
    this.timer = setInterval(() => {
      const t = this.now();
      // A stalled event loop catches up with at most a few seconds' worth, not a flood.
      carry = Math.min(carry + ((t - last) / 1000) * linesPerSecond, Math.max(1, linesPerSecond * 5));
      last = t;
      for (; carry >= 1; carry--) {
        const slot = this.written++ % 10;
        this.generate(slot < 7 ? 'wowzastreamingengine_access' : slot < 9 ? 'wowzastreamingengine_error' : 'wowzastreamingengine_stats');
      }
    }, 200);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private type(name: string): LogType {
    if (!isLogType(name)) throw new LogTypeError(`unknown log type "${name}": use ${LOG_TYPES.join(', ')}`);
    return name;
  }
}
