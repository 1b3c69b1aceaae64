import type { LogRecord } from './w3c-parser.js';

/**
 * Wowza logs the URLs clients and pulled sources use, and those can carry credentials
 * (`rtsp://user:pass@camera/...`) or tokens in the query. Before lines leave for other systems the
 * user info and token-like query values are blanked, wherever in a field they appear.
 */
const USER_INFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;
const SECRET_PARAMS = /((?:^|[?&;\s])[\w.-]*(?:token|tokenhash|auth|password|passwd|pwd|secret|key|signature|sig)=)[^&#\s]*/gi;

export function redactSecrets(text: string): string {
  if (!text.includes('://') && !text.includes('=')) return text;
  return text.replace(USER_INFO, '$1').replace(SECRET_PARAMS, '$1REDACTED');
}

/** A copy of `record` with secrets blanked in every text value (the record itself is not changed). */
export function redactRecord(record: LogRecord): LogRecord {
  let out: LogRecord | undefined;
  for (const [k, v] of Object.entries(record)) {
    if (typeof v !== 'string') continue;
    const clean = redactSecrets(v);
    if (clean !== v) (out ??= { ...record })[k] = clean;
  }
  return out ?? record;
}
