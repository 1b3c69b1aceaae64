import type { FieldValue, LogRecord } from './w3c-parser.js';

/** One parsed log line on its way to the sinks. */
export interface LogEntry {
  readonly server: string;
  readonly logType: string;
  /** The line exactly as the server holds it. */
  readonly line: string;
  readonly record: LogRecord;
  /** Epoch ms of the record's own time, or of when it was read when it has none. */
  readonly timeMs: number;
}

/** The JSON object sinks without labels write: where the line came from, then the record. */
export function entryDocument(entry: LogEntry): Record<string, FieldValue> {
  return { server: entry.server, log_type: entry.logType, ...entry.record };
}

/** Size used for batch limits: the bytes of the line as the server holds it. */
export function entryBytes(entry: LogEntry): number {
  return Buffer.byteLength(entry.line, 'utf8');
}
