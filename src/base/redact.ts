/**
 * Removes credentials from a URL-like string (`rtsp://user:pass@host/x` -> `rtsp://host/x`) and drops
 * query parameters that commonly carry tokens. Works on strings that URL() cannot parse too, because
 * Wowza `sourceIp` values are not always well-formed URLs.
 */
export function redactUrl(input: string): string {
  let out = input.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, '$1');
  out = out.replace(/([?&](?:token|access_token|auth|password|passwd|pwd|secret|key|signature|sig)=)[^&#\s]*/gi, '$1REDACTED');
  return out;
}

/**
 * Wowza logs the URLs clients and pulled sources use, and those can carry credentials
 * (`rtsp://user:pass@camera/...`) or tokens in the query. Before lines leave for other systems the
 * user info and token-like query values are blanked, wherever in a field they appear.
 */
const USER_INFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;
/** Query parameter names (the end of them) whose values are blanked. */
const SECRET_NAMES = 'token|tokenhash|auth|password|passwd|pwd|secret|key|signature|sig';
const SECRET_PARAMS = new RegExp(`((?:^|[?&;\\s])[\\w.-]*(?:${SECRET_NAMES})=)[^&#\\s]*`, 'gi');

/**
 * Cheap tests for "a pattern could match": user info needs `@`, a secret parameter needs one of the names
 * right before `=`. Most lines hold URLs but neither, and skip the two replaces (2 us of a 358-byte line).
 */
const SECRET_PARAM_NAME = new RegExp(`(?:${SECRET_NAMES})=`, 'i');

/**
 * Blanks the user info of URLs and token-like query values anywhere in `text` (log lines, what a server says).
 * No pattern crosses a tab: blanking a log line blanks each field parsed from it.
 */
export function redactSecrets(text: string): string {
  const userInfo = text.includes('@') && text.includes('://');
  const params = text.includes('=') && SECRET_PARAM_NAME.test(text);
  if (!userInfo && !params) return text;
  const out = userInfo ? text.replace(USER_INFO, '$1') : text;
  return params ? out.replace(SECRET_PARAMS, '$1REDACTED') : out;
}

/**
 * The scheme of a source URL (`rtsp`, `srt`, `wowz`, ...), lowercased, `local` for a stream the server makes itself
 * (a real 4.7.0 server writes `local (Transcoder)` for a transcoder rendition), or `unknown`.
 */
export function urlScheme(input: string | null | undefined): string {
  if (!input) return 'unknown';
  if (/^local\b/i.test(input.trim())) return 'local';
  const m = /^([a-z][a-z0-9+.-]*):\/\//i.exec(input.trim());
  return m ? m[1]!.toLowerCase() : 'unknown';
}
