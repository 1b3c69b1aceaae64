import { entryDocument, type LogEntry } from '../transform/entry.js';

/**
 * A batch as NDJSON: one `{"server":…,"log_type":…, …record}` document per line.
 *
 * The encoder writes a segment's documents one after the other, each followed by a newline, and entries are views
 * of those bytes: consecutive entries of one segment are one run of bytes that already is their NDJSON, copied in
 * one piece (or, when the whole batch is one run, sent as it is, without a copy).
 */
export function encodeNdjson(entries: readonly LogEntry[]): Buffer {
  const docs = entries.map(entryDocument);
  let total = 0;
  for (const d of docs) total += d.length + 1;
  if (docs.length === 0) return Buffer.alloc(0);
  const first = docs[0]!;
  if (runs(docs, 0) === docs.length && total <= first.buffer.byteLength - first.byteOffset) {
    const whole = Buffer.from(first.buffer, first.byteOffset, total);
    if (whole[total - 1] === 10) return whole;
  }
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (let i = 0; i < docs.length; ) {
    const start = docs[i]!;
    const n = runs(docs, i);
    const last = docs[i + n - 1]!;
    const bytes = last.byteOffset + last.length - start.byteOffset;
    out.set(new Uint8Array(start.buffer, start.byteOffset, bytes), at);
    at += bytes;
    out[at++] = 10;
    i += n;
  }
  return out;
}

/** How many documents from `from` on lie one after the other in one buffer, a newline between each two. */
function runs(docs: readonly Uint8Array[], from: number): number {
  let prev = docs[from]!;
  let whole: Uint8Array | undefined;
  let n = 1;
  for (let i = from + 1; i < docs.length; i++, n++) {
    const d = docs[i]!;
    const end = prev.byteOffset + prev.length;
    if (d.buffer !== prev.buffer || d.byteOffset !== end + 1) break;
    whole ??= new Uint8Array(prev.buffer);
    if (whole[end] !== 10) break;
    prev = d;
  }
  return n;
}
