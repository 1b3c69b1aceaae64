import { createHash } from 'node:crypto';
import { silentLogger, type Logger } from '../../base/logger.js';
import { sleep } from '../../base/abortable-sleep.js';
import type { LogFileInfo, LogPage, LogQuery, LogSource } from './source.js';
import type { LogPosition } from '../acks/positions.js';
import { startDateHeader, W3cLogParser, type ParsedLine } from '../transform/w3c-parser.js';

export interface FollowedLine {
  /** The line exactly as the server holds it. */
  text: string;
  parsed: ParsedLine | DeferredLine;
}

/** A record line left unparsed (`deferRecords`), with the `#Fields` in force where it stands. */
export interface DeferredLine {
  kind: 'deferred';
  fields: string | undefined;
  /** The zone of the line's time when it has no `tz` column (the file header's, or the configured one). */
  zone: string;
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
  /** A rotation whose lost lines could not be recovered (the rolled file could not be found or read). */
  onRotationGap?: () => void;
  onReadError?: (err: unknown) => void;
  /** Lines a read returned although its end offset did not pass its start: not handed on again. */
  onRepeatedLines?: (lines: number) => void;
  /** A rotation seen sooner than two follow intervals after the one before, for the third time or more in a row. */
  onRapidRotation?: () => void;
  /** A round of reads succeeded (after failures, the log is being read again). */
  onReadOk?: () => void;
}

/** Lines read from the head of a file to learn its headers, `#Start-Date` and first record. */
const HEAD_LINES = 10;
/** Rolled files probed for their identity when looking for the one a position belongs to. */
const MAX_IDENTITY_PROBES = 20;
/** Tries at reading what a rotation left in the rolled file before it is given up as a gap. */
const MAX_ROTATION_ATTEMPTS = 3;
/** Pages read in a row at a reduced line count before the count is doubled again. */
const PAGES_BEFORE_GROWING = 16;

/** What tells one log file from another: its `#Start-Date` and a fingerprint of its first record line. */
interface FileIdentity {
  date: string;
  /** Undefined while the file holds no record (or the page did not start at the file's head). */
  head?: string;
}

/**
 * The first record line of a page read from offset 0, hashed. `#Start-Date` has one-second resolution and two
 * size rotations can fall in one second, so the date alone cannot tell files apart; like Vector's checksum
 * fingerprint, the first line after the headers does.
 */
function headFingerprint(page: LogPage): string | undefined {
  if (page.startOffset !== 0) return undefined;
  const first = page.lines.find(isRecordLine);
  return first === undefined ? undefined : createHash('sha256').update(first).digest('base64url').slice(0, 22);
}

/**
 * Failures that say nothing about the file (the server is unreachable, slow, or refuses our
 * credentials), by the `kind` the REST client's errors carry: asking again for the head cannot help.
 */
function isTransportFailure(err: unknown): boolean {
  const kind = (err as { kind?: unknown } | null)?.kind;
  return kind === 'network' || kind === 'timeout' || kind === 'tls' || kind === 'auth' || kind === 'aborted';
}

/** An answer over the client's size limit (max_response_size): fewer lines a request may fit. */
function isTooLarge(err: unknown): boolean {
  return (err as { kind?: unknown } | null)?.kind === 'too_large';
}

function isRecordLine(line: string): boolean {
  return !line.startsWith('#') && !isBlank(line);
}

/** `line.trim() === ''` (the parser's blank line), without trimming the lines that start with a visible character. */
function isBlank(line: string): boolean {
  const c = line.charCodeAt(0);
  return c > 32 && c < 127 ? false : line.trim() === '';
}

/** A page whose offsets cannot be used: the read fails (and is retried with growing pauses), nothing is saved. */
export class UnusableLogPageError extends Error {
  override name = 'UnusableLogPageError';
}

/**
 * The source, with every page's offsets checked: byte offsets are whole numbers from 0, and a position is never
 * taken from, nor a request sent with, a negative or broken one.
 */
function checkedSource(source: LogSource): LogSource {
  const check = (page: LogPage, what: string): LogPage => {
    for (const key of ['startOffset', 'endOffset', 'fileLength'] as const) {
      const v = page[key];
      if (!Number.isSafeInteger(v) || v < 0) throw new UnusableLogPageError(`${what} answered an unusable ${key} (${String(v)}): offsets are byte counts from 0`);
    }
    return page;
  };
  return {
    server: source.server,
    ...(source.timeZone !== undefined ? { timeZone: source.timeZone } : {}),
    listLogTypes: () => source.listLogTypes(),
    listLogFiles: (order, signal) => source.listLogFiles(order, signal),
    readLog: async (logType, q, signal) => check(await source.readLog(logType, q, signal), `{S}/logs/${logType}`),
    readLogFile: async (name, q, signal) => check(await source.readLogFile(name, q, signal), `{S}/logfiles/${name}`),
  };
}

function hasFilter(f: ServerFilter): boolean {
  return (f.flags?.length ?? 0) > 0 || !!f.search || !!f.regexSearch;
}

/** Whether two identities name the same file: the same date and the same first record (or none yet). */
function sameFile(a: FileIdentity, b: FileIdentity): boolean {
  return a.date === b.date && a.head === b.head;
}

/**
 * The position fields that identify a file besides its date: its fingerprint, or while it has none (no record
 * yet) the fingerprint of the file read before it, `prevHead`.
 */
function headOf(id: { head?: string | undefined }, prevHead?: string): { head?: string; prevHead?: string } {
  if (id.head !== undefined) return { head: id.head };
  return prevHead === undefined ? {} : { prevHead };
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
  /**
   * Lines asked for per request now: `lineCount`, halved while answers are over the size limit (long lines), and
   * doubled back after PAGES_BEFORE_GROWING pages that fit.
   */
  private pageLines: number;
  private pagesFitting = 0;
  private shrinkWarned = false;
  private readonly intervalMs: number;
  private readonly maxRetryDelayMs: number;
  private position: LogPosition | undefined;
  /** Failed tries at reading what the current rotation left behind. */
  private rotationFailures = 0;
  /** After a rotation to a file that was empty: whether it rolled too is still to be checked. */
  private unsureOfEmptyFile = false;
  /** Lines without progress were reported; again only after progress. */
  private repeatWarned = false;
  /** When the last rotation was followed, and how many in a row came less than two follow intervals apart. */
  private lastRotationAt = 0;
  private rapidRotations = 0;

  constructor(private readonly options: FollowerOptions) {
    this.source = checkedSource(options.source);
    this.logType = options.logType;
    this.logger = options.logger ?? silentLogger();
    this.parser = this.newParser();
    this.lineCount = Math.max(1, Math.floor(options.lineCount ?? 1000));
    this.pageLines = this.lineCount;
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
        this.options.onReadOk?.();
      } catch (err) {
        if (signal.aborted) return;
        if (this.fewerLinesPerPage(err)) continue;
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

  /**
   * After an answer over the size limit: asks for half as many lines from now on, and says so once. False when a
   * single line is asked for already (a line over the limit cannot be read: the failure is reported as such).
   */
  private fewerLinesPerPage(err: unknown): boolean {
    if (!isTooLarge(err) || this.pageLines <= 1) return false;
    this.pageLines = Math.max(1, Math.floor(this.pageLines / 2));
    this.pagesFitting = 0;
    if (!this.shrinkWarned) {
      this.logger.warn({ error: (err as Error).message, line_count: this.pageLines }, 'a page of the log was over the size limit (long lines): asking for fewer lines per request while they last');
      this.shrinkWarned = true;
    }
    return true;
  }

  /** A page fitted: after enough of them, the line count grows back towards line_count. */
  private pageFitted(): void {
    if (this.pageLines >= this.lineCount || ++this.pagesFitting < PAGES_BEFORE_GROWING) return;
    this.pageLines = Math.min(this.lineCount, this.pageLines * 2);
    this.pagesFitting = 0;
  }

  private query(startOffset: number, lineCount = this.pageLines): LogQuery {
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

  /** A parser for one file: lines without `tz` in the server's configured zone, else its header's, else the default. */
  private newParser(): W3cLogParser {
    return new W3cLogParser({
      ...(this.options.timeZone !== undefined ? { defaultTimeZone: this.options.timeZone } : {}),
      ...(this.source.timeZone !== undefined ? { timeZone: this.source.timeZone } : {}),
    });
  }

  private parsePage(parser: W3cLogParser, page: LogPage): FollowedLine[] {
    if (page.logStartDate) parser.noteStartDate(page.logStartDate);
    // A header seen in the stream is the truth; the page's logFields only fills in when none was seen
    // (pages read from an offset, or with noHeader / noColumnHeadings).
    if (!parser.fields && page.logFields) parser.setFields(page.logFields);
    if (!this.options.deferRecords) return page.lines.map((text) => ({ text, parsed: parser.parseLine(text) }));
    return page.lines.map((text) => {
      if (text.startsWith('#') || isBlank(text)) return { text, parsed: parser.parseLine(text) };
      return { text, parsed: { kind: 'deferred', fields: parser.fields, zone: parser.lineZone } };
    });
  }

  /** The `#Start-Date` of the file a page came from, when the page tells it. */
  private dateOf(page: LogPage): string | undefined {
    if (page.logStartDate) return page.logStartDate;
    return page.startOffset === 0 ? startDateHeader(page.lines) : undefined;
  }

  /** The identity of a file from a page read at its head. */
  private identityOf(head: LogPage): FileIdentity {
    const fingerprint = headFingerprint(head);
    return { date: this.dateOf(head) ?? '', ...(fingerprint ? { head: fingerprint } : {}) };
  }

  private readHead(signal: AbortSignal): Promise<LogPage> {
    return this.source.readLog(this.logType, { startOffset: 0, lineCount: HEAD_LINES }, signal);
  }

  /** First contact with a log that has no saved position. */
  private async start(signal: AbortSignal): Promise<void> {
    const head = await this.readHead(signal);
    const id = this.identityOf(head);
    const fileId = id.date;
    if (this.options.startAt === 'beginning') {
      const position: LogPosition = { fileId, offset: 0, ...headOf(id) };
      this.logger.info({ file_id: fileId }, 'following log from its beginning');
      // Saved before any line is read: a restart after this file rotated then finds the rest in the rolled file
      // instead of starting over at the beginning of the new one.
      await this.emit({ lines: [], position, fileLength: head.fileLength }, signal);
      this.position = position;
      return;
    }
    for (const line of head.lines) if (line.startsWith('#')) this.parser.parseLine(line);
    if (!this.parser.fields && head.logFields) this.parser.setFields(head.logFields);
    const position: LogPosition = { fileId, offset: head.fileLength, ...headOf(id), ...this.fieldsOf(this.parser) };
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

  /** Server-side filters leave lines out of pages: a page from offset 0 is then not the file's head. */
  private filtered(): boolean {
    return this.options.serverFilter !== undefined && hasFilter(this.options.serverFilter);
  }

  private fieldsOf(parser: W3cLogParser): { fields?: string } {
    return parser.fields ? { fields: parser.fields } : {};
  }

  private async readUntilCaughtUp(signal: AbortSignal): Promise<void> {
    // Once per round with new lines, the file head is compared with the one the position belongs to: a file
    // replaced within the same second, and grown past the offset by now, shows nothing else.
    let verified = false;
    for (;;) {
      const pos = this.position!;
      let page: LogPage;
      try {
        page = await this.source.readLog(this.logType, this.query(pos.offset), signal);
        this.pageFitted();
      } catch (err) {
        // Some servers refuse an offset beyond the end of a file instead of answering empty: a
        // rotation looks like that. Look at the file head before calling it a failure.
        if (signal.aborted || pos.offset === 0 || isTransportFailure(err) || (isTooLarge(err) && this.pageLines > 1)) throw err;
        const head = await this.readHead(signal).catch(() => undefined);
        const reason = head && this.rotationReason(head, true);
        if (!head || !reason) throw err;
        await this.followRotation(head, reason, signal);
        continue;
      }
      let reason = this.rotationReason(page, false);
      let head: LogPage | undefined;
      const records = page.lines.some(isRecordLine);
      // A position without a fingerprint was taken while its file held no record: with the first records it gets one,
      // and the file list is asked once whether a file of the same second rolled meanwhile (also right after a
      // rotation to an empty file, which may have filled and rolled while the rolled files were read).
      const checkList = pos.head === undefined && (records || this.unsureOfEmptyFile);
      // A page from offset 0 is the file's head when no server-side filter left lines out: comparing it costs no
      // request. Compared always: the file a position names at offset 0 may have rolled meanwhile (while rolled
      // files were read after a rotation), and the page then comes from the next one.
      const headPage = pos.offset === 0 && !this.filtered();
      if (!reason && (checkList || (headPage && pos.head !== undefined) || (!verified && page.endOffset > pos.offset && (pos.offset > 0 || records)))) {
        verified = true;
        head = headPage ? page : await this.readHead(signal);
        const current = this.identityOf(head);
        reason = this.rotationReason(head, true);
        // A file rolled within the same second looks just like the one the position was in: the file list tells.
        if (!reason && checkList) reason = await this.rolledBeforeFirstRecord(pos, current, signal);
        this.unsureOfEmptyFile = false;
        if (!reason && pos.head === undefined) {
          const { prevHead, ...rest } = pos;
          this.position = { ...rest, ...headOf(current, prevHead) };
        }
      }
      if (reason) {
        await this.followRotation(head, reason, signal);
        continue;
      }
      const at = this.position!;
      const fileId = at.fileId || (this.dateOf(page) ?? '');
      // A page from offset 0 is the file's head only when no server-side filter left lines out.
      const fingerprint = at.head ?? (this.filtered() ? undefined : headFingerprint(page));
      let lines = this.parsePage(this.parser, page);
      if (page.endOffset <= at.offset && lines.length > 0) {
        // Lines without progress are lines already handed on (a server whose end offset does not move): once is enough.
        this.options.onRepeatedLines?.(lines.length);
        if (!this.repeatWarned) this.logger.warn({ offset: at.offset, end_offset: page.endOffset, lines: lines.length }, 'the server returned lines without moving the end offset past the start: not shipped again (counted in wowza_log_repeated_lines_total; said once)');
        this.repeatWarned = true;
        lines = [];
      } else if (page.endOffset > at.offset) {
        this.repeatWarned = false;
      }
      const next: LogPosition = { fileId, offset: Math.max(page.endOffset, at.offset), ...headOf({ head: fingerprint }, at.prevHead), ...this.fieldsOf(this.parser) };
      const moved = lines.length > 0 || next.offset !== at.offset || next.fileId !== at.fileId || next.head !== at.head || next.fields !== at.fields;
      const done = caughtUp(page, at.offset);
      if (moved) await this.emit({ lines, position: next, fileLength: page.fileLength, caughtUp: done }, signal);
      this.position = next;
      if (done) return;
    }
  }

  /** Why `page` shows the file was replaced, or undefined. `fromHead`: the page was read at offset 0. */
  private rotationReason(page: LogPage, fromHead: boolean): string | undefined {
    const pos = this.position!;
    if (page.logStartDate && pos.fileId && page.logStartDate !== pos.fileId) return 'logStartDate changed';
    if (page.fileLength < pos.offset) return 'file is shorter than the read offset';
    if (!fromHead) return undefined;
    if (!page.logStartDate && pos.fileId) {
      const header = startDateHeader(page.lines);
      if (header !== undefined && header !== pos.fileId) return '#Start-Date header changed';
    }
    const head = headFingerprint(page);
    if (head !== undefined && pos.head !== undefined && head !== pos.head) return 'first line of the file changed (rotated within the same second)';
    // The whole file is headers while the position's file had a first record: a new file of the same second.
    if (head === undefined && pos.head !== undefined && page.startOffset === 0 && page.endOffset >= page.fileLength && page.lines.length < HEAD_LINES) {
      return 'the file holds no record yet while the one read had some (rotated within the same second)';
    }
    return undefined;
  }

  /** `head`: the new file's head, unfiltered, when the caller already read it. */
  /**
   * At most one rotation per follow interval. A server whose log start date or first line changes on every read
   * would otherwise cost a file list and head reads on every poll: from the third rapid rotation in a row it is said
   * once, counted, and followed with growing pauses (up to 30 follow intervals, or the longest retry pause when shorter).
   */
  private async paceRotations(signal: AbortSignal): Promise<void> {
    const since = Date.now() - this.lastRotationAt;
    this.rapidRotations = since < 2 * this.intervalMs ? this.rapidRotations + 1 : 0;
    if (this.rapidRotations >= 3) {
      this.options.onRapidRotation?.();
      if (this.rapidRotations === 3) {
        this.logger.warn({ follow_interval_ms: this.intervalMs }, 'the log rotates on almost every read (its start date or first line keeps changing): following it with growing pauses (counted in wowza_log_rapid_rotations_total)');
      }
      // Growing, but to no more than 30 follow intervals: a fast-rotating log still moves, a storm costs little.
      await sleep(Math.min(this.intervalMs * 2 ** Math.min(this.rapidRotations - 3, 16), this.maxRetryDelayMs, 30 * this.intervalMs), signal);
    } else if (since < this.intervalMs) {
      await sleep(this.intervalMs - since, signal);
    }
    signal.throwIfAborted();
    this.lastRotationAt = Date.now();
  }

  private async followRotation(head: LogPage | undefined, reason: string, signal: AbortSignal): Promise<void> {
    await this.paceRotations(signal);
    const old = this.position!;
    this.options.onRotation?.();
    const current = head ?? (await this.readHead(signal));
    const now = this.identityOf(current);
    this.logger.info({ reason, old_file_id: old.fileId, old_offset: old.offset, new_file_id: now.date }, 'log file rotated: reading the rest of the rolled file first');
    // The fingerprint of the newest file before the new one, for a new file that has no record yet.
    let before = old.head ?? old.prevHead;
    try {
      before = (await this.drainRolledFiles(old, now, signal)) ?? before;
      this.rotationFailures = 0;
    } catch (err) {
      // An unreachable server is retried like any read; anything else must not hold the log back for ever.
      // A page over the size limit is read again in smaller pages, not counted towards giving up.
      if (signal.aborted || isTransportFailure(err) || (isTooLarge(err) && this.pageLines > 1) || ++this.rotationFailures < MAX_ROTATION_ATTEMPTS) throw err;
      this.rotationFailures = 0;
      this.gap(old, `the rolled file could not be read (${(err as Error).message})`);
    }
    this.parser.reset();
    const position: LogPosition = { fileId: now.date, offset: 0, ...headOf(now, before) };
    await this.emit({ lines: [], position, fileLength: current.fileLength }, signal);
    this.position = position;
    // The new file was empty when its head was read, before the rolled files were: it may have filled and rolled
    // since, and an empty file of the same second looks the same. The next read checks the file list once.
    this.unsureOfEmptyFile = now.head === undefined;
  }

  /** Lines between the last read and a rotation that cannot be recovered: said once, counted, and left behind. */
  private gap(old: LogPosition, why: string): void {
    this.options.onRotationGap?.();
    this.logger.warn(
      { old_file_id: old.fileId, old_offset: old.offset },
      `log rotated and ${why}: lines written after the last read and before the rotation are lost; continuing at the start of the new file`,
    );
  }

  /**
   * Reads what remained of the file `old` points into, and whole any files rolled after it; returns the
   * fingerprint of the newest file it read, if any. The list's names and order are not documented (the
   * reference shows `order=newestFirst` only), so files are told apart by their heads, and the ones named after
   * the log type are looked at first.
   */
  /**
   * The rolled files `{S}/logfiles` lists, newest first: by start time where the list gives one, else as listed.
   * Files named after the log type (wowza-api.md: <type>.log.YYYY-MM-DD) are this log's; the others may be
   * another log type's, rolled at the same second, so one of them is taken only when its first line matches.
   */
  private async rolledFiles(signal: AbortSignal): Promise<{ listed: number; named: LogFileInfo[]; others: LogFileInfo[] }> {
    const listed = await this.source.listLogFiles('newestFirst', signal);
    const files = listed
      .map((f, i) => ({ f, i }))
      .sort((a, b) => b.f.startDateMS - a.f.startDateMS || a.i - b.i)
      .map((x) => x.f)
      .filter((f) => f.id !== `${this.logType}.log`);
    return { listed: listed.length, named: files.filter((f) => f.id.includes(this.logType)), others: files.filter((f) => !f.id.includes(this.logType)) };
  }

  private async identify(file: LogFileInfo, signal: AbortSignal): Promise<FileIdentity> {
    return this.identityOf(await this.source.readLogFile(file.id, { startOffset: 0, lineCount: HEAD_LINES }, signal));
  }

  /**
   * For a position without a fingerprint whose file now shows records: whether a file of the same date with
   * records was rolled after the file read before it, which is then the file the position was in.
   */
  private async rolledBeforeFirstRecord(pos: LogPosition, current: FileIdentity, signal: AbortSignal): Promise<string | undefined> {
    if (pos.fileId === '') return undefined; // no dates to go by: nothing to tell the files apart with
    try {
      const { named } = await this.rolledFiles(signal);
      for (const file of named.slice(0, MAX_IDENTITY_PROBES)) {
        const id = await this.identify(file, signal);
        if (sameFile(id, current)) continue;
        // Rotation order is date order: the newest rolled file of another date, or the one read before, ends it.
        if (id.date !== pos.fileId || (pos.prevHead !== undefined && id.head === pos.prevHead)) return undefined;
        if (id.head !== undefined) return 'a file with the same #Start-Date was rolled before its first record was read';
      }
    } catch (err) {
      if (signal.aborted || isTransportFailure(err)) throw err;
      this.logger.debug({ error: (err as Error).message }, 'cannot list the rolled files to check a new file: taking it as the one followed');
    }
    return undefined;
  }

  private async drainRolledFiles(old: LogPosition, current: FileIdentity, signal: AbortSignal): Promise<string | undefined> {
    const { listed, named, others } = await this.rolledFiles(signal);
    const identify = (file: LogFileInfo) => this.identify(file, signal);

    let probes = 0;
    let anyDate = false;
    /** Rolled files seen so far, newest first. */
    const rolled: Array<{ file: LogFileInfo; id: FileIdentity }> = [];
    /** Reads the rest of `rolled[at]` from the old offset, then whole the files rolled after it, oldest first. */
    const drainFrom = async (at: number): Promise<string | undefined> => {
      const { file, id } = rolled[at]!;
      await this.drainFile(file, old.offset, this.parser, signal, id, old.prevHead);
      // A file without records is known by the one before it: positions in it carry that one's fingerprint.
      let before = id.head ?? old.prevHead;
      for (const later of rolled.slice(0, at).reverse()) {
        this.logger.info({ file: later.file.id }, 'reading a whole rolled file that was rotated out while not followed');
        await this.drainFile(later.file, 0, this.newParser(), signal, later.id, before);
        before = later.id.head ?? before;
      }
      return rolled.slice(0, at + 1).find((r) => r.id.head !== undefined)?.id.head;
    };
    if (old.head !== undefined) {
      for (const file of named) {
        if (probes++ >= MAX_IDENTITY_PROBES) break;
        const id = await identify(file);
        if (id.date !== '') anyDate = true;
        if (sameFile(id, current)) continue;
        rolled.push({ file, id });
        if (id.date === old.fileId && id.head === old.head) return drainFrom(rolled.length - 1);
      }
      for (const file of others) {
        if (probes++ >= MAX_IDENTITY_PROBES) break;
        const id = await identify(file);
        if (id.date === old.fileId && id.head === old.head) {
          await this.drainFile(file, old.offset, this.parser, signal, id);
          return id.head;
        }
      }
    } else {
      // The position was taken before its file held a record, so only its date is known, and files rotated within
      // one second share it. Of those, the position is in the oldest one rolled after the file read before it
      // (`prevHead`); taking a newer one would skip the older ones' lines.
      let candidate: number | undefined;
      for (const file of named) {
        if (probes++ >= MAX_IDENTITY_PROBES) break;
        const id = await identify(file);
        if (id.date !== '') anyDate = true;
        if (sameFile(id, current)) continue;
        if (old.prevHead !== undefined && id.head === old.prevHead) break;
        if (candidate !== undefined && id.date !== old.fileId) break;
        rolled.push({ file, id });
        if (old.fileId !== '' && id.date === old.fileId) candidate = rolled.length - 1;
      }
      if (candidate !== undefined) return drainFrom(candidate);
    }
    // Without identities to go by, the rest is in the newest rolled file (the API's own advice).
    if (rolled.length > 0 && (old.fileId === '' || !anyDate)) return drainFrom(0);
    this.gap(old, `the file it was read from is not among the ${listed} files {S}/logfiles lists`);
    return undefined;
  }

  private async drainFile(file: LogFileInfo, from: number, parser: W3cLogParser, signal: AbortSignal, id: FileIdentity, prevHead?: string): Promise<void> {
    let offset = from;
    for (;;) {
      const page = await this.source.readLogFile(file.id, this.query(offset), signal);
      this.pageFitted();
      const lines = this.parsePage(parser, page);
      const next: LogPosition = { fileId: id.date, offset: Math.max(page.endOffset, offset), ...headOf(id, prevHead), ...this.fieldsOf(parser) };
      await this.emit({ lines, position: next, fileLength: page.fileLength, rolledFile: file.id }, signal);
      this.position = next;
      if (caughtUp(page, offset)) return;
      offset = next.offset;
    }
  }
}
