import { isKnownZone } from '../time-zones.js';
import { TimestampConverter, type TimestampResult } from './timestamp.js';
import type { Utf8Writer } from '../utf8-builder.js';

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
const NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$/;
const TIME_FIELDS = new Set(['date', 'time', 'tz']);

/** Parses the value of a `#Fields:` header (or a page's `logFields`) into column names. */
export function parseFieldsHeader(text: string): string[] {
  return text
    .replace(/^#?\s*Fields:\s*/i, '')
    .split(/[\t ]+/)
    .filter((f) => f !== '');
}

/** The number a numeric column holds, or the text when it is not a number that survives the conversion. */
function numericValue(text: string): number | string {
  if (!NUMBER.test(text)) return text;
  const n = Number(text);
  if (!Number.isFinite(n)) return text;
  // 64-bit counters beyond 2^53 would be silently rounded: keep their exact digits.
  if (Number.isInteger(n) && !Number.isSafeInteger(n)) return text;
  return n;
}

interface Layout {
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
class ZoneChoice {
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

/** Byte values. */
const TAB = 9;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const ZERO = 0x30;
const DOT = 0x2e;
const NULL_BYTES = [0x6e, 0x75, 0x6c, 0x6c];

const utf8 = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));

/**
 * Writes the JSON of a record straight from its line into a UTF-8 buffer, for lines that need nothing of what
 * the record class handles the long way: the line holds nothing JSON escapes (one scan finds the tabs and checks
 * every UTF-16 unit), it has the layout's column count, and its time reads. No array of values, no record, no
 * string per document: column names are encoded once per layout, values are copied from the line character by
 * character (UTF-8 written here), numbers checked digit by digit and written as JSON.stringify writes them (an
 * unusual number, `1e3` or `007`, goes through `Number`). The bytes are exactly those of `JSON.stringify` of the
 * record the parser builds from the same line (documents) and of `JSON.stringify` of that (Loki lines); the
 * property tests of `test/unit/log-encoding.test.ts` hold it. Any other line: `scan` says no, and the caller
 * takes the parser's way.
 */
export class LineWriter {
  private readonly count: number;
  /** Per column: 0 text, 1 number column, 2 not written (date, time, tz: they became `timestamp`). */
  private readonly kinds: Uint8Array;
  /** Per column: where its key (`,"name":`) is in `keys` / `quotedKeys`, and where it ends. */
  private readonly keyAt: Int32Array;
  private readonly quotedKeyAt: Int32Array;
  private readonly keys: Uint8Array;
  private readonly quotedKeys: Uint8Array;
  private readonly keyView: DataView;
  private readonly quotedKeyView: DataView;
  /** `"timestamp":` and `"{\"timestamp\":`, the start of a record and of a Loki line. */
  private readonly timestampKey = utf8('"timestamp":');
  private readonly quotedHead = utf8(JSON.stringify('{"timestamp":').slice(0, -1));
  private readonly withTime: boolean;
  private readonly date: number;
  private readonly time: number;
  private readonly tz: number;
  private readonly severityAt: number;
  private readonly categoryAt: number;
  private readonly eventAt: number;
  /** The scanned line in UTF-8, and a view of it for reading four bytes at a time (it has room past the line). */
  private src: Buffer = Buffer.allocUnsafeSlow(16 * 1024);
  private srcView = new DataView(this.src.buffer, this.src.byteOffset, this.src.length);
  /** Where each value of the scanned line starts in `src`; value k ends one before value k + 1 starts. */
  private readonly starts: Int32Array;
  /** The same in UTF-16 units, in the line. */
  private readonly charStarts: Int32Array;
  private text = '';
  private iso: string | null = null;
  /** Of the last line scanned: its time (undefined without date/time columns). */
  timeMs: number | undefined;
  /** Of the last line scanned: the record's `x-severity`, `x-category`, `x-event` (undefined without the column). */
  severity: string | null | undefined;
  category: string | null | undefined;
  event: string | null | undefined;

  constructor(
    layout: Omit<Layout, 'build' | 'writer'>,
    private readonly zones: ZoneChoice,
    private readonly timestamps: TimestampConverter,
  ) {
    const { fields } = layout;
    this.count = fields.length;
    this.withTime = layout.date >= 0 && layout.time >= 0;
    this.date = layout.date;
    this.time = layout.time;
    this.tz = layout.tz;
    this.severityAt = fields.indexOf('x-severity');
    this.categoryAt = fields.indexOf('x-category');
    this.eventAt = fields.indexOf('x-event');
    this.kinds = new Uint8Array(fields.map((f, i) => (this.withTime && TIME_FIELDS.has(f) ? 2 : layout.numeric[i] ? 1 : 0)));
    this.starts = new Int32Array(fields.length + 1);
    this.charStarts = new Int32Array(fields.length + 1);
    const plain = fields.map((name) => utf8(`,${JSON.stringify(name)}:`));
    const quoted = fields.map((name) => utf8(`,${JSON.stringify(JSON.stringify(name)).slice(1, -1)}:`));
    const pack = (parts: Uint8Array[]): [Uint8Array, Int32Array] => {
      const at = new Int32Array(parts.length + 1);
      for (let i = 0; i < parts.length; i++) at[i + 1] = at[i]! + parts[i]!.length;
      const all = new Uint8Array(at[parts.length]!);
      parts.forEach((p, i) => all.set(p, at[i]!));
      return [all, at];
    };
    [this.keys, this.keyAt] = pack(plain);
    [this.quotedKeys, this.quotedKeyAt] = pack(quoted);
    const padded = (bytes: Uint8Array) => {
      const copy = new Uint8Array(bytes.length + 4);
      copy.set(bytes);
      return new DataView(copy.buffer);
    };
    this.keyView = padded(this.keys);
    this.quotedKeyView = padded(this.quotedKeys);
  }

  /**
   * Reads `line` for writing: true when it takes this way (then `timeMs` and the label fields are its own, and
   * `write` may follow, any number of times); false when it must take the parser's.
   */
  scan(line: string): boolean {
    const length = line.length;
    if (length === 0) return false;
    const first = line.charCodeAt(0);
    // Headers, and blank lines (which parseLine tells by trim()), are not records.
    if (first === 0x23 || ((first <= 0x20 || first >= 0x7f) && line.trim() === '')) return false;
    if (this.src.length < 3 * length + 8) {
      this.src = Buffer.allocUnsafeSlow(3 * length + 1024);
      this.srcView = new DataView(this.src.buffer, this.src.byteOffset, this.src.length);
    }
    // V8 encodes a line in one call faster than JavaScript reads its characters one by one; the bytes are then
    // scanned and copied as bytes. Each UTF-16 unit of the line but a surrogate is one character of the bytes.
    const src = this.src;
    const n = src.write(line, 0);
    const starts = this.starts;
    const charStarts = this.charStarts;
    const last = this.count - 1;
    let tabs = 0;
    // Bytes minus UTF-16 units so far: continuation bytes, less one for each four-byte character (two units).
    let extra = 0;
    for (let i = 0; i < n; i++) {
      const c = src[i]!;
      if (c < 0x23) {
        if (c === TAB) {
          if (tabs > last) return false;
          starts[++tabs] = i + 1;
          charStarts[tabs] = i + 1 - extra;
        } else if (c < 0x20 || c === QUOTE) return false;
      } else if (c >= 0x5c) {
        if (c === BACKSLASH) return false;
        if (c >= 0x80) {
          if ((c & 0xc0) === 0x80) extra++;
          else if (c >= 0xf0) extra--;
          // U+FFFD: the line's own, or what Buffer#write made of a lone surrogate (which JSON escapes).
          else if (c === 0xef && src[i + 1] === 0xbf && src[i + 2] === 0xbd) return false;
        }
      }
    }
    // One value per column; a trailing tab is harmless (see parseLine).
    if (tabs === last) {
      starts[this.count] = n + 1;
      charStarts[this.count] = length + 1;
    } else if (!(tabs === this.count && starts[tabs] === n)) return false;
    this.text = line;
    if (this.withTime) {
      const tz = this.tz >= 0 ? this.value(this.tz) : '-';
      const zone = tz === '-' || tz === '' ? this.zones.zone : tz;
      const ts = this.timestamps.convert(this.value(this.date), this.value(this.time), zone);
      if (!ts.ok) return false; // the generic record says why
      this.iso = ts.iso;
      this.timeMs = ts.ms;
    } else {
      this.iso = null;
      this.timeMs = undefined;
    }
    this.severity = this.severityAt < 0 ? undefined : this.recordValue(this.severityAt);
    this.category = this.categoryAt < 0 ? undefined : this.recordValue(this.categoryAt);
    this.event = this.eventAt < 0 ? undefined : this.recordValue(this.eventAt);
    return true;
  }

  /** Column `k` of the scanned line. */
  private value(k: number): string {
    return this.text.slice(this.charStarts[k]!, this.charStarts[k + 1]! - 1);
  }

  /** Column `k` as the record holds it (for the label columns, which are text). */
  private recordValue(k: number): string | null {
    const v = this.value(k);
    return v === '-' ? null : v;
  }

  /**
   * Writes the scanned line's record: `head` then the record's JSON without its `{` (`head` `{` gives
   * `JSON.stringify(record)`), or with `quoted` the Loki line, `JSON.stringify(JSON.stringify(record))`.
   */
  write(out: Utf8Writer, head: Uint8Array | undefined, quoted: boolean): void {
    // Room for all of it: keys, the line's bytes (each value's quotes in place of a tab), an unusual number's text.
    out.ensure((head?.length ?? 0) + this.room + this.starts[this.count]!);
    if (this.outView?.buffer !== out.buf.buffer) this.outView = new DataView(out.buf.buffer, out.buf.byteOffset, out.buf.length);
    if (head !== undefined && head !== this.head) {
      // A copy with room to read four bytes at a time.
      const padded = new Uint8Array(head.length + 4);
      padded.set(head);
      this.head = head;
      this.headView = new DataView(padded.buffer);
    }
    out.pos = this.writeAt(out.buf, this.outView, out.pos, quoted);
  }

  /**
   * Writes from `p` on, returns where it ended. Keys and values are copied four bytes at a time through DataViews
   * (a byte loop costs several times more for their few bytes each). A copy may write up to three bytes past its
   * end: what follows overwrites them, and `write` made room for them; reads past a key or value stay in the
   * padded tables and the line's buffer.
   */
  private writeAt(b: Uint8Array, o: DataView, p: number, quoted: boolean): number {
    const sv = this.srcView;
    const src = this.src;
    const st = this.starts;
    const kv = quoted ? this.quotedKeyView : this.keyView;
    const keyAt = quoted ? this.quotedKeyAt : this.keyAt;
    let n = 0;
    if (quoted) {
      const h = this.quotedHead;
      for (let i = 0; i < h.length; i++) b[p++] = h[i]!;
    } else {
      const hv = this.headView!;
      n = this.head!.length;
      for (let j = 0; j < n; j += 4) o.setUint32(p + j, hv.getUint32(j, true), true);
      p += n;
      const t = this.timestampKey;
      for (let i = 0; i < t.length; i++) b[p++] = t[i]!;
    }
    const iso = this.iso;
    if (iso === null) p = writeNull(b, p);
    else {
      if (quoted) b[p++] = BACKSLASH;
      b[p++] = QUOTE;
      for (let i = 0; i < iso.length; i++) b[p++] = iso.charCodeAt(i);
      if (quoted) b[p++] = BACKSLASH;
      b[p++] = QUOTE;
    }
    const kinds = this.kinds;
    for (let k = 0; k < this.count; k++) {
      const kind = kinds[k]!;
      if (kind === 2) continue;
      const ks = keyAt[k]!;
      n = keyAt[k + 1]! - ks;
      for (let j = 0; j < n; j += 4) o.setUint32(p + j, kv.getUint32(ks + j, true), true);
      p += n;
      const s = st[k]!;
      const e = st[k + 1]! - 1;
      if (e - s === 1 && src[s] === MINUS) {
        p = writeNull(b, p);
        continue;
      }
      if (kind === 1) {
        const q = writeNumber(src, s, e, b, p);
        p = q >= 0 ? q : this.slowValue(k, b, p, quoted);
        continue;
      }
      if (quoted) b[p++] = BACKSLASH;
      b[p++] = QUOTE;
      n = e - s;
      for (let j = 0; j < n; j += 4) o.setUint32(p + j, sv.getUint32(s + j, true), true);
      p += n;
      if (quoted) b[p++] = BACKSLASH;
      b[p++] = QUOTE;
    }
    b[p++] = 0x7d; // }
    if (quoted) b[p++] = QUOTE;
    return p;
  }

  private outView: DataView | undefined;
  private head: Uint8Array | undefined;
  private headView: DataView | undefined;
  /** Bytes a record needs beyond its line's: keys, quotes, nulls, numbers JavaScript writes longer, slack. */
  private get room(): number {
    return this.quotedKeys.length + 48 * this.count + 128;
  }

  /** Column `k`, a number column whose text writeNumber did not take: as the record holds it (numericValue). */
  private slowValue(k: number, b: Uint8Array, p: number, quoted: boolean): number {
    const v = numericValue(this.value(k));
    if (typeof v === 'number') {
      const t = '' + v;
      for (let i = 0; i < t.length; i++) b[p++] = t.charCodeAt(i);
      return p;
    }
    if (quoted) b[p++] = BACKSLASH;
    b[p++] = QUOTE;
    for (let i = this.starts[k]!, e = this.starts[k + 1]! - 1; i < e; i++) b[p++] = this.src[i]!;
    if (quoted) b[p++] = BACKSLASH;
    b[p++] = QUOTE;
    return p;
  }
}


function writeNull(b: Uint8Array, p: number): number {
  b[p] = NULL_BYTES[0]!;
  b[p + 1] = NULL_BYTES[1]!;
  b[p + 2] = NULL_BYTES[2]!;
  b[p + 3] = NULL_BYTES[3]!;
  return p + 4;
}

const isDigit = (c: number) => c >= ZERO && c <= ZERO + 9;

/**
 * Writes `text[s, e)` as JSON writes the number it holds, when that is the text itself or the text without
 * trailing zeros after the point (`0.500` -> `0.5`, `2.000` -> `2`, `-0.0` -> `0`): a plain decimal of at most 15
 * significant digits (which a double holds exactly, so `Number` and back gives the same digits) not below 1e-6
 * (JavaScript writes those with an exponent). Returns where writing ended, or -1 for anything else (nothing written).
 */
function writeNumber(src: Uint8Array, s: number, e: number, b: Uint8Array, p: number): number {
  let i = s;
  const negative = src[i] === MINUS;
  if (negative) i++;
  const intStart = i;
  while (i < e && isDigit(src[i]!)) i++;
  const intDigits = i - intStart;
  if (intDigits === 0 || intDigits > 15) return -1;
  const zeroInt = src[intStart] === ZERO;
  if (zeroInt && intDigits > 1) return -1; // 007
  let fracStart = e;
  let fracEnd = e;
  if (i < e) {
    if (src[i] !== DOT) return -1; // an exponent, or not a number
    fracStart = ++i;
    while (i < e && isDigit(src[i]!)) i++;
    if (i !== e || fracStart === e) return -1;
    while (fracEnd > fracStart && src[fracEnd - 1] === ZERO) fracEnd--;
  }
  if (zeroInt) {
    if (fracEnd === fracStart) {
      b[p] = ZERO; // 0, -0, 0.000: JSON writes 0
      return p + 1;
    }
    let lead = fracStart;
    while (src[lead] === ZERO) lead++;
    if (lead - fracStart >= 6 || fracEnd - lead > 15) return -1;
  } else if (intDigits + (fracEnd - fracStart) > 15) return -1;
  if (negative) b[p++] = MINUS;
  for (let k = intStart; k < intStart + intDigits; k++) b[p++] = src[k]!;
  if (fracEnd > fracStart) {
    b[p++] = DOT;
    for (let k = fracStart; k < fracEnd; k++) b[p++] = src[k]!;
  }
  return p;
}
