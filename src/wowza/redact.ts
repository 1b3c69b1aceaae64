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

/** The scheme of a source URL (`rtsp`, `srt`, `wowz`, ...), lowercased, or `unknown`. */
export function urlScheme(input: string | null | undefined): string {
  if (!input) return 'unknown';
  const m = /^([a-z][a-z0-9+.-]*):\/\//i.exec(input.trim());
  return m ? m[1]!.toLowerCase() : 'unknown';
}
