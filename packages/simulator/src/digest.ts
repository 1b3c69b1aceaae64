import { createHash } from 'node:crypto';

/**
 * The server's half of HTTP Digest (RFC 7616, after RFC 2617), as a Wowza server checks a REST request: read the
 * `Authorization` header's parameters, then compute the `response` the client should have sent. Only what the
 * simulator challenges with: MD5 and SHA-256, qop=auth. Written apart from the exporter's client so that each
 * checks the other.
 */

export type DigestAlgorithm = 'MD5' | 'SHA-256';

/** The algorithm a client named (case-insensitive, RFC 7616 section 3.3), or undefined when not one of ours. */
export function parseDigestAlgorithm(name: string): DigestAlgorithm | undefined {
  const n = name.trim().toUpperCase();
  return n === 'MD5' || n === 'SHA-256' ? n : undefined;
}

// RFC 7230 token characters: a parameter name.
const PARAM_NAME = /[ \t,]*([!#$%&'*+\-.^_`|~0-9A-Za-z]+)[ \t]*=[ \t]*/y;

/**
 * The parameters of a Digest `Authorization` header: names lowercased, values unquoted (`\"` unescaped), the first
 * of a repeated name kept, and `username*` (RFC 7616 section 3.4.4, an RFC 8187 `UTF-8''...` value) decoded into
 * `username` when there is no plain one. Undefined when the header is not Digest or `username*` cannot be read.
 */
export function parseAuthorization(header: string): Record<string, string> | undefined {
  const scheme = /^[ \t,]*digest(?=[ \t,]|$)/i.exec(header);
  if (!scheme) return undefined;
  const s = header.slice(scheme[0].length);
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  let i = 0;
  for (;;) {
    PARAM_NAME.lastIndex = i;
    const m = PARAM_NAME.exec(s);
    if (!m) break;
    i = PARAM_NAME.lastIndex;
    let value = '';
    if (s[i] === '"') {
      // quoted-string: up to the closing quote; a backslash takes the next character as it is.
      for (i++; i < s.length && s[i] !== '"'; i++) value += s[i] === '\\' && i + 1 < s.length ? s[++i] : s[i];
      i++;
    } else {
      // Clients send nonces and paths bare too: a value runs to a comma or a space.
      const start = i;
      while (i < s.length && s[i] !== ',' && s[i] !== ' ' && s[i] !== '\t') i++;
      value = s.slice(start, i);
    }
    const name = m[1]!.toLowerCase();
    if (!(name in params)) params[name] = value;
  }
  const extended = params['username*'];
  if (params.username === undefined && extended !== undefined) {
    const ext = /^utf-8'[^']*'(.*)$/i.exec(extended);
    if (!ext) return undefined;
    try {
      params.username = decodeURIComponent(ext[1]!);
    } catch {
      return undefined;
    }
  }
  return { ...params };
}

export interface DigestInput {
  algorithm: DigestAlgorithm;
  username: string;
  password: string;
  realm: string;
  nonce: string;
  cnonce: string;
  /** The nonce count as sent: 8 hex digits. */
  nc: string;
  method: string;
  uri: string;
}

/**
 * The `response` (lowercase hex) a client with the right password sends for qop=auth (RFC 7616 section 3.4.1):
 * H(H(username:realm:password):nonce:nc:cnonce:auth:H(method:uri)).
 */
export function digestResponse(d: DigestInput): string {
  const H = (text: string) => createHash(d.algorithm === 'SHA-256' ? 'sha256' : 'md5').update(text).digest('hex');
  const ha1 = H(`${d.username}:${d.realm}:${d.password}`);
  const ha2 = H(`${d.method}:${d.uri}`);
  return H(`${ha1}:${d.nonce}:${d.nc.toLowerCase()}:${d.cnonce}:auth:${ha2}`);
}
