import { severityLabel } from './vocabulary.js';
import type { LogRecord } from './w3c-parser.js';

/**
 * One log line on its way to the sinks. It holds the record as JSON text rather than as an object: every
 * sink writes JSON, and a queue of thousands of 30-field objects (and their small strings) is what the
 * garbage collector spent most of the pipeline's time on.
 */
export interface LogEntry {
  readonly server: string;
  readonly logType: string;
  /** The line as the server holds it (secrets blanked when redaction is on). */
  readonly line: string;
  /** `JSON.stringify(record)`. */
  readonly json: string;
  /** The record's `severity` label value (for Loki stream labels). */
  readonly severity: string;
  /** The document's JSON when the record has its own `server` or `log_type` key (rare); see entryDocumentJson. */
  readonly document?: string;
  /** Epoch ms of the record's own time, or of when it was read when it has none. */
  readonly timeMs: number;
}

/** Builds the entry of one record. */
export function logEntry(server: string, logType: string, line: string, record: LogRecord, timeMs: number): LogEntry {
  const json = JSON.stringify(record);
  const entry = { server, logType, line, json, severity: severityLabel(record['x-severity']), timeMs };
  // `{ server, log_type, ...record }`: a record's own key overrides the value but keeps the position.
  if ('server' in record || 'log_type' in record) return { ...entry, document: JSON.stringify({ server, log_type: logType, ...record }) };
  return entry;
}

/** The record, parsed back from its JSON (for the rare users that need the object). */
export function entryRecord(entry: LogEntry): LogRecord {
  return JSON.parse(entry.json) as LogRecord;
}

// Prefixes `{"server":…,"log_type":…` of the documents of recent (server, log type) pairs.
const prefixes = new Map<string, string>();

function documentPrefix(entry: LogEntry): string {
  const key = `${entry.server}\u0000${entry.logType}`;
  let prefix = prefixes.get(key);
  if (prefix === undefined) {
    if (prefixes.size >= 1000) prefixes.clear();
    prefix = `{"server":${JSON.stringify(entry.server)},"log_type":${JSON.stringify(entry.logType)}`;
    prefixes.set(key, prefix);
  }
  return prefix;
}

/** The JSON object sinks without labels write: `{"server":…,"log_type":…, …record}`. */
export function entryDocumentJson(entry: LogEntry): string {
  if (entry.document !== undefined) return entry.document;
  return entry.json === '{}' ? `${documentPrefix(entry)}}` : `${documentPrefix(entry)},${entry.json.slice(1)}`;
}

/**
 * Appends the text of entryDocumentJson to `out` in pieces: joining them first would build a string that
 * the encoder has to flatten (copy) again.
 */
export function appendDocument(out: { add(text: string): unknown }, entry: LogEntry): void {
  if (entry.document !== undefined || entry.json === '{}') {
    out.add(entryDocumentJson(entry));
    return;
  }
  out.add(documentPrefix(entry));
  out.add(',');
  out.add(entry.json.slice(1));
}

/** Size used for batch limits: the bytes of the line as the server holds it. */
export function entryBytes(entry: LogEntry): number {
  return Buffer.byteLength(entry.line, 'utf8');
}
