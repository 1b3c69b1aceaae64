/**
 * The Wowza Video reference is silent on rate limits ("Rate limits and other limits: not shown", section 8) and
 * on 429; this follows HTTP's own `Retry-After` (RFC 9110, section 10.2.3).
 *
 * Milliseconds to wait from a `Retry-After` header: delta-seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2015 07:28:00 GMT`). Undefined when absent or unreadable; a date in the past means 0.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only the date forms HTTP allows: a day name, or the asctime form; Date.parse would take much more.
  if (!/^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
