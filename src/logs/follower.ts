import { silentLogger, type Logger } from '../logger.js';
import { sleep } from '../abortable-sleep.js';
import type { LogFileInfo, LogPage, LogQuery, LogSource } from './log-source.js';
import type { LogPosition } from './position-store.js';
import { startDateHeader, W3cLogParser, type ParsedLine } from './w3c-parser.js';

export interface FollowedLine {
  /** The line exactly as the server holds it. */
  text: string;
  parsed: ParsedLine | DeferredLine;
}

/** A record line left unparsed (`deferRecords`), with the `#Fields` in force where it stands. */
export interface DeferredLine {
  kind: 'deferred';
  fields: string | undefined;
}

/** What one read produced, with the position reading continues at once these lines are delivered. */
export interface FollowerChunk {
  server: string;
  logType: string;
  lines: FollowedLine[];
  position: LogPosition;
  /** Length of the file the lines came from. */
  fileLength: number;
  /** Set while reading what remained of a rolled file (its `/logfiles` id). */
  rolledFile?: string;
  /** The read reached the end of the file: no more lines until the next poll, so batches need not wait. */
  caughtUp?: boolean;
}

export interface ServerFilter {
  /** `noDebug`, `noInfo`, `noWarn`, `noError`, `noHeader`, `noColumnHeadings`. */
  flags?: readonly string[];
  /** Only lines containing this text. */
  search?: string;
  /** Only lines matching this (Java) regular expression; takes the place of `search`. */
  regexSearch?: string;
}

export interface FollowerOptions {
  source: LogSource;
  logType: string;
  /**
   * Hands a chunk on. Resolves when it was accepted (a full queue keeps it pending: that is the
   * backpressure that pauses polling); rejects only when `signal` aborts.
   */
  deliver(chunk: FollowerChunk, signal: AbortSignal): Promise<void>;
  /** Where a log never seen before starts: its current end (default) or its beginning. */
  startAt?: 'end' | 'beginning';
  /** Saved position to resume from; takes precedence over `startAt`. */
  resumeFrom?: LogPosition;
  /** Lines per request (the API's `lineCount`). Default 1000. */
  lineCount?: number;
  /** Pause between polls once caught up. Default 2 s. */
  followIntervalMs?: number;
  /** Longest pause after repeated read failures. Default 60 s. */
  maxRetryDelayMs?: number;
  serverFilter?: ServerFilter;
  /** Zone of lines without a `tz` column. Default UTC. */
  timeZone?: string;
  /**
   * Leave record lines unparsed (kind `deferred`, with the layout they belong to) for the consumer to parse
   * where it likes; headers are still read, since positions carry the `#Fields` in force.
   */
  deferRecords?: boolean;
  /** With `startAt: 'end'` and no saved position: first deliver this many lines before the end (like `tail`). */
  tailLines?: number;
  logger?: Logger;
  onRotation?: () => void;
  onReadError?: (err: unknown) => void;
}

/** Lines read from the head of a file to learn its headers and `#Start-Date`. */
const HEAD_LINES = 10;
/** How often a server that sends no `logStartDate` has its file head checked for a new `#Start-Date`. */
const HEAD_CHECK_INTERVAL_MS = 30_000;
/** Rolled files probed for their identity when looking for the one a position belongs to. */
const MAX_IDENTITY_PROBES = 20;

/**
 * Failures that say nothing about the file (the server is unreachable, slow, or refuses our
 * credentials), by the `kind` the REST client's errors carry: asking again for the head cannot help.
 */
function isTransportFailure(err: unknown): boolean {
  const kind = (err as { kind?: unknown } | null)?.kind;
  return kind === 'network' || kind === 'timeout' || kind === 'tls' || kind === 'auth' || kind === 'aborted';
}

/** `line.trim() === ''` (the parser's blank line), without trimming the lines that start with a visible character. */
function isBlank(line: string): boolean {
  const c = line.charCodeAt(0);
  return c > 32 && c < 127 ? false : line.trim() === '';
}

function caughtUp(page: LogPage, from: number): boolean {
  return page.endOffset >= page.fileLength || page.endOffset <= from;
}

/**
 * Follows one log type of one server through the REST API: reads pages from the last offset until
 * caught up, waits, and again. Detects rotation (a shorter file, a new `logStartDate`, a new
 * `#Start-Date`) and reads the rest of the rolled file from `/logfiles` before starting the new one at 0.
 */
export class LogFollower {
  private readonly source: LogSource;
  private readonly logType: string;
  private readonly logger: Logger;
  private readonly parser: W3cLogParser;
  private readonly lineCount: number;
  private readonly intervalMs: number;
  private readonly maxRetryDelayMs: number;
  private position: LogPosition | undefined;
  private serverSendsStartDate: boolean | undefined;
  private lastHeadCheck = 0;

  constructor(private readonly options: FollowerOptions) {
    this.source = options.source;
    this.logType = options.logType;
    this.logger = options.logger ?? silentLogger();
    this.parser = new W3cLogParser({ defaultTimeZone: options.timeZone });
    this.lineCount = Math.max(1, Math.floor(options.lineCount ?? 1000));
    this.intervalMs = options.followIntervalMs ?? 2000;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 60_000;
    if (options.resumeFrom) {
      this.position = { ...options.resumeFrom };
      if (options.resumeFrom.fields) this.parser.setFields(options.resumeFrom.fields);
    }
  }

  /** The position after the last chunk handed on (not necessarily delivered yet). */
  get readPosition(): LogPosition | undefined {
    return this.position ? { ...this.position } : undefined;
  }

  /**
   * Reads until caught up; with `follow` keeps polling until `signal` aborts. Without `follow` a read
   * failure rejects; with it, failures are logged and retried with growing pauses.
   */
  async run(signal: AbortSignal, follow = true): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (!this.position) await this.start(signal);
        await this.readUntilCaughtUp(signal);
        failures = 0;
      } catch (err) {
        if (signal.aborted) return;
        if (!follow) throw err;
        failures++;
        this.options.onReadError?.(err);
        const retryInMs = Math.min(this.intervalMs * 2 ** Math.min(failures - 1, 16), this.maxRetryDelayMs);
        this.logger.warn({ error: (err as Error).message, failures, retryInMs }, 'reading the log failed');
        await sleep(retryInMs, signal);
        continue;
      }
      if (!follow) return;
      await sleep(this.intervalMs, signal);
    }
  }

  private query(startOffset: number, lineCount = this.lineCount): LogQuery {
    const q: LogQuery = { startOffset, lineCount };
    const f = this.options.serverFilter;
    if (f?.flags && f.flags.length > 0) q.filter = [...f.flags];
    if (f?.regexSearch) {
      q.search = f.regexSearch;
      q.regexSearch = 'true';
    } else if (f?.search) {
      q.search = f.search;
    }
    return q;
  }

  private emit(chunk: Omit<FollowerChunk, 'server' | 'logType'>, signal: AbortSignal): Promise<void> {
    return this.options.deliver({ server: this.source.server, logType: this.logType, ...chunk }, signal);
  }

  private parsePage(parser: W3cLogParser, page: LogPage): FollowedLine[] {
    // A header seen in the stream is the truth; the page's logFields only fills in when none was seen
    // (pages read from an offset, or with noHeader / noColumnHeadings).
    if (!parser.fields && page.logFields) parser.setFields(page.logFields);
    if (!this.options.deferRecords) return page.lines.map((text) => ({ text, parsed: parser.parseLine(text) }));
    return page.lines.map((text) => {
      if (text.startsWith('#') || isBlank(text)) return { text, parsed: parser.parseLine(text) };
      return { text, parsed: { kind: 'deferred', fields: parser.fields } };
    });
  }

  private noteStartDate(page: LogPage): void {
    if (page.logStartDate !== undefined && page.logStartDate !== '') this.serverSendsStartDate = true;
    else if (this.serverSendsStartDate === undefined) this.serverSendsStartDate = false;
  }

  /** The identity of the file a page came from, when the page tells it. */
  private identityOf(page: LogPage): string | undefined {
    if (page.logStartDate) return page.logStartDate;
    return page.startOffset === 0 ? startDateHeader(page.lines) : undefined;
  }

  /** First contact with a log that has no saved position. */
  private async start(signal: AbortSignal): Promise<void> {
    const head = await this.source.readLog(this.logType, { startOffset: 0, lineCount: HEAD_LINES }, signal);
    this.noteStartDate(head);
    this.lastHeadCheck = Date.now();
    const fileId = this.identityOf(head) ?? '';
    if (this.options.startAt === 'beginning') {
      this.position = { fileId, offset: 0 };
      this.logger.info({ file_id: fileId }, 'following log from its beginning');
      return;
    }
    for (const line of head.lines) if (line.startsWith('#')) this.parser.parseLine(line);
    if (!this.parser.fields && head.logFields) this.parser.setFields(head.logFields);
    const position: LogPosition = { fileId, offset: head.fileLength, ...this.fieldsOf(this.parser) };
    let lines: FollowedLine[] = [];
    const tail = this.options.tailLines ?? 0;
    if (tail > 0 && head.fileLength > 0) {
      const page = await this.source.readLog(this.logType, this.query(head.fileLength, -tail), signal);
      lines = this.parsePage(this.parser, page);
    }
    this.logger.info({ file_id: fileId, offset: position.offset }, 'following log from its current end');
    // Delivered even when empty, so the starting point is saved and a restart does not skip lines.
    await this.emit({ lines, position, fileLength: head.fileLength, caughtUp: true }, signal);
    this.position = position;
  }

  private fieldsOf(parser: W3cLogParser): { fields?: string } {
    return parser.fields ? { fields: parser.fields } : {};
  }

  private async readUntilCaughtUp(signal: AbortSignal): Promise<void> {
    if (this.headCheckDue()) {
      const rotated = await this.checkHead(signal);
      if (rotated) return this.readUntilCaughtUp(signal);
    }
    for (;;) {
      const pos = this.position!;
      let page: LogPage;
      try {
        page = await this.source.readLog(this.logType, this.query(pos.offset), signal);
      } catch (err) {
        // Some servers refuse an offset beyond the end of a file instead of answering empty: a
        // rotation looks like that. Look at the file head before calling it a failure.
        if (signal.aborted || pos.offset === 0 || isTransportFailure(err)) throw err;
        const head = await this.source.readLog(this.logType, { startOffset: 0, lineCount: HEAD_LINES }, signal).catch(() => undefined);
        const reason = head && this.rotationReason(head, true);
        if (!head || !reason) throw err;
        await this.followRotation(head, reason, signal);
        continue;
      }
      this.noteStartDate(page);
      const reason = this.rotationReason(page, false);
      if (reason) {
        await this.followRotation(page, reason, signal);
        continue;
      }
      const fileId = pos.fileId || (this.identityOf(page) ?? '');
      const lines = this.parsePage(this.parser, page);
      const next: LogPosition = { fileId, offset: Math.max(page.endOffset, pos.offset), ...this.fieldsOf(this.parser) };
      const moved = lines.length > 0 || next.offset !== pos.offset || next.fileId !== pos.fileId || next.fields !== pos.fields;
      const done = caughtUp(page, pos.offset);
      if (moved) await this.emit({ lines, position: next, fileLength: page.fileLength, caughtUp: done }, signal);
      this.position = next;
      if (done) return;
    }
  }

  private headCheckDue(): boolean {
    const pos = this.position!;
    return this.serverSendsStartDate !== true && pos.fileId !== '' && pos.offset > 0 && Date.now() - this.lastHeadCheck >= HEAD_CHECK_INTERVAL_MS;
  }

  /** For servers that send no `logStartDate`: a new `#Start-Date` at the file head means a new file. */
  private async checkHead(signal: AbortSignal): Promise<boolean> {
    this.lastHeadCheck = Date.now();
    const head = await this.source.readLog(this.logType, { startOffset: 0, lineCount: HEAD_LINES }, signal);
    this.noteStartDate(head);
    const reason = this.rotationReason(head, true);
    if (!reason) return false;
    await this.followRotation(head, reason, signal);
    return true;
  }

  /** Why `page` shows the file was replaced, or undefined. `fromHead`: the page was read at offset 0. */
  private rotationReason(page: LogPage, fromHead: boolean): string | undefined {
    const pos = this.position!;
    if (page.logStartDate && pos.fileId && page.logStartDate !== pos.fileId) return 'logStartDate changed';
    if (page.fileLength < pos.offset) return 'file is shorter than the read offset';
    if (fromHead && !page.logStartDate && pos.fileId) {
      const header = startDateHeader(page.lines);
      if (header !== undefined && header !== pos.fileId) return '#Start-Date header changed';
    }
    return undefined;
  }

  private async followRotation(current: LogPage, reason: string, signal: AbortSignal): Promise<void> {
    const old = this.position!;
    this.options.onRotation?.();
    let currentId = current.logStartDate || (current.startOffset === 0 ? startDateHeader(current.lines) : undefined);
    if (currentId === undefined) {
      const head = await this.source.readLog(this.logType, { startOffset: 0, lineCount: HEAD_LINES }, signal);
      currentId = this.identityOf(head);
    }
    this.logger.info({ reason, old_file_id: old.fileId, old_offset: old.offset, new_file_id: currentId ?? '' }, 'log file rotated: reading the rest of the rolled file first');
    await this.drainRolledFiles(old, currentId ?? '', signal);
    this.parser.reset();
    const position: LogPosition = { fileId: currentId ?? '', offset: 0 };
    await this.emit({ lines: [], position, fileLength: current.fileLength }, signal);
    this.position = position;
  }

  private isRolledFileOf(id: string): boolean {
    return id.startsWith(`${this.logType}.`) && id !== `${this.logType}.log`;
  }

  /** Reads what remained of the file `old` points into, and whole any files rolled after it. */
  private async drainRolledFiles(old: LogPosition, currentId: string, signal: AbortSignal): Promise<void> {
    const files = (await this.source.listLogFiles('oldestFirst', signal))
      .filter((f) => this.isRolledFileOf(f.id))
      .map((f, i) => ({ f, i }))
      .sort((a, b) => a.f.startDateMS - b.f.startDateMS || a.i - b.i)
      .map((x) => x.f);
    const identities = new Map<string, string>();
    const identify = async (file: LogFileInfo): Promise<string> => {
      let id = identities.get(file.id);
      if (id === undefined) {
        const head = await this.source.readLogFile(file.id, { startOffset: 0, lineCount: HEAD_LINES }, signal);
        id = this.identityOf(head) ?? '';
        identities.set(file.id, id);
      }
      return id;
    };

    let start = -1;
    let anyIdentity = false;
    if (old.fileId) {
      for (let i = files.length - 1, probes = 0; i >= 0 && probes < MAX_IDENTITY_PROBES; i--, probes++) {
        const id = await identify(files[i]!);
        if (id !== '') anyIdentity = true;
        if (id === old.fileId) {
          start = i;
          break;
        }
      }
    }
    if (start < 0) {
      // Without identities to go by, the rest is in the newest rolled file (the API's own advice).
      const newest = files[files.length - 1];
      if (newest && (!old.fileId || !anyIdentity)) {
        const id = await identify(newest);
        if (id === '' || id !== currentId) {
          await this.drainFile(newest, old.offset, this.parser, signal, id);
          return;
        }
      }
      this.logger.warn(
        { old_file_id: old.fileId, old_offset: old.offset, rolled_files: files.length },
        'log rotated but the rolled file it was read from is not listed any more: lines written between the last read and the rotation are lost',
      );
      return;
    }
    await this.drainFile(files[start]!, old.offset, this.parser, signal, old.fileId);
    for (const file of files.slice(start + 1)) {
      const id = await identify(file);
      if (id === currentId && id !== '') continue;
      this.logger.info({ file: file.id }, 'reading a whole rolled file that was rotated out while not followed');
      await this.drainFile(file, 0, new W3cLogParser({ defaultTimeZone: this.options.timeZone }), signal, id);
    }
  }

  private async drainFile(file: LogFileInfo, from: number, parser: W3cLogParser, signal: AbortSignal, fileId: string): Promise<void> {
    let offset = from;
    for (;;) {
      const page = await this.source.readLogFile(file.id, this.query(offset), signal);
      const lines = this.parsePage(parser, page);
      const next: LogPosition = { fileId, offset: Math.max(page.endOffset, offset), ...this.fieldsOf(parser) };
      await this.emit({ lines, position: next, fileLength: page.fileLength, rolledFile: file.id }, signal);
      this.position = next;
      if (caughtUp(page, offset)) return;
      offset = next.offset;
    }
  }
}
