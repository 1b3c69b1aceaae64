import type { LogFile } from './log-file.js';
import { logInstant } from './log-format.js';

/**
 * The query of `{S}/logs/{logType}` and `{S}/logfiles/{logName}` and the page it returns. Offsets are UTF-8
 * byte positions. `endOffset` is just after the last line scanned, whether returned or filtered out, so
 * asking again from it never repeats nor skips a line; a last line without its newline yet is not read.
 */

export const FILTERS = ['noDebug', 'noInfo', 'noWarn', 'noError', 'noHeader', 'noColumnHeadings'] as const;
const SEVERITY_FILTER: Record<string, string> = { DEBUG: 'noDebug', INFO: 'noInfo', WARN: 'noWarn', ERROR: 'noError' };

export interface LogQuery {
  /** Positive: lines from `startOffset` on; negative: lines before it. */
  lineCount: number;
  /** Undefined: the start of the file (positive count) or its end (negative count). */
  startOffset: number | undefined;
  filters: ReadonlySet<string>;
  filterStr: string;
  search: string;
  regexSearch: boolean;
  /** Epoch ms bounds on the line's date and time (only on `/logs/{logType}`). */
  startDate: number | undefined;
  endDate: number | undefined;
}

export type ParsedLogQuery = { ok: true; query: LogQuery; matcher: LineMatcher } | { ok: false; message: string };

export interface LogPage {
  logLines: string[];
  retLineCount: number;
  startOffset: number;
  endOffset: number;
  fileLength: number;
  logFields: string;
  logVersion: string;
  logSoftware: string;
  logStartDate: string;
  logDate: string;
  /** The date bounds asked for (epoch ms), as the strings the reference types them; empty when not given. */
  startDate: string;
  endDate: string;
  filterStr: string;
  searchStr: string;
  regexSearch: boolean;
}

type LineMatcher = (line: string, columns: Columns) => boolean;

interface Columns {
  severity: number;
  date: number;
  time: number;
}

const DEFAULT_LINE_COUNT = 100;

function integer(name: string, raw: string | null): { value?: number; error?: string } {
  if (raw === null || raw === '') return {};
  if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(Number(raw))) return { error: `${name} must be an integer, got "${raw}"` };
  return { value: Number(raw) };
}

/** head/tail: `true` (use lineCount), a count, or `false`/absent. */
function countFlag(name: string, raw: string | null, fallback: number): { value?: number; error?: string } {
  if (raw === null || raw.toLowerCase() === 'false') return {};
  if (raw === '' || raw.toLowerCase() === 'true') return { value: fallback };
  const n = integer(name, raw);
  if (n.error || n.value! <= 0) return { error: `${name} must be true or a positive line count, got "${raw}"` };
  return n;
}

export function parseLogQuery(q: URLSearchParams, opts: { dates: boolean }): ParsedLogQuery {
  const lineCount = integer('lineCount', q.get('lineCount'));
  const startOffset = integer('startOffset', q.get('startOffset'));
  for (const e of [lineCount.error, startOffset.error]) if (e) return { ok: false, message: e };
  if (startOffset.value !== undefined && startOffset.value < 0) return { ok: false, message: `startOffset must not be negative, got ${startOffset.value}` };
  const count = lineCount.value ?? DEFAULT_LINE_COUNT;
  const head = countFlag('head', q.get('head'), Math.abs(count));
  const tail = countFlag('tail', q.get('tail'), Math.abs(count));
  for (const e of [head.error, tail.error]) if (e) return { ok: false, message: e };
  if (head.value !== undefined && tail.value !== undefined) return { ok: false, message: 'use head or tail, not both' };

  const filterStr = q.get('filter') ?? '';
  const filters = new Set(
    filterStr
      .split(/[|,]/)
      .map((f) => f.trim())
      .filter((f) => f !== ''),
  );
  for (const f of filters) {
    if (!(FILTERS as readonly string[]).includes(f)) return { ok: false, message: `unknown filter "${f}": use ${FILTERS.join('|')}` };
  }

  const search = q.get('search') ?? '';
  const regexSearch = (q.get('regexSearch') ?? '').toLowerCase() === 'true';
  let test: (line: string) => boolean = () => true;
  if (search !== '' && regexSearch) {
    let re: RegExp;
    try {
      re = new RegExp(search);
    } catch (err) {
      return { ok: false, message: `regexSearch: invalid regular expression: ${(err as Error).message}` };
    }
    test = (line) => re.test(line);
  } else if (search !== '') {
    test = (line) => line.includes(search);
  }

  let startDate: number | undefined;
  let endDate: number | undefined;
  if (opts.dates) {
    const s = integer('startDate', q.get('startDate'));
    const e = integer('endDate', q.get('endDate'));
    for (const err of [s.error, e.error]) if (err) return { ok: false, message: `${err} (epoch milliseconds)` };
    startDate = s.value;
    endDate = e.value;
  }

  const query: LogQuery = {
    lineCount: tail.value !== undefined ? -tail.value : head.value !== undefined ? head.value : count,
    startOffset: tail.value !== undefined ? undefined : head.value !== undefined ? 0 : startOffset.value,
    filters,
    filterStr,
    search,
    regexSearch,
    startDate,
    endDate,
  };

  const matcher: LineMatcher = (line, cols) => {
    if (line.startsWith('#')) {
      if (filters.has(line.startsWith('#Fields:') ? 'noColumnHeadings' : 'noHeader')) return false;
      return test(line);
    }
    const values = line.split('\t');
    const severityFilter = SEVERITY_FILTER[values[cols.severity] ?? ''];
    if (severityFilter && filters.has(severityFilter)) return false;
    if (startDate !== undefined || endDate !== undefined) {
      const when = logInstant(values[cols.date]!, values[cols.time]!);
      if (Number.isFinite(when) && ((startDate !== undefined && when < startDate) || (endDate !== undefined && when > endDate))) return false;
    }
    return test(line);
  };
  return { ok: true, query, matcher };
}

function columnsOf(file: LogFile): Columns {
  const names = file.header.fields.split('\t');
  return { severity: names.indexOf('x-severity'), date: names.indexOf('date'), time: names.indexOf('time') };
}

const lineAt = (buf: Buffer, from: number, to: number) => buf.toString('utf8', from, to > from && buf[to - 1] === 0x0d ? to - 1 : to);

export function readLogPage(file: LogFile, q: LogQuery, matcher: LineMatcher): LogPage {
  const buf = file.content();
  const size = buf.length;
  // Only complete lines are readable: the writer may be half-way through the last one.
  const complete = buf.lastIndexOf(0x0a) + 1;
  const cols = columnsOf(file);
  const lines: string[] = [];
  const want = Math.abs(q.lineCount);
  let startOffset: number;
  let endOffset: number;

  if (q.lineCount >= 0) {
    startOffset = q.startOffset ?? 0;
    let pos = startOffset;
    while (lines.length < want && pos < complete) {
      const nl = buf.indexOf(0x0a, pos);
      const line = lineAt(buf, pos, nl);
      pos = nl + 1;
      if (matcher(line, cols)) lines.push(line);
    }
    endOffset = Math.max(pos, startOffset);
  } else {
    const requested = q.startOffset ?? complete;
    if (requested > size) {
      startOffset = endOffset = requested;
    } else {
      // Lines that end at or before the requested offset.
      const end = requested === 0 ? 0 : buf.lastIndexOf(0x0a, requested - 1) + 1;
      let pos = end;
      while (lines.length < want && pos > 0) {
        const lineStart = pos >= 2 ? buf.lastIndexOf(0x0a, pos - 2) + 1 : 0;
        const line = lineAt(buf, lineStart, pos - 1);
        pos = lineStart;
        if (matcher(line, cols)) lines.unshift(line);
      }
      startOffset = pos;
      endOffset = end;
    }
  }

  const h = file.header;
  return {
    logLines: lines,
    retLineCount: lines.length,
    startOffset,
    endOffset,
    fileLength: size,
    logFields: h.fields,
    logVersion: h.version,
    logSoftware: h.software,
    logStartDate: h.startDate,
    logDate: h.date,
    startDate: q.startDate === undefined ? '' : String(q.startDate),
    endDate: q.endDate === undefined ? '' : String(q.endDate),
    filterStr: q.filterStr,
    searchStr: q.search,
    regexSearch: q.regexSearch,
  };
}
