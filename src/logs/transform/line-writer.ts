import type { Utf8Writer } from '../../base/utf8-builder.js';
import { numericValue, TIME_FIELDS } from './w3c-columns.js';
import type { TimestampConverter } from './timestamp.js';
import type { Layout, ZoneChoice } from './w3c-parser.js';

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
 * property tests of `test/unit/logs/transform/line-encoding.test.ts` hold it. Any other line: `scan` says no, and the caller
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
