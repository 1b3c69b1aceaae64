import { compileRecordFilter, type RecordFilter, type RecordFilterSpec } from './record-filter.js';
import { redactSecrets } from './secret-redaction.js';
import { categoryLabel, eventLabel, severityLabel } from './vocabulary.js';
import { addDocument, documentPrefix, type LogEntry } from './log-entry.js';
import { Utf8Builder } from '../utf8-builder.js';
import { cleanForJson, documentJson, quotedRecordJson, recordJson, W3cLogParser, type LogRecord, type ParsedLine } from './w3c-parser.js';

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
  lines: string[];
}

/** The lines of a segment that passed the filters, as parallel arrays, and counts over every line. */
export interface EncodedSegment {
  /** Index in the segment's `lines` of each kept line. */
  index: number[];
  /** The line with secrets blanked, or null when that changed nothing (the original is used). */
  redacted: Array<string | null>;
  /**
   * Per kept line its document (with `documents`), then its Loki line (with `lokiLines`), all UTF-8, one
   * after the other; see {@link entriesOf}.
   */
  bytes: Uint8Array;
  /** Where each piece ends in `bytes`: one offset per line and kind of piece written. */
  ends: number[];
  /** `severity` label value of each record. */
  severity: string[];
  /** Epoch ms of the record's time; NaN when it has none. */
  timeMs: number[];
  counts: SegmentCounts;
  /** Time of the last record that had one. */
  lastTimeMs?: number;
}

/** Lines by severity, records by category and event, parse errors: added to the counters once per chunk. */
export interface SegmentCounts {
  severities: Array<[string, number]>;
  events: Array<[category: string, event: string, n: number]>;
  parseErrors: number;
}

/** Turns segments into encoded lines; caches a parser per layout and the compiled filter. */
export class LineEncoder {
  private readonly filter: RecordFilter;
  private readonly parsers = new Map<string, W3cLogParser>();

  constructor(private readonly settings: EncodingSettings) {
    this.filter = compileRecordFilter(settings.filters);
  }

  private parserFor(fields: string | undefined): W3cLogParser {
    const key = fields ?? '';
    let parser = this.parsers.get(key);
    if (!parser) {
      if (this.parsers.size >= 100) this.parsers.clear(); // layouts come and go with rotations; keep it bounded
      parser = new W3cLogParser({ defaultTimeZone: this.settings.timeZone, ...(fields !== undefined ? { fields } : {}) });
      this.parsers.set(key, parser);
    }
    return parser;
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
    const parser = this.parserFor(segment.fields);
    const out: EncodedSegment = { index: [], redacted: [], bytes: new Uint8Array(0), ends: [], severity: [], timeMs: [], counts: { severities: [], events: [], parseErrors: 0 } };
    const bytes = new Utf8Builder();
    const { server, logType } = segment;
    const loki = this.settings.lokiLines === true;
    const documents = this.settings.documents !== false;
    const severities = new Map<string, number>();
    const events = new Map<string, [string, string, number]>();
    const { lines } = segment;
    // The head of every document of this segment, up to the record's first key.
    const head = `${documentPrefix(server, logType)},`;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      const text = this.settings.redactSecrets ? redactSecrets(line) : line;
      const parsed = parse ? parse(text) : parser.parseLine(text);
      if (parsed.kind !== 'record') continue; // the follower sends record lines only; be safe anyway
      const record = parsed.record;
      const severity = severityLabel(record['x-severity']);
      severities.set(severity, (severities.get(severity) ?? 0) + 1);
      countEvent(events, record);
      if (record.parse_error !== undefined) out.counts.parseErrors++;
      if (parsed.timeMs !== undefined) out.lastTimeMs = parsed.timeMs;
      if (!this.filter(record)) continue;
      out.index.push(i);
      out.redacted.push(text === line ? null : text);
      if (documents) {
        // One string per document, written by the record's layout class (a record with its own `server` or
        // `log_type` column, or of a layout that was not compiled, takes the general way).
        const doc = 'server' in record || 'log_type' in record ? undefined : documentJson(record, head, cleanForJson(text));
        if (doc !== undefined) bytes.add(doc);
        else addDocument(bytes, server, logType, record, recordJson(record));
        out.ends.push(bytes.byteLength);
      }
      if (loki) {
        bytes.add(quotedRecordJson(record));
        out.ends.push(bytes.byteLength);
      }
      out.severity.push(severity);
      out.timeMs.push(parsed.timeMs ?? Number.NaN);
    }
    out.bytes = bytes.toBuffer(true);
    out.counts.severities = [...severities];
    out.counts.events = [...events.values()];
    return out;
  }
}

/**
 * The log entries of an encoded segment: the kept lines, their bytes as views of `bytes` (no copy), and the
 * time they carry, or `nowMs` when they carry none.
 */
export function entriesOf(segment: LineSegment, encoded: EncodedSegment, settings: Pick<EncodingSettings, 'documents' | 'lokiLines'>, nowMs: number): LogEntry[] {
  const { bytes, ends } = encoded;
  const documents = settings.documents !== false;
  const loki = settings.lokiLines === true;
  const per = (documents ? 1 : 0) + (loki ? 1 : 0);
  const end = (i: number) => (i < 0 ? 0 : ends[i]!);
  const view = (piece: number) => Buffer.from(bytes.buffer, bytes.byteOffset + end(piece - 1), end(piece) - end(piece - 1));
  return encoded.index.map((i, k) => {
    const first = k * per;
    const time = encoded.timeMs[k]!;
    return {
      server: segment.server,
      logType: segment.logType,
      // The encoder blanked secrets in the line, and so in every field parsed from it.
      line: encoded.redacted[k] ?? segment.lines[i]!,
      ...(documents ? { document: view(first) } : {}),
      ...(loki ? { lokiLine: view(documents ? first + 1 : first) } : {}),
      severity: encoded.severity[k]!,
      timeMs: Number.isNaN(time) ? nowMs : time,
    };
  });
}

function countEvent(events: Map<string, [string, string, number]>, record: LogRecord): void {
  const category = record['x-category'];
  const event = record['x-event'];
  if (event === undefined && category === undefined) return;
  const c = categoryLabel(category);
  const e = eventLabel(event);
  const key = `${c}\u0000${e}`;
  const known = events.get(key);
  if (known) known[2]++;
  else events.set(key, [c, e, 1]);
}
