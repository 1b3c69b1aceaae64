import type { LogFileInfo, LogPage, LogQuery, LogSource } from '../../src/logs/source/source.js';

/** The column orders Wowza writes (from the REST API docs), for building realistic logs. */
export const ACCESS_LOG_FIELDS = [
  'date', 'time', 'tz', 'x-event', 'x-category', 'x-severity', 'x-status', 'x-ctx', 'x-comment', 'x-vhost', 'x-app',
  'x-appinst', 'x-duration', 's-ip', 's-port', 's-uri', 'c-ip', 'c-proto', 'c-referrer', 'c-user-agent', 'c-client-id',
  'cs-bytes', 'sc-bytes', 'x-stream-id', 'x-spos', 'cs-stream-bytes', 'sc-stream-bytes', 'x-sname', 'x-sname-query',
  'x-file-name', 'x-file-ext', 'x-file-size', 'x-file-length', 'x-suri', 'x-suri-stem', 'x-suri-query', 'cs-uri-stem',
  'cs-uri-query',
];
export const ERROR_LOG_FIELDS = [
  'x-severity', 'x-category', 'x-event', 'date', 'time', 'c-client-id', 'c-ip', 'c-port', 'cs-bytes', 'sc-bytes',
  'x-duration', 'x-sname', 'x-stream-id', 'x-spos', 'sc-stream-bytes', 'cs-stream-bytes', 'x-file-size',
  'x-file-length', 'x-ctx', 'x-comment',
];

/** A tab-separated line for `fields`, `-` for every field `values` leaves out. */
export function w3cLine(fields: readonly string[], values: Readonly<Record<string, string>>): string {
  return fields.map((f) => values[f] ?? '-').join('\t');
}

interface MemoryFile {
  id: string;
  logType: string;
  startDate: string;
  content: Buffer;
}

export interface MemoryLogSourceOptions {
  /** Leave `logStartDate` out of pages, like servers that do not send it. */
  omitStartDate?: boolean;
  /** Answer an offset past the end with an error instead of an empty page. */
  rejectOffsetPastEnd?: boolean;
}

export interface RecordedCall {
  method: 'readLog' | 'readLogFile' | 'listLogFiles' | 'listLogTypes';
  name?: string;
  query?: LogQuery;
}

const SEVERITY_FILTERS: Readonly<Record<string, string>> = { noDebug: 'DEBUG', noInfo: 'INFO', noWarn: 'WARN', noError: 'ERROR' };

function headerBlock(startDate: string, fields: readonly string[]): string {
  return [
    '#Version: 1.0',
    `#Start-Date: ${startDate}`,
    '#Software: Wowza Streaming Engine 4.9.4 build20250114124522',
    `#Date: ${startDate.slice(0, 10)}`,
    `#Fields: ${fields.join('\t')}`,
  ].join('\n') + '\n';
}

/**
 * An in-memory stand-in for a WSE server's log endpoints, with the same byte-offset paging, filters,
 * negative `lineCount`, `/logfiles` listing and rotation (the current file rolls to
 * `<type>.log.<date>`). For tests and examples: no network, every request recorded in `calls`.
 */
export class MemoryLogSource implements LogSource {
  readonly calls: RecordedCall[] = [];
  private readonly current = new Map<string, MemoryFile>();
  private readonly fieldsOf = new Map<string, readonly string[]>();
  private readonly rolled: MemoryFile[] = [];
  private failures: Error[] = [];
  private listingError: Error | undefined;

  constructor(
    readonly server = 'wowza-test',
    private readonly options: MemoryLogSourceOptions = {},
  ) {}

  /** Creates a log type with its header block (`#Version` ... `#Fields`). */
  addLog(logType: string, fields: readonly string[], startDate = '2024-01-15 00:00:00'): this {
    this.fieldsOf.set(logType, fields);
    this.current.set(logType, { id: `${logType}.log`, logType, startDate, content: Buffer.from(headerBlock(startDate, fields)) });
    return this;
  }

  /** Appends lines (or raw text when given a string) to the current file of a log type. */
  append(logType: string, lines: readonly string[] | string): void {
    const file = this.file(logType);
    const text = typeof lines === 'string' ? lines : lines.map((l) => l + '\n').join('');
    file.content = Buffer.concat([file.content, Buffer.from(text)]);
  }

  /**
   * Rolls the current file to `<type>.log.<date>` (`.N` after it when taken: two rotations within one second)
   * and starts a new one (headers only) with `newStartDate`. `rolledName` names the rolled file otherwise.
   */
  rotate(logType: string, newStartDate: string, fields?: readonly string[], rolledName?: string): void {
    const file = this.file(logType);
    const base = rolledName ?? `${logType}.log.${file.startDate.replace(/[^0-9]/g, '').slice(0, 14)}`;
    let id = base;
    for (let n = 1; this.rolled.some((f) => f.id === id); n++) id = `${base}.${n}`;
    file.id = id;
    this.rolled.push(file);
    this.addLog(logType, fields ?? this.fieldsOf.get(logType)!, newStartDate);
  }

  /** Removes a rolled file, as the server's retention does. */
  deleteRolled(id: string): void {
    const i = this.rolled.findIndex((f) => f.id === id);
    if (i >= 0) this.rolled.splice(i, 1);
  }

  /** The next `n` requests fail with `error`. */
  failNext(n: number, error = new Error('connection refused')): void {
    for (let i = 0; i < n; i++) this.failures.push(error);
  }

  /** Every `{S}/logfiles` listing fails with `error` (a server whose list cannot be read), until called with none. */
  failListing(error?: Error): void {
    this.listingError = error;
  }

  /** Every file, rolled ones oldest first, then the current ones: what a model checks positions against. */
  allFiles(): ReadonlyArray<{ id: string; logType: string; startDate: string; content: Buffer }> {
    return [...this.rolled, ...this.current.values()];
  }

  /** Bytes in the current file of a log type. */
  size(logType: string): number {
    return this.file(logType).content.length;
  }

  /** Requests of one method, for assertions. */
  callsOf(method: RecordedCall['method']): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  async listLogTypes(): Promise<string[]> {
    this.calls.push({ method: 'listLogTypes' });
    this.maybeFail();
    return [...this.current.keys()];
  }

  async readLog(logType: string, q: LogQuery, signal?: AbortSignal): Promise<LogPage> {
    this.calls.push({ method: 'readLog', name: logType, query: { ...q } });
    signal?.throwIfAborted();
    this.maybeFail();
    const file = this.current.get(logType);
    if (!file) throw new Error(`log type ${logType} not found (HTTP 404)`);
    return this.page(file, q);
  }

  async listLogFiles(order: 'newestFirst' | 'oldestFirst', signal?: AbortSignal): Promise<LogFileInfo[]> {
    this.calls.push({ method: 'listLogFiles' });
    signal?.throwIfAborted();
    this.maybeFail();
    if (this.listingError) throw this.listingError;
    const files = [...this.rolled, ...this.current.values()].map((f) => ({
      id: f.id,
      fileSize: f.content.length,
      startDateMS: Date.parse(`${f.startDate.replace(' ', 'T')}Z`) || 0,
    }));
    files.sort((a, b) => a.startDateMS - b.startDateMS);
    return order === 'newestFirst' ? files.reverse() : files;
  }

  async readLogFile(name: string, q: LogQuery, signal?: AbortSignal): Promise<LogPage> {
    this.calls.push({ method: 'readLogFile', name, query: { ...q } });
    signal?.throwIfAborted();
    this.maybeFail();
    const file = [...this.rolled, ...this.current.values()].find((f) => f.id === name);
    if (!file) throw new Error(`log file ${name} not found (HTTP 404)`);
    return this.page(file, q);
  }

  private file(logType: string): MemoryFile {
    const f = this.current.get(logType);
    if (!f) throw new Error(`no log ${logType}: call addLog first`);
    return f;
  }

  private maybeFail(): void {
    const err = this.failures.shift();
    if (err) throw err;
  }

  /** Complete lines of a file with their byte ranges. */
  private lines(file: MemoryFile): Array<{ start: number; end: number; text: string }> {
    const out: Array<{ start: number; end: number; text: string }> = [];
    let pos = 0;
    for (;;) {
      const nl = file.content.indexOf(10, pos);
      if (nl < 0) return out; // a line still being written is not served
      out.push({ start: pos, end: nl + 1, text: file.content.toString('utf8', pos, nl) });
      pos = nl + 1;
    }
  }

  private passes(file: MemoryFile, text: string, q: LogQuery): boolean {
    const flags = new Set(q.filter ?? []);
    if (text.startsWith('#')) {
      if (text.startsWith('#Fields')) return !flags.has('noColumnHeadings');
      return !flags.has('noHeader');
    }
    const fields = this.fieldsOf.get(file.logType) ?? [];
    const severity = text.split('\t')[fields.indexOf('x-severity')];
    for (const [flag, sev] of Object.entries(SEVERITY_FILTERS)) if (flags.has(flag) && severity === sev) return false;
    if (q.search && !(q.regexSearch === 'true' ? new RegExp(q.search).test(text) : text.includes(q.search))) return false;
    return true;
  }

  private page(file: MemoryFile, q: LogQuery): LogPage {
    const length = file.content.length;
    const from = q.startOffset ?? 0;
    const count = q.lineCount ?? 100;
    const header = /^#Fields:\s*(.*)$/m.exec(file.content.toString('utf8'));
    const meta = {
      fileLength: length,
      ...(header ? { logFields: header[1]! } : {}),
      ...(this.options.omitStartDate ? {} : { logStartDate: file.startDate }),
      logVersion: '1.0',
      logSoftware: 'Wowza Streaming Engine 4.9.4 build20250114124522',
    };
    if (from > length) {
      if (this.options.rejectOffsetPastEnd) throw new Error(`startOffset ${from} is past the end of ${file.id} (HTTP 500)`);
      return { lines: [], startOffset: from, endOffset: from, ...meta };
    }
    const all = this.lines(file);
    if (count < 0) {
      const before = all.filter((l) => l.end <= from && this.passes(file, l.text, q)).slice(count);
      return { lines: before.map((l) => l.text), startOffset: before[0]?.start ?? from, endOffset: from, ...meta };
    }
    const lines: string[] = [];
    let end = from;
    for (const l of all) {
      if (l.start < from) continue;
      if (lines.length >= count) break;
      end = l.end;
      if (this.passes(file, l.text, q)) lines.push(l.text);
    }
    return { lines, startOffset: from, endOffset: end, ...meta };
  }
}
