import { entryDocument, type LogEntry } from '../log-entry.js';
import { Utf8Builder } from '../../utf8-builder.js';

/** A batch as NDJSON: one `{"server":…,"log_type":…, …record}` document per line. */
export function encodeNdjson(entries: readonly LogEntry[]): Buffer {
  const out = new Utf8Builder();
  for (const e of entries) out.add(entryDocument(e)).add('\n');
  return out.toBuffer();
}
