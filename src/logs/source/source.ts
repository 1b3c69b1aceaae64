/**
 * What the log follower needs from a Wowza server: the log endpoints of the REST API, nothing else.
 * The REST client implements it for real servers; tests use an in-memory one.
 */

/** One answer of `GET {S}/logs/{logType}` or `GET {S}/logfiles/{name}`. */
export interface LogPage {
  /** The lines as the server holds them (headers included unless filtered out). */
  lines: string[];
  /** Byte offset of the first line returned. */
  startOffset: number;
  /** Byte offset just after the last line returned: where the next read continues. */
  endOffset: number;
  /** Current size of the file in bytes. */
  fileLength: number;
  /** The `#Fields` header of the file, for pages that carry no header line. */
  logFields?: string;
  /** The `#Start-Date` of the file: changes when the file rotates. */
  logStartDate?: string;
  logVersion?: string;
  logSoftware?: string;
}

export interface LogQuery {
  startOffset?: number;
  /** Lines to return (server default 100); negative means lines before `startOffset`. */
  lineCount?: number;
  /** Server-side filters: `noDebug`, `noInfo`, `noWarn`, `noError`, `noHeader`, `noColumnHeadings`. */
  filter?: string[];
  /** Only lines containing this text (or matching it, with `regexSearch`). */
  search?: string;
  /** `'true'` makes `search` a (Java) regular expression: the API takes `regexSearch` as a flag. */
  regexSearch?: 'true';
}

/** One entry of `GET {S}/logfiles`. */
export interface LogFileInfo {
  id: string;
  fileSize: number;
  startDateMS: number;
}

export interface LogSource {
  /** The configured server name used in labels and positions. */
  readonly server: string;
  /** The zone of its lines without a `tz` column, when configured for this server: over the file header's. */
  readonly timeZone?: string;
  listLogTypes(): Promise<string[]>;
  readLog(logType: string, q: LogQuery, signal?: AbortSignal): Promise<LogPage>;
  listLogFiles(order: 'newestFirst' | 'oldestFirst', signal?: AbortSignal): Promise<LogFileInfo[]>;
  readLogFile(name: string, q: LogQuery, signal?: AbortSignal): Promise<LogPage>;
}
