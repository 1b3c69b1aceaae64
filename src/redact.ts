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
 * The scheme of a source URL (`rtsp`, `srt`, `wowz`, ...), lowercased, `local` for a stream the server makes itself
 * (a real 4.7.0 server writes `local (Transcoder)` for a transcoder rendition), or `unknown`.
 */
export function urlScheme(input: string | null | undefined): string {
  if (!input) return 'unknown';
  if (/^local\b/i.test(input.trim())) return 'local';
  const m = /^([a-z][a-z0-9+.-]*):\/\//i.exec(input.trim());
  return m ? m[1]!.toLowerCase() : 'unknown';
}
