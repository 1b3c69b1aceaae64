import { timingSafeEqual } from 'node:crypto';
import { digestResponse, parseAuthorization, parseDigestAlgorithm } from './digest.js';
import { NonceStore } from './nonces.js';

/**
 * The REST API's authentication: Basic (WSE >= 4.8.5), Digest as real servers challenge
 * (`realm="Wowza", domain="/", qop="auth"`, expiring nonces, nonce-count checks), or none.
 */

export type AuthMode = 'basic' | 'digest' | 'none';
export const REALM = 'Wowza';

export interface Credentials {
  readonly username: string;
  readonly password: string;
}

export interface AuthSettings {
  mode: AuthMode;
  algorithms: ReadonlyArray<'MD5' | 'SHA-256'>;
  nonceTtlMs: number;
  /** Uses after which a nonce is retired (0: none). */
  nonceMaxUses?: number;
  strictNonceCount: boolean;
}

export type AuthVerdict =
  | { ok: true }
  /** 401 with fresh challenges; `stale` only when the credentials were right and the nonce was not. */
  | { ok: false; status: 401; challenges: string[]; stale: boolean; reason: string }
  /** 400: a well-formed answer to the wrong request (the digest `uri` is not the request's). */
  | { ok: false; status: 400; reason: string };

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export class AuthGate {
  private readonly nonces: NonceStore;

  constructor(
    private readonly settings: AuthSettings,
    private readonly credentials: () => Credentials,
    now: () => number = Date.now,
  ) {
    this.nonces = new NonceStore(settings.nonceTtlMs, now, settings.nonceMaxUses ?? 0);
  }

  check(method: string, requestTarget: string, authorization: string | undefined): AuthVerdict {
    switch (this.settings.mode) {
      case 'none':
        return { ok: true };
      case 'basic':
        return this.checkBasic(authorization);
      case 'digest':
        return this.checkDigest(method, requestTarget, authorization);
    }
  }

  private checkBasic(authorization: string | undefined): AuthVerdict {
    const deny = (reason: string): AuthVerdict => ({ ok: false, status: 401, challenges: [`Basic realm="${REALM}"`], stale: false, reason });
    const m = /^basic\s+([A-Za-z0-9+/=._~-]+)\s*$/i.exec(authorization ?? '');
    if (!m) return deny(authorization ? 'not Basic credentials' : 'no credentials');
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const { username, password } = this.credentials();
    if (colon < 0 || !sameText(decoded.slice(0, colon), username) || !sameText(decoded.slice(colon + 1), password)) return deny('wrong username or password');
    return { ok: true };
  }

  private challenges(stale: boolean): string[] {
    const nonce = this.nonces.issue();
    return this.settings.algorithms.map(
      (alg) => `Digest realm="${REALM}", domain="/", nonce="${nonce}", algorithm=${alg}, qop="auth"${stale ? ', stale=true' : ''}`,
    );
  }

  private checkDigest(method: string, requestTarget: string, authorization: string | undefined): AuthVerdict {
    const deny = (reason: string, stale = false): AuthVerdict => ({ ok: false, status: 401, challenges: this.challenges(stale), stale, reason });
    if (!authorization) return deny('no credentials');
    const p = parseAuthorization(authorization);
    if (!p) return deny('not Digest credentials');
    const { username, password } = this.credentials();
    const algorithm = parseDigestAlgorithm(p.algorithm ?? 'MD5');
    if (!algorithm || !this.settings.algorithms.includes(algorithm)) return deny(`algorithm ${p.algorithm ?? 'MD5'} was not offered`);
    if (p.username === undefined || !sameText(p.username, username)) return deny('wrong username or password');
    if (p.realm !== REALM) return deny('wrong realm');
    if (!p.nonce || !p.response) return deny('incomplete Digest credentials');
    if ((p.qop ?? '').toLowerCase() !== 'auth') return deny('qop=auth is required');
    if (!p.cnonce || !/^[0-9a-fA-F]{8}$/.test(p.nc ?? '')) return deny('qop=auth needs cnonce and an 8-hex-digit nc');
    if (p.uri !== requestTarget) return { ok: false, status: 400, reason: 'the Digest uri does not match the request' };
    const expected = digestResponse({ algorithm, username, password, realm: REALM, nonce: p.nonce, cnonce: p.cnonce, nc: p.nc!, method, uri: p.uri });
    if (!sameText(expected, p.response.toLowerCase())) return deny('wrong username or password');
    // The password was right: only now may the answer say "stale", which tells the client to just retry.
    if (this.nonces.state(p.nonce) !== 'valid') return deny('nonce expired or unknown', true);
    if (!this.nonces.useCount(p.nonce, parseInt(p.nc!, 16), this.settings.strictNonceCount)) return deny(`nonce count ${p.nc} already used or out of order`);
    return { ok: true };
  }
}
