import { createHash, randomBytes } from 'node:crypto';

/**
 * RFC 7616 HTTP Digest primitives shared by the REST client and the simulator. Pure functions: no I/O, no
 * state; the caller owns the nonce count and the retry policy.
 */

export type DigestAlgorithm = 'MD5' | 'MD5-sess' | 'SHA-256' | 'SHA-256-sess';

/** One challenge of a `WWW-Authenticate` header (or the credentials of an `Authorization` header). */
export interface AuthChallenge {
  /** Lowercased (`digest`, `basic`, ...). */
  scheme: string;
  /** Lowercased names; values unquoted and unescaped. The first occurrence of a name wins. */
  params: Record<string, string>;
  /** The token68 form (`Negotiate abc==`), when the scheme carries one instead of parameters. */
  token68?: string;
}

export interface DigestChallenge {
  realm: string;
  nonce: string;
  opaque?: string;
  algorithm: DigestAlgorithm;
  /** Lowercased qop options offered; empty for an RFC 2069 server. */
  qop: string[];
  stale: boolean;
  domain?: string;
  charset?: string;
  userhash?: boolean;
}

const ALGORITHMS: Record<string, DigestAlgorithm> = {
  md5: 'MD5',
  'md5-sess': 'MD5-sess',
  'sha-256': 'SHA-256',
  'sha-256-sess': 'SHA-256-sess',
};

/** The canonical spelling of a supported algorithm name (case-insensitive), or undefined. */
export function parseDigestAlgorithm(name: string): DigestAlgorithm | undefined {
  return ALGORITHMS[name.trim().toLowerCase()];
}

const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const TOKEN68 = /[A-Za-z0-9\-._~+/]+=*/y;
const isSpace = (ch: string | undefined) => ch === ' ' || ch === '\t';

/**
 * Parses one or several `WWW-Authenticate` values. Several challenges may share one value, comma-joined
 * (`Digest realm="a", nonce="b", Basic realm="c"`): a token followed by `=` is a parameter of the current
 * challenge, any other token starts a new one. Malformed input yields what could be read, never a throw.
 */
export function parseChallenges(header: string | string[]): AuthChallenge[] {
  if (Array.isArray(header)) return header.flatMap((h) => parseChallenges(h));
  const s = String(header);
  const out: AuthChallenge[] = [];
  let current: AuthChallenge | undefined;
  let i = 0;

  const readToken = (): string => {
    const start = i;
    while (i < s.length && TCHAR.test(s[i]!)) i++;
    return s.slice(start, i);
  };
  const skipSpaces = () => {
    while (isSpace(s[i])) i++;
  };
  // Unquoted values should be tokens, but servers send base64 nonces and paths bare: read up to a separator.
  const readBare = (): string => {
    const start = i;
    while (i < s.length && s[i] !== ',' && !isSpace(s[i])) i++;
    return s.slice(start, i);
  };
  const readQuoted = (): string => {
    let value = '';
    i++; // opening quote
    while (i < s.length) {
      const ch = s[i]!;
      if (ch === '\\' && i + 1 < s.length) {
        value += s[i + 1];
        i += 2;
      } else if (ch === '"') {
        i++;
        return value;
      } else {
        value += ch;
        i++;
      }
    }
    return value; // unterminated: take the rest rather than fail
  };

  while (i < s.length) {
    while (i < s.length && (isSpace(s[i]) || s[i] === ',')) i++;
    if (i >= s.length) break;
    const token = readToken();
    if (token === '') {
      i++; // a stray character outside any construct: skip it
      continue;
    }
    const afterToken = i;
    skipSpaces();
    if (s[i] === '=' && current) {
      i++;
      skipSpaces();
      const value = s[i] === '"' ? readQuoted() : readBare();
      const name = token.toLowerCase();
      if (!(name in current.params)) current.params[name] = value;
      continue;
    }
    i = afterToken;
    current = { scheme: token.toLowerCase(), params: {} };
    out.push(current);
    if (!isSpace(s[i])) continue;
    skipSpaces();
    TOKEN68.lastIndex = i;
    const m = TOKEN68.exec(s);
    if (m) {
      let end = i + m[0].length;
      while (isSpace(s[end])) end++;
      // `realm=x` also matches the token68 pattern up to `=`; only a lone token68 ends the challenge.
      if (end >= s.length || s[end] === ',') {
        current.token68 = m[0];
        i = end;
      }
    }
  }
  return out;
}

/** A digest challenge in typed form; undefined when not Digest, without a nonce, or not supported. */
export function toDigestChallenge(c: AuthChallenge): DigestChallenge | undefined {
  if (c.scheme !== 'digest') return undefined;
  const p = c.params;
  if (!p.nonce) return undefined;
  const algorithm = parseDigestAlgorithm(p.algorithm ?? 'MD5');
  if (!algorithm) return undefined;
  const qop = (p.qop ?? '')
    .split(',')
    .map((q) => q.trim().toLowerCase())
    .filter((q) => q !== '');
  if (qop.length > 0 && !qop.includes('auth') && !qop.includes('auth-int')) return undefined;
  const challenge: DigestChallenge = {
    realm: p.realm ?? '',
    nonce: p.nonce,
    algorithm,
    qop,
    stale: (p.stale ?? '').trim().toLowerCase() === 'true',
  };
  if (p.opaque !== undefined) challenge.opaque = p.opaque;
  if (p.domain !== undefined) challenge.domain = p.domain;
  if (p.charset !== undefined) challenge.charset = p.charset;
  if (p.userhash !== undefined) challenge.userhash = p.userhash.trim().toLowerCase() === 'true';
  return challenge;
}

const strength = (a: DigestAlgorithm) => (a.startsWith('SHA-256') ? 2 : 1);

/** The strongest supported digest challenge offered (SHA-256 over MD5; the first among equals). */
export function pickDigestChallenge(header: string | string[]): DigestChallenge | undefined {
  let best: DigestChallenge | undefined;
  for (const c of parseChallenges(header)) {
    const d = toDigestChallenge(c);
    if (d && (!best || strength(d.algorithm) > strength(best.algorithm))) best = d;
  }
  return best;
}

function hashHex(algorithm: DigestAlgorithm, data: string | Uint8Array): string {
  return createHash(algorithm.startsWith('SHA-256') ? 'sha256' : 'md5')
    .update(data)
    .digest('hex');
}

/** `nc` as the 8 hex digits the wire format wants; accepts a count or an already formatted value. */
export function formatNonceCount(nc: number | string): string {
  if (typeof nc === 'string') {
    if (!/^[0-9a-fA-F]{8}$/.test(nc)) throw new RangeError(`nonce count must be 8 hex digits, got "${nc}"`);
    return nc.toLowerCase();
  }
  if (!Number.isInteger(nc) || nc < 1 || nc > 0xffffffff) throw new RangeError(`nonce count must be an integer from 1 to 4294967295, got ${nc}`);
  return nc.toString(16).padStart(8, '0');
}

export interface DigestResponseInput {
  algorithm: DigestAlgorithm;
  username: string;
  password: string;
  realm: string;
  nonce: string;
  /** Required with qop and with the -sess algorithms. */
  cnonce?: string;
  nc?: number | string;
  /** `auth`, `auth-int`, or absent for the legacy RFC 2069 form. */
  qop?: string;
  method: string;
  uri: string;
  /** The request body, for qop=auth-int (empty when absent). */
  body?: string | Uint8Array;
}

/** The `response` value (lowercase hex) per RFC 7616 section 3.4.1. */
export function digestResponse(input: DigestResponseInput): string {
  const { algorithm, username, password, realm, nonce, cnonce, qop, method, uri } = input;
  const H = (data: string | Uint8Array) => hashHex(algorithm, data);
  let ha1 = H(`${username}:${realm}:${password}`);
  if (algorithm.endsWith('-sess')) {
    if (cnonce === undefined) throw new TypeError(`${algorithm} needs a cnonce`);
    ha1 = H(`${ha1}:${nonce}:${cnonce}`);
  }
  if (qop === undefined || qop === '') return H(`${ha1}:${nonce}:${H(`${method}:${uri}`)}`);
  const q = qop.toLowerCase();
  if (q !== 'auth' && q !== 'auth-int') throw new TypeError(`unsupported qop "${qop}"`);
  if (cnonce === undefined || input.nc === undefined) throw new TypeError('qop needs a cnonce and a nonce count');
  const ha2 = q === 'auth-int' ? H(`${method}:${uri}:${H(input.body ?? '')}`) : H(`${method}:${uri}`);
  return H(`${ha1}:${nonce}:${formatNonceCount(input.nc)}:${cnonce}:${q}:${ha2}`);
}

function quote(name: string, value: string): string {
  // A line break in a header value would be request smuggling, not a credential.
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value)) throw new TypeError(`digest ${name} contains a control character`);
  return `"${value.replace(/[\\"]/g, (c) => '\\' + c)}"`;
}

/** RFC 8187 ext-value (`UTF-8''...`) for a username that a quoted-string cannot carry. */
function extValue(value: string): string {
  return "UTF-8''" + encodeURIComponent(value).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

export interface DigestCredentials {
  username: string;
  password: string;
  method: string;
  /** The request-target exactly as sent (path and query). */
  uri: string;
  nc: number;
  cnonce: string;
  /** The request body, only used when the server offers nothing but qop=auth-int. */
  body?: string | Uint8Array;
}

/** The `Authorization` header value answering `challenge` (RFC 7616 section 3.4). */
export function authorizationHeader(challenge: DigestChallenge, creds: DigestCredentials): string {
  const qop = challenge.qop.includes('auth') ? 'auth' : challenge.qop.includes('auth-int') ? 'auth-int' : undefined;
  const response = digestResponse({
    algorithm: challenge.algorithm,
    username: creds.username,
    password: creds.password,
    realm: challenge.realm,
    nonce: challenge.nonce,
    cnonce: creds.cnonce,
    nc: creds.nc,
    qop,
    method: creds.method,
    uri: creds.uri,
    body: creds.body,
  });
  const parts: string[] = [];
  if (challenge.userhash) {
    parts.push(`username="${hashHex(challenge.algorithm, `${creds.username}:${challenge.realm}`)}"`);
  } else if (/^[\x20-\x7e]*$/.test(creds.username)) {
    parts.push(`username=${quote('username', creds.username)}`);
  } else {
    parts.push(`username*=${extValue(creds.username)}`);
  }
  parts.push(`realm=${quote('realm', challenge.realm)}`, `uri=${quote('uri', creds.uri)}`, `algorithm=${challenge.algorithm}`);
  parts.push(`nonce=${quote('nonce', challenge.nonce)}`);
  if (qop) parts.push(`nc=${formatNonceCount(creds.nc)}`, `cnonce=${quote('cnonce', creds.cnonce)}`, `qop=${qop}`);
  parts.push(`response="${response}"`);
  if (challenge.opaque !== undefined) parts.push(`opaque=${quote('opaque', challenge.opaque)}`);
  if (challenge.userhash) parts.push('userhash=true');
  return 'Digest ' + parts.join(', ');
}

/**
 * Server side: the parameters of a Digest `Authorization` header, names lowercased, `username*` decoded
 * into `username`. Undefined when the header is not Digest or cannot be read.
 */
export function parseAuthorization(header: string): Record<string, string> | undefined {
  const [c] = parseChallenges(header);
  if (!c || c.scheme !== 'digest') return undefined;
  const params = { ...c.params };
  const ext = params['username*'];
  if (params.username === undefined && ext !== undefined) {
    const m = /^utf-8'[^']*'(.*)$/i.exec(ext);
    if (!m) return undefined;
    try {
      params.username = decodeURIComponent(m[1]!);
    } catch {
      return undefined;
    }
  }
  return params;
}

/** A fresh client nonce: 128 random bits. */
export function newCnonce(): string {
  return randomBytes(16).toString('hex');
}
