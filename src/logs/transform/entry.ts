import { severityLabel } from '../../wowza/log-vocabulary.js';
import type { LogRecord } from './w3c-parser.js';

/**
 * One log line on its way to the sinks. The record travels as the UTF-8 bytes the sinks send (written by
 * the encoder, often on another thread), not as an object: a queue of thousands of 30-field objects and
 * their strings is what the garbage collector spent most of the pipeline's time on, and every sink writes
 * JSON anyway.
 */
export interface LogEntry {
  readonly server: string;
  readonly logType: string;
  /** The line as the server holds it (secrets blanked when redaction is on). */
  readonly line: string;
  /**
   * `{"server":…,"log_type":…, …record}` as UTF-8: what NDJSON and HTTP sinks send. Written when such a sink
   * is configured (see entryDocument).
   */
  readonly document?: Buffer;
  /** The record's JSON as a JSON string, as UTF-8: the line of a Loki push. Written when a Loki sink is configured. */
  readonly lokiLine?: Buffer;
  /**
   * When the encoder wrote the Loki line as a push value: the bytes of `["<nanoseconds of timeMs>",` just before
   * `lokiLine` (a `]` follows it); 0 or absent when it did not. Lines written one after the other are then one run of
   * the push body's values.
   */
  readonly lokiPrefix?: number;
  /** The record's `severity` label value (for Loki stream labels). */
  readonly severity: string;
  /** Epoch ms of the record's own time, or of when it was read when it has none. */
  readonly timeMs: number;
}

/**
 * The document of a record from `server`'s `logType` log, as text, given the record's JSON. A record with its
 * own `server` or `log_type` key overrides the value but keeps the position, as `{ server, log_type, ...record }`.
 */
export function documentText(server: string, logType: string, record: LogRecord, json: string): string {
  let text = '';
  addDocument({ add: (part) => (text += part) }, server, logType, record, json);
  return text;
}

/**
 * Adds the pieces of documentText to `out`: joining them first would make a string the encoder has to
 * flatten (copy) before encoding it.
 */
export function addDocument(out: { add(text: string): unknown }, server: string, logType: string, record: LogRecord, json: string): void {
  if ('server' in record || 'log_type' in record) {
    out.add(JSON.stringify({ server, log_type: logType, ...record }));
  } else if (json === '{}') {
    out.add(`${documentPrefix(server, logType)}}`);
  } else {
    out.add(documentPrefix(server, logType));
    out.add(',');
    out.add(json.slice(1));
  }
}

// `{"server":…,"log_type":…` of recent (server, log type) pairs.
const prefixes = new Map<string, string>();

/** `{"server":…,"log_type":…` of a (server, log type): the head of each of its documents. */
export function documentPrefix(server: string, logType: string): string {
  const key = `${server}\u0000${logType}`;
  let prefix = prefixes.get(key);
  if (prefix === undefined) {
    if (prefixes.size >= 1000) prefixes.clear();
    prefix = `{"server":${JSON.stringify(server)},"log_type":${JSON.stringify(logType)}`;
    prefixes.set(key, prefix);
  }
  return prefix;
}

/** Builds the entry of one record on the event loop (webhook events, tools, tests). */
export function logEntry(server: string, logType: string, line: string, record: LogRecord, timeMs: number): LogEntry {
  const json = JSON.stringify(record);
  return {
    server,
    logType,
    line,
    document: Buffer.from(documentText(server, logType, record, json), 'utf8'),
    lokiLine: Buffer.from(JSON.stringify(json), 'utf8'),
    severity: severityLabel(record['x-severity']),
    timeMs,
  };
}

/** The document's bytes: written by the encoder, or made from the Loki line when only Loki sinks asked. */
export function entryDocument(entry: LogEntry): Uint8Array {
  if (entry.document) return entry.document;
  const json = JSON.parse(Buffer.from(entry.lokiLine!).toString('utf8')) as string;
  return Buffer.from(documentText(entry.server, entry.logType, JSON.parse(json) as LogRecord, json), 'utf8');
}

/** The document as text. */
export function entryDocumentJson(entry: LogEntry): string {
  return Buffer.from(entryDocument(entry)).toString('utf8');
}

/** The record, read back from the document (for the rare users that need the object). */
export function entryRecord(entry: LogEntry): LogRecord {
  if (entry.lokiLine) return JSON.parse(JSON.parse(Buffer.from(entry.lokiLine).toString('utf8')) as string) as LogRecord;
  const { server: _server, log_type: _logType, ...record } = JSON.parse(entryDocumentJson(entry)) as LogRecord;
  return record;
}

/** The Loki line of an entry: written by the encoder, or made from the document when it was not. */
export function entryLokiLine(entry: LogEntry): Uint8Array {
  return entry.lokiLine ?? Buffer.from(JSON.stringify(JSON.stringify(entryRecord(entry))), 'utf8');
}

/**
 * Memory an entry holds while it waits for the sinks, for the queue's byte limit: the line and the bytes written
 * for the sinks (a string's length stands for its size; the object itself is left out, the line limit covers it).
 */
export function entryFootprint(entry: LogEntry): number {
  return entry.line.length + (entry.document?.length ?? 0) + (entry.lokiLine?.length ?? 0);
}

/** Size used for batch limits: the bytes of the line as the server holds it. */
export function entryBytes(entry: LogEntry): number {
  return Buffer.byteLength(entry.line, 'utf8');
}
