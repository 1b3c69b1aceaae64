import { isKnownZone } from '../../base/time-zones.js';
import { TimestampConverter, type TimestampResult } from './timestamp.js';
import { LineWriter } from './line-writer.js';
import { numericValue, TIME_FIELDS } from './w3c-columns.js';

/** A field value: numbers for byte/size/duration/port columns, null for `-`, else the text as written. */
export type FieldValue = string | number | null;

/**
 * One log line as an object. Fields are named by the `#Fields` header; `date`, `time` and `tz` become
 * `timestamp` (ISO-8601 UTC, null when the line has no usable time). A line that could not be mapped
 * carries `raw` (the text) and `parse_error` (why) instead of fields.
 */
export type LogRecord = Record<string, FieldValue>;

export type ParsedLine =
  | { kind: 'record'; record: LogRecord; /** epoch ms of `timestamp`, when there is one */ timeMs?: number }
  | { kind: 'header'; name: string; value: string }
  | { kind: 'blank' };

/** Columns holding counts of bytes, sizes, durations, positions or ports, which become numbers. */
const NUMERIC_FIELD = /(?:^|-)(?:bytes|size|length|duration|port|spos)$/;

/** Parses the value of a `#Fields:` header (or a page's `logFields`) into column names. */
export function parseFieldsHeader(text: string): string[] {
  return text
    .replace(/^#?\s*Fields:\s*/i, '')
    .split(/[\t ]+/)
    .filter((f) => f !== '');
}

export interface Layout {
  readonly fields: readonly string[];
  readonly text: string;
  readonly numeric: readonly boolean[];
  readonly date: number;
  readonly time: number;
  readonly tz: number;
  /** Builds the record of a line whose time was read (or that has no date/time columns); see compileRecord. */
  readonly build: RecordBuilder | undefined;
  /** Made on first use, for compiled layouts only. */
  writer?: LineWriter;
}

type RecordBuilder = new (values: readonly string[], timestamp: string | null, numeric: typeof numericValue) => LogRecord;

function layoutOf(fields: string[]): Layout {
  const layout = {
    fields,
    text: fields.join(' '),
    numeric: fields.map((f) => NUMERIC_FIELD.test(f)),
    date: fields.indexOf('date'),
    time: fields.indexOf('time'),
    tz: fields.indexOf('tz'),
  };
  return { ...layout, build: compileRecord(layout) };
}

// eslint-disable-next-line no-control-regex -- names with control characters take the generic path
const PLAIN_NAME = /^(?!\d+$)[^\u0000-\u001f]{1,200}$/;
const RESERVED_NAMES = new Set(['timestamp', 'raw', 'parse_error', '__proto__', 'constructor']);

/** The record's JSON as a JSON string (a Loki line), written by its layout's class; see quotedRecordJson. */
const QUOTED_JSON = Symbol('quotedJson');
/** The record's JSON after a given head, written by its layout's class; see recordJson and documentJson. */
const RECORD_JSON = Symbol('recordJson');
/** The same for a line known to hold nothing JSON escapes: no value is checked. */
const CLEAN_RECORD_JSON = Symbol('cleanRecordJson');

/**
 * What JSON.stringify escapes, in a whole line but its tab separators: a line without any of it has values that
 * are all written as they are. One test of the line instead of one per value.
 */
// Written as the complement of what may stand as it is (tab, then everything from space up but `"`, `\` and
// surrogates): V8 scans a negated class about twice as fast as the same set spelled out (340 against 650 ns a line).
const NEEDS_ESCAPING = /[^\t\u0020-\u0021\u0023-\u005b\u005d-\ud7ff\ue000-\uffff]/;

/** Whether no value parsed from `line` (a record line, split on tabs) needs escaping in JSON. */
export function cleanForJson(line: string): boolean {
  return !NEEDS_ESCAPING.test(line);
}

// eslint-disable-next-line no-control-regex -- the characters JSON.stringify escapes, in a value written twice
const ESCAPED_TWICE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string value of a record as JSON: `"value"`, escaped by JSON.stringify only when it needs escaping. */
function jsonValue(value: string): string {
  return ESCAPED_TWICE.test(value) ? JSON.stringify(value) : `"${value}"`;
}

/** A string value of a record as it appears inside the quoted JSON: `\"value\"`. */
function quotedValue(value: string): string {
  return ESCAPED_TWICE.test(value) ? JSON.stringify(JSON.stringify(value)).slice(1, -1) : `\\"${value}\\"`;
}

/**
 * Compiles a record class for one `#Fields` layout: its constructor stores every column in a fixed order,
 * and its prototype writes the record's JSON as a JSON string in one pass (what a Loki push carries; the
 * same text as `JSON.stringify(JSON.stringify(record))` for half the work). A record built one key at a
 * time with 30+ columns turns into a hash table in V8, and everything that touches it afterwards (filters,
 * JSON.stringify) is several times slower. Field names only ever appear as JSON string literals in the
 * generated code. Layouts with unusual names (duplicates, integer-like names that objects order first,
 * reserved keys) are not compiled and take the generic path.
 */
function compileRecord(layout: Omit<Layout, 'build'>): RecordBuilder | undefined {
  const { fields } = layout;
  if (fields.length > 500 || new Set(fields).size !== fields.length) return undefined;
  if (fields.some((f) => !PLAIN_NAME.test(f) || RESERVED_NAMES.has(f))) return undefined;
  const withTime = layout.date >= 0 && layout.time >= 0;
  const assign: string[] = ['this.timestamp = timestamp;'];
  // The key of each column as it appears inside the quoted JSON, e.g. `,\"c-ip\":`.
  const quotedKey = (name: string, first: boolean) => JSON.stringify(`${first ? '' : ','}${JSON.stringify(JSON.stringify(name)).slice(1, -1)}:`);
  const quoted: string[] = [`'"{' + ${quotedKey('timestamp', true)} + ((x = this.timestamp) === null ? 'null' : quotedValue(x))`];
  const plainKey = (name: string, first: boolean) => JSON.stringify(`${first ? '' : ','}${JSON.stringify(name)}:`);
  const plain: string[] = [`head + ${plainKey('timestamp', true)} + ((x = this.timestamp) === null ? 'null' : jsonValue(x))`];
  const clean: string[] = [`head + ${plainKey('timestamp', true)} + ((x = this.timestamp) === null ? 'null' : '"' + x + '"')`];
  fields.forEach((name, i) => {
    if (withTime && TIME_FIELDS.has(name)) return;
    const key = JSON.stringify(name);
    const read = layout.numeric[i] ? `(v[${i}] === '-' ? null : numeric(v[${i}]))` : `(v[${i}] === '-' ? null : v[${i}])`;
    assign.push(`this[${key}] = ${read};`);
    const value = layout.numeric[i] ? `typeof x === 'number' ? '' + x : quotedValue(x)` : 'quotedValue(x)';
    quoted.push(`${quotedKey(name, false)} + ((x = this[${key}]) === null ? 'null' : ${value})`);
    const plainValue = layout.numeric[i] ? `typeof x === 'number' ? '' + x : jsonValue(x)` : 'jsonValue(x)';
    plain.push(`${plainKey(name, false)} + ((x = this[${key}]) === null ? 'null' : ${plainValue})`);
    const cleanValue = layout.numeric[i] ? `typeof x === 'number' ? '' + x : '"' + x + '"'` : `'"' + x + '"'`;
    clean.push(`${plainKey(name, false)} + ((x = this[${key}]) === null ? 'null' : ${cleanValue})`);
  });
  const source = `
    class LogRecord { constructor(v, timestamp, numeric) { ${assign.join(' ')} } }
    LogRecord.prototype[QUOTED_JSON] = function () { let x; return ${quoted.join(' + ')} + '}"'; };
    LogRecord.prototype[RECORD_JSON] = function (head) { let x; return ${plain.join(' + ')} + '}'; };
    LogRecord.prototype[CLEAN_RECORD_JSON] = function (head) { let x; return ${clean.join(' + ')} + '}'; };
    return LogRecord;`;
  // Generated from JSON-quoted names only.
  return new Function('QUOTED_JSON', 'RECORD_JSON', 'CLEAN_RECORD_JSON', 'quotedValue', 'jsonValue', source)(
    QUOTED_JSON,
    RECORD_JSON,
    CLEAN_RECORD_JSON,
    quotedValue,
    jsonValue,
  ) as RecordBuilder;
}

type JsonWriter = (this: LogRecord, head: string) => string;

/**
 * `head` followed by the record's JSON without its `{`, written in one pass by the layout's class; undefined for
 * records of the generic path. `clean`: the line the record came from passed cleanForJson, so no value is
 * checked for escaping. `documentJson(r, '{', ...)` is `JSON.stringify(r)`, byte for byte.
 */
export function documentJson(record: LogRecord, head: string, clean: boolean): string | undefined {
  const write = (record as { [RECORD_JSON]?: JsonWriter; [CLEAN_RECORD_JSON]?: JsonWriter })[clean ? CLEAN_RECORD_JSON : RECORD_JSON];
  return write ? write.call(record, head) : undefined;
}

/**
 * `JSON.stringify(record)`, byte for byte: written in one pass by the layout's class for compiled records
 * (numbers as `'' + n`, which is what JSON.stringify writes for the finite numbers a record holds; strings
 * escaped by JSON.stringify itself whenever they need it). About half the work of JSON.stringify on V8 11.
 */
export function recordJson(record: LogRecord): string {
  return documentJson(record, '{', false) ?? JSON.stringify(record);
}

/** `JSON.stringify(JSON.stringify(record))`: written in one pass for records of compiled layouts. */
export function quotedRecordJson(record: LogRecord): string {
  const write = (record as { [QUOTED_JSON]?: () => string })[QUOTED_JSON];
  return write ? write.call(record) : JSON.stringify(JSON.stringify(record));
}

export interface W3cParserOptions {
  /** Zone of lines without a `tz` column (error and stats logs) while no file header names one. Default `UTC`. */
  defaultTimeZone?: string;
  /** Zone of lines without a `tz` column whatever the header says (the server's `log_time_zone`). */
  timeZone?: string;
  /** Column names in force before any header line is seen (e.g. remembered from an earlier read). */
  fields?: string | string[];
}

/**
 * Parses Wowza's W3C-style logs line by line. Stateful: a `#Fields` header defines the shape of every
 * record after it, also when a new header appears mid-stream. Never throws on input.
 */
export class W3cLogParser {
  private layout: Layout | undefined;
  /**
   * The zone of lines without a `tz` column (error and stats logs). Their times are the server's local time, and the
   * file's `#Start-Date` header names its zone (`#Start-Date: 2017-11-20 14:29:17 IST`, a real 4.7.1 server): the
   * configured server zone first, then the header's, then the default.
   */
  private readonly zones: ZoneChoice;
  private readonly timestamps = new TimestampConverter();

  constructor(options: W3cParserOptions = {}) {
    this.zones = new ZoneChoice(options.defaultTimeZone ?? 'UTC', options.timeZone);
    if (options.fields !== undefined) this.setFields(options.fields);
  }

  /** The zone lines without a `tz` column are read in now. */
  get lineZone(): string {
    return this.zones.zone;
  }

  /** The file's start date as the API tells it (`logStartDate`): its zone counts until a header line names one. */
  noteStartDate(text: string): void {
    this.zones.fromStartDate(text, false);
  }

  /** The `#Fields` in force, space-separated, or undefined before any is known. */
  get fields(): string | undefined {
    return this.layout?.text;
  }

  /** Sets the columns from a header value or a list; an empty header leaves the current one in force. */
  setFields(fields: string | string[]): void {
    const list = typeof fields === 'string' ? parseFieldsHeader(fields) : fields.filter((f) => f !== '');
    if (list.length > 0) this.layout = layoutOf(list);
  }

  /**
   * The fast writer of the layout in force (see LineWriter), or undefined when the layout takes the generic
   * path (unusual column names) or has its own `server` or `log_type` column (its documents are merged).
   */
  lineWriter(): LineWriter | undefined {
    const layout = this.layout;
    if (!layout?.build || layout.fields.includes('server') || layout.fields.includes('log_type')) return undefined;
    return (layout.writer ??= new LineWriter(layout, this.zones, this.timestamps));
  }

  /** Forgets the columns (a new file starts with its own header). */
  reset(): void {
    this.layout = undefined;
  }

  parseLine(line: string): ParsedLine {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (text.trim() === '') return { kind: 'blank' };
    if (text.startsWith('#')) {
      const colon = text.indexOf(':');
      const name = (colon < 0 ? text.slice(1) : text.slice(1, colon)).trim();
      const value = colon < 0 ? '' : text.slice(colon + 1).trim();
      const lower = name.toLowerCase();
      if (lower === 'fields') this.setFields(value);
      else if (lower === 'start-date') this.zones.fromStartDate(value, true);
      return { kind: 'header', name, value };
    }
    const layout = this.layout;
    if (!layout) return broken(line, 'no #Fields header known for this log');
    const values = text.split('\t');
    // A trailing tab is harmless; any other count mismatch means the line cannot be mapped safely.
    if (values.length === layout.fields.length + 1 && values[values.length - 1] === '') values.pop();
    if (values.length !== layout.fields.length) {
      return broken(line, `expected ${layout.fields.length} tab-separated fields, got ${values.length}`);
    }
    return this.mapRecord(layout, values);
  }

  private mapRecord(layout: Layout, values: string[]): ParsedLine {
    if (layout.build) {
      if (layout.date < 0 || layout.time < 0) return { kind: 'record', record: new layout.build(values, null, numericValue) };
      const ts = this.timestampOf(layout, values);
      if (ts.ok) return { kind: 'record', record: new layout.build(values, ts.iso, numericValue), timeMs: ts.ms };
    }
    return this.mapGeneric(layout, values);
  }

  /** The line's time. */
  private timestampOf(layout: Layout, values: readonly string[]): TimestampResult {
    const tzText = layout.tz >= 0 ? values[layout.tz]! : '-';
    const zone = tzText === '-' || tzText === '' ? this.zones.zone : tzText;
    const date = values[layout.date]!;
    const time = values[layout.time]!;
    return this.timestamps.convert(date, time, zone);
  }

  private mapGeneric(layout: Layout, values: string[]): ParsedLine {
    const record: LogRecord = { timestamp: null };
    let timeMs: number | undefined;
    let error: string | undefined;
    if (layout.date >= 0 && layout.time >= 0) {
      const ts = this.timestampOf(layout, values);
      if (ts.ok) {
        record.timestamp = ts.iso;
        timeMs = ts.ms;
      } else {
        error = ts.error;
      }
    }
    for (let i = 0; i < layout.fields.length; i++) {
      const name = layout.fields[i]!;
      // date/time/tz live on in `timestamp`; they stay as written only when they could not be read.
      if (timeMs !== undefined && TIME_FIELDS.has(name)) continue;
      const value = values[i]!;
      record[name] = value === '-' ? null : layout.numeric[i] ? numericValue(value) : value;
    }
    if (error !== undefined) record.parse_error = error;
    return timeMs === undefined ? { kind: 'record', record } : { kind: 'record', record, timeMs };
  }
}

/** Which zone lines without a `tz` column are in: the configured server zone, else the file header's, else the default. */
export class ZoneChoice {
  private header: string | undefined;
  private fromHeaderLine = false;
  zone: string;

  constructor(
    private readonly fallback: string,
    private readonly configured: string | undefined,
  ) {
    this.zone = configured ?? fallback;
  }

  /**
   * Takes the zone a start date ends with (`2017-11-20 14:29:17 IST`), when it is one the converter knows. A header
   * line in the stream is the truth (a restart mid-file writes a new one); the API's `logStartDate` only fills in.
   */
  fromStartDate(text: string, headerLine: boolean): void {
    if (!headerLine && this.fromHeaderLine) return;
    const zone = /\d\d:\d\d(?::\d\d)?(?:[.,]\d+)?\s+(\S+)\s*$/.exec(text)?.[1];
    if (zone === undefined || !isKnownZone(zone)) return;
    this.header = zone;
    this.fromHeaderLine ||= headerLine;
    this.zone = this.configured ?? this.header ?? this.fallback;
  }
}

function broken(line: string, error: string): ParsedLine {
  return { kind: 'record', record: { timestamp: null, raw: line, parse_error: error } };
}

/** The value of the first `#Start-Date` header among `lines`: the identity of a file when the server sends none. */
export function startDateHeader(lines: readonly string[]): string | undefined {
  for (const line of lines) {
    const m = /^#\s*Start-Date:\s*(.*?)\s*$/i.exec(line);
    if (m) return m[1];
  }
  return undefined;
}
