import { compileRecordFilter, type RecordFilter, type RecordFilterSpec } from './record-filter.js';
import { redactSecrets } from './secret-redaction.js';
import { categoryLabel, eventLabel, severityLabel } from './vocabulary.js';
import { W3cLogParser, type LogRecord } from './w3c-parser.js';

/**
 * The CPU-heavy part of shipping a log line, kept free of I/O and shared state so it can run on the
 * event loop or in a worker thread with the same result: blank secrets, parse, count, filter, and write the
 * record as JSON. Everything in and out is plain data (structured-clone safe).
 */

/** How lines are turned into records; the same for every chunk of one shipper. */
export interface EncodingSettings {
  /** Zone of lines without a `tz` column. */
  timeZone: string;
  redactSecrets: boolean;
  filters: RecordFilterSpec;
}

/** Record lines (no headers, no blank lines) that share one `#Fields` layout. */
export interface LineSegment {
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
  /** `JSON.stringify(record)`. */
  json: string[];
  /** `severity` label value of each record. */
  severity: string[];
  /** Epoch ms of the record's time; NaN when it has none. */
  timeMs: number[];
  /** Whether the record has its own `server` or `log_type` key (rare: its document is built the slow way). */
  ownsSourceKeys: boolean[];
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

  encode(segment: LineSegment): EncodedSegment {
    const parser = this.parserFor(segment.fields);
    const out: EncodedSegment = { index: [], redacted: [], json: [], severity: [], timeMs: [], ownsSourceKeys: [], counts: { severities: [], events: [], parseErrors: 0 } };
    const severities = new Map<string, number>();
    const events = new Map<string, [string, string, number]>();
    const { lines } = segment;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      const text = this.settings.redactSecrets ? redactSecrets(line) : line;
      const parsed = parser.parseLine(text);
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
      out.json.push(JSON.stringify(record));
      out.severity.push(severity);
      out.timeMs.push(parsed.timeMs ?? Number.NaN);
      out.ownsSourceKeys.push('server' in record || 'log_type' in record);
    }
    out.counts.severities = [...severities];
    out.counts.events = [...events.values()];
    return out;
  }
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
