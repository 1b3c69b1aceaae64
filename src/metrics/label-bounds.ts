/**
 * The longest label value, in UTF-8 bytes, the exporter takes from a server (a vhost, application, instance, stream or
 * recorder name, a state, a version). Wowza names are a few dozen characters; a value longer than this is a broken or
 * hostile server, and each one would be repeated on every series of its object, in every scrape.
 */
export const MAX_LABEL_VALUE_BYTES = 256;

/**
 * Whether `value` is over MAX_LABEL_VALUE_BYTES. A value over the cap is left out with its object, never cut: two names
 * that differ only past the cut would otherwise merge into one series without a word.
 */
export function labelValueTooLong(value: string): boolean {
  // A UTF-16 code unit is at most 3 UTF-8 bytes: short strings are decided without encoding them.
  if (value.length <= MAX_LABEL_VALUE_BYTES / 3) return false;
  if (value.length > MAX_LABEL_VALUE_BYTES) return true;
  return Buffer.byteLength(value, 'utf8') > MAX_LABEL_VALUE_BYTES;
}
