import { compileRecordFilter, type RecordFilter, type RecordFilterSpec } from './record-filter.js';
import { redactSecrets } from '../../base/redact.js';
import { categoryLabel, eventLabel, severityLabel } from '../../wowza/log-vocabulary.js';
import { addDocument, documentPrefix, type LogEntry } from './entry.js';
import { Utf8Writer } from '../../base/utf8-builder.js';
import { lokiNanoseconds } from './loki-timestamp.js';
import { cleanForJson, documentJson, quotedRecordJson, recordJson, W3cLogParser, type ParsedLine } from './w3c-parser.js';

/**
 * The CPU-heavy part of shipping a log line, kept free of I/O and shared state so it can run on the
 * event loop or in a worker thread with the same result: blank secrets, parse, count, filter, and write the
 * bytes the sinks send. Everything in and out is plain data (structured-clone safe); the bytes travel in one
 * ArrayBuffer that moves between threads without a copy.
 */

/** How lines are turned into records; the same for every chunk of one shipper. */
export interface EncodingSettings {
  /** Zone of lines without a `tz` column. */
  timeZone: string;
  redactSecrets: boolean;
  filters: RecordFilterSpec;
  /** Write documents (`{"server":…,"log_type":…, …record}`) for NDJSON and HTTP sinks; default true. */
  documents?: boolean;
  /** Write each record's JSON as a JSON string, the line a Loki sink sends. */
  lokiLines?: boolean;
}

/** Record lines (no headers, no blank lines) of one log that share one `#Fields` layout. */
export interface LineSegment {
  server: string;
  logType: string;
  /** The `#Fields` in force, space-separated; undefined when no header is known yet. */
  fields: string | undefined;
  /** Zone of lines without a `tz` column, as the follower found it (the file header's); default settings.timeZone. */
  zone?: string;
  lines: string[];
}

/** The lines of a segment that passed the filters, as parallel arrays, and counts over every line. */
export interface EncodedSegment {
  /** Index in the segment's `lines` of each kept line. */
  index: Int32Array;
  /** The line with secrets blanked, or null when that changed nothing (the original is used). */
  redacted: Array<string | null>;
  /**
   * Per kept line its document (with `documents`), then its Loki line (with `lokiLines`), all UTF-8, each
   * followed by a newline; see {@link entriesOf}. Documents only: the bytes are the segment's NDJSON.
   */
  bytes: Uint8Array;
  /** Where each piece ends in `bytes` (before its separator; the next piece starts after it): one per line and kind. */
  ends: Int32Array;
  /**
   * With `lokiLines`, per kept line the bytes of `["<nanoseconds>",` written before its Loki line, which is then
   * followed by `]` and a comma: the line as one value of a push body's stream, so a run of them is copied into the
   * body in one piece (sinks/loki.ts). 0 when the line carries no time of its own (its entry's time is when it was
   * read, known only later).
   */
  lokiPrefix?: Uint8Array;
  /** `severity` label value of each record, as its index in {@link SEVERITY_LABELS}. */
  severity: Uint8Array;
  /** Epoch ms of the record's time; NaN when it has none. */
  timeMs: Float64Array;
  counts: SegmentCounts;
  /** Time of the last record that had one. */
  lastTimeMs?: number;
}

/** Every value severityLabel gives. */
export const SEVERITY_LABELS = ['none', 'other', 'debug', 'info', 'warn', 'error'] as const;
const SEVERITY_CODE: Readonly<Record<string, number>> = { none: 0, other: 1, debug: 2, info: 3, warn: 4, error: 5 };

/** Lines by severity, records by category and event, parse errors: added to the counters once per chunk. */
export interface SegmentCounts {
  severities: Array<[string, number]>;
  events: Array<[category: string, event: string, n: number]>;
  parseErrors: number;
}

/** Filter settings that let every record pass (the default). */
function passesAll(spec: RecordFilterSpec): boolean {
  const none = (s: { include?: readonly string[]; exclude?: readonly string[] } | undefined) => (s?.include?.length ?? 0) === 0 && (s?.exclude?.length ?? 0) === 0;
  return (
    !spec.min_severity &&
    none(spec.categories) &&
    none(spec.events) &&
    none(spec.applications) &&
    Object.keys(spec.field_regex ?? {}).length === 0 &&
    Object.keys(spec.exclude_field_regex ?? {}).length === 0
  );
}

const NEWLINE = 10;

/** Turns segments into encoded lines; caches a parser per layout and the compiled filter. */
export class LineEncoder {
  private readonly filter: RecordFilter;
  /** No filter is set: records are not needed for the filter. */
  private readonly passesAll: boolean;
  private readonly parsers = new Map<string, W3cLogParser>();
  /** Reused for every segment; what a segment wrote is copied out of it. */
  private readonly out = new Utf8Writer(256 * 1024);
  /** `{"server":…,"log_type":…,` of the last segment's server and log type, in UTF-8. */
  private head: { text: string; bytes: Uint8Array } = { text: '', bytes: new Uint8Array(0) };

  constructor(private readonly settings: EncodingSettings) {
    this.filter = compileRecordFilter(settings.filters);
    this.passesAll = passesAll(settings.filters ?? {});
  }

  private parserFor(fields: string | undefined, zone: string | undefined): W3cLogParser {
    const key = `${zone ?? ''}\u0000${fields ?? ''}`;
    let parser = this.parsers.get(key);
    if (!parser) {
      if (this.parsers.size >= 100) this.parsers.clear(); // layouts come and go with rotations; keep it bounded
      parser = new W3cLogParser({ defaultTimeZone: zone ?? this.settings.timeZone, ...(fields !== undefined ? { fields } : {}) });
      this.parsers.set(key, parser);
    }
    return parser;
  }

  private headOf(server: string, logType: string): Uint8Array {
    const text = `${documentPrefix(server, logType)},`;
    if (this.head.text !== text) this.head = { text, bytes: new Uint8Array(Buffer.from(text, 'utf8')) };
    return this.head.bytes;
  }

  /**
   * Like encode, but never throws: should encoding fail (a bug), every line is shipped as a raw record with a
   * `parse_error`, as lines that do not parse are. Nothing is dropped and the follower's position stays right.
   */
  encodeSafely(segment: LineSegment): EncodedSegment {
    try {
      return this.encode(segment);
    } catch (err) {
      const error = `cannot encode the line: ${(err as Error).message ?? String(err)}`;
      return this.encode(segment, (line) => ({ kind: 'record', record: { timestamp: null, raw: line, parse_error: error } }));
    }
  }

  encode(segment: LineSegment, parse?: (line: string) => ParsedLine): EncodedSegment {
    const parser = this.parserFor(segment.fields, segment.zone);
    const { server, logType, lines } = segment;
    const loki = this.settings.lokiLines === true;
    const documents = this.settings.documents !== false;
    const per = (documents ? 1 : 0) + (loki ? 1 : 0);
    const index = new Int32Array(lines.length);
    const ends = new Int32Array(lines.length * per);
    const severity = new Uint8Array(lines.length);
    const timeMs = new Float64Array(lines.length);
    const lokiPrefix = loki ? new Uint8Array(lines.length) : undefined;
    const redacted: Array<string | null> = [];
    const severities = new Int32Array(SEVERITY_LABELS.length);
    const events = new Map<string, [string, string, number]>();
    let parseErrors = 0;
    let lastTimeMs: number | undefined;
    let kept = 0;
    let piece = 0;
    const out = this.out;
    out.pos = 0;
    const writer = parse ? undefined : parser.lineWriter();
    // The head of every document of this segment, up to the record's first key.
    const head = this.headOf(server, logType);
    const sink = { add: (text: string) => out.string(text) };
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      const text = this.settings.redactSecrets ? redactSecrets(line) : line;
      let code: number;
      let time: number | undefined;
      if (writer?.scan(text) && (this.passesAll || this.keeps(parser, text))) {
        // Straight from the line into the bytes (see LineWriter).
        code = SEVERITY_CODE[severityLabel(writer.severity)]!;
        severities[code]!++;
        if (writer.event !== undefined || writer.category !== undefined) countEvent(events, writer.category, writer.event);
        time = writer.timeMs;
        if (time !== undefined) lastTimeMs = time;
        if (documents) {
          writer.write(out, head, false);
          ends[piece++] = out.pos;
          out.byte(NEWLINE);
        }
        if (loki) {
          const prefix = lokiValueStart(out, time);
          writer.write(out, undefined, true);
          ends[piece++] = lokiValueEnd(out, prefix);
          lokiPrefix![kept] = prefix;
        }
      } else {
        const parsed = parse ? parse(text) : parser.parseLine(text);
        if (parsed.kind !== 'record') continue; // the follower sends record lines only; be safe anyway
        const record = parsed.record;
        code = SEVERITY_CODE[severityLabel(record['x-severity'])]!;
        severities[code]!++;
        const category = record['x-category'];
        const event = record['x-event'];
        if (event !== undefined || category !== undefined) countEvent(events, category, event);
        if (record.parse_error !== undefined) parseErrors++;
        time = parsed.timeMs;
        if (time !== undefined) lastTimeMs = time;
        if (!this.filter(record)) continue;
        if (documents) {
          // One string per document, written by the record's layout class (a record with its own `server` or
          // `log_type` column, or of a layout that was not compiled, takes the general way).
          const doc = 'server' in record || 'log_type' in record ? undefined : documentJson(record, this.head.text, cleanForJson(text));
          if (doc !== undefined) out.string(doc);
          else addDocument(sink, server, logType, record, recordJson(record));
          ends[piece++] = out.pos;
          out.byte(NEWLINE);
        }
        if (loki) {
          const prefix = lokiValueStart(out, time);
          out.string(quotedRecordJson(record));
          ends[piece++] = lokiValueEnd(out, prefix);
          lokiPrefix![kept] = prefix;
        }
      }
      index[kept] = i;
      redacted.push(text === line ? null : text);
      severity[kept] = code;
      timeMs[kept] = time ?? Number.NaN;
      kept++;
    }
    const severityCounts: Array<[string, number]> = [];
    SEVERITY_LABELS.forEach((label, k) => {
      if (severities[k]! > 0) severityCounts.push([label, severities[k]!]);
    });
    return {
      index: index.subarray(0, kept),
      redacted,
      bytes: out.take(),
      ends: ends.subarray(0, piece),
      severity: severity.subarray(0, kept),
      timeMs: timeMs.subarray(0, kept),
      ...(lokiPrefix ? { lokiPrefix: lokiPrefix.subarray(0, kept) } : {}),
      counts: { severities: severityCounts, events: [...events.values()], parseErrors },
      ...(lastTimeMs !== undefined ? { lastTimeMs } : {}),
    };
  }

  /** Whether the filters keep the record of `text`, a line the fast way takes (so it parses into a record). */
  private keeps(parser: W3cLogParser, text: string): boolean {
    const parsed = parser.parseLine(text);
    return parsed.kind === 'record' && this.filter(parsed.record);
  }
}

/**
 * The log entries of an encoded segment: the kept lines, their bytes as views of `bytes` (no copy), and the
 * time they carry, or `nowMs` when they carry none.
 */
export function entriesOf(segment: LineSegment, encoded: EncodedSegment, settings: Pick<EncodingSettings, 'documents' | 'lokiLines'>, nowMs: number): LogEntry[] {
  const { bytes, ends, index, redacted, severity, timeMs, lokiPrefix } = encoded;
  const documents = settings.documents !== false;
  const loki = settings.lokiLines === true;
  const { server, logType, lines } = segment;
  const buffer = bytes.buffer;
  const base = bytes.byteOffset;
  const out: LogEntry[] = new Array<LogEntry>(index.length);
  let piece = 0;
  let at = 0;
  for (let k = 0; k < index.length; k++) {
    const line = redacted[k] ?? lines[index[k]!]!;
    const time = timeMs[k]!;
    const label = SEVERITY_LABELS[severity[k]!]!;
    const ms = Number.isNaN(time) ? nowMs : time;
    // A Loki line starts after its `["<nanoseconds>",` and is followed by `]` and the separator.
    const prefix = lokiPrefix?.[k] ?? 0;
    const after = prefix > 0 ? 2 : 1;
    if (documents && loki) {
      const d = ends[piece++]!;
      const l = ends[piece++]!;
      // The encoder blanked secrets in the line, and so in every field parsed from it.
      const lokiLine = Buffer.from(buffer, base + d + 1 + prefix, l - d - 1 - prefix);
      const document = Buffer.from(buffer, base + at, d - at);
      out[k] = { server, logType, line, document, lokiLine, lokiPrefix: prefix, severity: label, timeMs: ms };
      at = l + after;
    } else {
      const end = ends[piece++]!;
      if (documents) {
        out[k] = { server, logType, line, document: Buffer.from(buffer, base + at, end - at), severity: label, timeMs: ms };
        at = end + 1;
      } else {
        const lokiLine = Buffer.from(buffer, base + at + prefix, end - at - prefix);
        out[k] = { server, logType, line, lokiLine, lokiPrefix: prefix, severity: label, timeMs: ms };
        at = end + after;
      }
    }
  }
  return out;
}

const COMMA = 0x2c;
const CLOSE_BRACKET = 0x5d;

/** Writes `["<nanoseconds>",` when the line has a time of its own; the bytes written (0 when it has none). */
function lokiValueStart(out: Utf8Writer, time: number | undefined): number {
  if (time === undefined || Number.isNaN(time)) return 0;
  const from = out.pos;
  out.string(`["${lokiNanoseconds(time)}",`);
  return out.pos - from;
}

/** Closes a Loki value (`]` when it was opened) and writes the separator; where the line ended. */
function lokiValueEnd(out: Utf8Writer, prefix: number): number {
  const end = out.pos;
  if (prefix > 0) out.byte(CLOSE_BRACKET);
  out.byte(prefix > 0 ? COMMA : NEWLINE);
  return end;
}

function countEvent(events: Map<string, [string, string, number]>, category: unknown, event: unknown): void {
  const c = categoryLabel(category);
  const e = eventLabel(event);
  const key = `${c}\u0000${e}`;
  const known = events.get(key);
  if (known) known[2]++;
  else events.set(key, [c, e, 1]);
}
