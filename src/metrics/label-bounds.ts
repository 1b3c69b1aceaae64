import { createHash } from 'node:crypto';

/**
 * The longest label value, in UTF-8 bytes, the exporter takes from a server at all (a vhost, application, instance,
 * stream or recorder name, a state, a version). A value longer than this is no name a person gave: it is a broken or
 * hostile server, its object is left out (`too_long`), and the value never reaches a log line, a probe or a page.
 */
export const MAX_LABEL_VALUE_BYTES = 256;

/**
 * The longest label value, in UTF-8 bytes, a server's series carry in /metrics; longer ones (up to
 * MAX_LABEL_VALUE_BYTES) are shortened by shortenLabelValue. Real Wowza names are a few dozen characters (a UUID
 * stream name with a rendition suffix is about 45), so 96 leaves them alone, while a server of 5,000 streams named with
 * 250 bytes each (the name is repeated on each of a stream's dozens of series) no longer makes an 89 MB scrape.
 */
export const MAX_LABEL_BYTES = 96;

/** The hex digits of the name's hash a shortened value ends with: 64 bits, so distinct names do not meet by chance. */
const HASH_HEX = 16;
/** `~` and the hash. */
const SUFFIX_BYTES = 1 + HASH_HEX;
/** The end of a shortened value; a server's own name that looks like one is checked for collisions (series-cap.ts). */
export const SHORTENED_SUFFIX = /~[0-9a-f]{16}$/;

/**
 * Whether `value` is over MAX_LABEL_VALUE_BYTES. A value over it is left out with its object, never shortened: it
 * would reach the log, the status page and /probe before any shortening, and no real server sends one.
 */
export function labelValueTooLong(value: string): boolean {
  return overBytes(value, MAX_LABEL_VALUE_BYTES);
}

/** Whether `value` is over `max` UTF-8 bytes; a UTF-16 code unit is at most 3 of them, so most are decided by length. */
export function overBytes(value: string, max: number): boolean {
  if (value.length * 3 <= max) return false;
  if (value.length > max) return true;
  return Buffer.byteLength(value, 'utf8') > max;
}

/**
 * `value` as a label value of at most MAX_LABEL_BYTES UTF-8 bytes: unchanged when it fits, else the longest prefix
 * that leaves room (cut between characters, never inside one, nor between the halves of a surrogate pair), `~`, and
 * the first 16 hex digits of the SHA-256 of the whole value. Names sharing a long prefix stay apart (the hash is of
 * all of it), the same name gives the same value at every poll and on every machine, and the prefix keeps it readable.
 */
export function shortenLabelValue(value: string, max = MAX_LABEL_BYTES): string {
  if (!overBytes(value, max)) return value;
  const hash = createHash('sha256').update(value, 'utf8').digest('hex').slice(0, HASH_HEX);
  return `${utf8Prefix(value, max - SUFFIX_BYTES)}~${hash}`;
}

/** The longest prefix of `value` of at most `max` UTF-8 bytes that ends on a character boundary. */
function utf8Prefix(value: string, max: number): string {
  let bytes = 0;
  let i = 0;
  while (i < value.length) {
    const c = value.codePointAt(i)!;
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    if (bytes + size > max) break;
    bytes += size;
    i += c >= 0x10000 ? 2 : 1;
  }
  return value.slice(0, i);
}
