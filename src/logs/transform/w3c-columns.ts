/** What the W3C columns of a Wowza log line hold, shared by the parser and the line writer. */

const NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$/;

/** The number a numeric column holds, or the text when it is not a number that survives the conversion. */
export function numericValue(text: string): number | string {
  if (!NUMBER.test(text)) return text;
  const n = Number(text);
  if (!Number.isFinite(n)) return text;
  // 64-bit counters beyond 2^53 would be silently rounded: keep their exact digits.
  if (Number.isInteger(n) && !Number.isSafeInteger(n)) return text;
  return n;
}

/** The columns a record's `timestamp` replaces. */
export const TIME_FIELDS = new Set(['date', 'time', 'tz']);
