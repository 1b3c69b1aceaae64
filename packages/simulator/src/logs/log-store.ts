import { LogFile } from './log-file.js';
import { fieldsOf, LOG_TYPES, logDate, makeHeader, type LogType } from './log-format.js';

export interface LogFileInfo {
  /** `wowzastreamingengine_access.log`, or a rolled `wowzastreamingengine_access.log.2025-01-14`. */
  name: string;
  logType: LogType;
  size: number;
  startDateMS: number;
  current: boolean;
}

export interface LogStoreSettings {
  /** The `#Software` header. */
  software: string;
  now?: () => number;
  /** Rolled files kept per log type (the server keeps about 5 days). */
  keepRolled?: number;
  /** A current file about to grow past this rolls first (size rotation). */
  maxFileBytes?: number;
}

/**
 * The server's log directory: one current file per log type and the files rolled from it. Files roll at the
 * first write of a new local day, when they reach the size limit, or on demand.
 */
export class LogStore {
  private readonly current = new Map<LogType, LogFile>();
  /** Oldest first. */
  private readonly rolled = new Map<LogType, LogFile[]>();
  private readonly now: () => number;
  private readonly keepRolled: number;
  private readonly maxFileBytes: number;

  constructor(private readonly settings: LogStoreSettings) {
    this.now = settings.now ?? Date.now;
    this.keepRolled = settings.keepRolled ?? 5;
    this.maxFileBytes = settings.maxFileBytes ?? 16 * 1024 * 1024;
    const start = this.now();
    for (const type of LOG_TYPES) {
      this.current.set(type, this.newFile(type, start));
      this.rolled.set(type, []);
    }
  }

  types(): LogType[] {
    return [...LOG_TYPES];
  }

  currentFile(type: LogType): LogFile {
    return this.current.get(type)!;
  }

  /** A current or rolled file by name. */
  file(name: string): LogFile | undefined {
    for (const type of LOG_TYPES) {
      const cur = this.current.get(type)!;
      if (cur.name === name) return cur;
      const found = this.rolled.get(type)!.find((f) => f.name === name);
      if (found) return found;
    }
    return undefined;
  }

  files(): LogFileInfo[] {
    const out: LogFileInfo[] = [];
    for (const type of LOG_TYPES) {
      for (const f of this.rolled.get(type)!) out.push(info(f, false));
      out.push(info(this.current.get(type)!, true));
    }
    return out;
  }

  /** Appends text to the current file of `type`, rolling it first when the day changed or it is full. */
  write(type: LogType, text: string): void {
    let cur = this.current.get(type)!;
    const bytes = Buffer.byteLength(text);
    const hasLines = cur.size > this.headerSize(cur);
    if (logDate(this.now()) > cur.header.date || (hasLines && cur.size + bytes > this.maxFileBytes)) {
      this.rotate(type);
      cur = this.current.get(type)!;
    }
    cur.append(text);
  }

  /** Rolls the current file of `type` to `<name>.YYYY-MM-DD` (or `.YYYY-MM-DD.N`); returns the rolled name. */
  rotate(type: LogType): string {
    const cur = this.current.get(type)!;
    const rolled = this.rolled.get(type)!;
    const base = `${cur.name}.${cur.header.date}`;
    let name = base;
    for (let n = 1; rolled.some((f) => f.name === name); n++) name = `${base}.${n}`;
    cur.name = name;
    rolled.push(cur);
    while (rolled.length > this.keepRolled) rolled.shift();
    // Like a real server: `#Start-Date` has one-second resolution, so two rotations within a second give
    // two files with the same date. Clients must tell them apart some other way.
    this.current.set(type, this.newFile(type, this.now()));
    return name;
  }

  private newFile(type: LogType, startMs: number): LogFile {
    return new LogFile(`${type}.log`, type, startMs, makeHeader(startMs, this.settings.software, fieldsOf(type)));
  }

  private headerSize(f: LogFile): number {
    const content = f.content();
    let pos = 0;
    while (pos < content.length && content[pos] === 0x23 /* # */) {
      const nl = content.indexOf(0x0a, pos);
      if (nl < 0) return content.length;
      pos = nl + 1;
    }
    return pos;
  }
}

function info(f: LogFile, current: boolean): LogFileInfo {
  return { name: f.name, logType: f.logType, size: f.size, startDateMS: f.startMs, current };
}
