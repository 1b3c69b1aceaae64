import { authorizationHeader, newCnonce, pickDigestChallenge, parseChallenges, type DigestChallenge } from './digest.js';

export type AuthMode = 'auto' | 'basic' | 'digest';

/** What to do after a 401. */
export type ChallengeVerdict = { retry: true } | { retry: false; reason: string };

/**
 * Holds the credentials and the digest session (nonce + nonce count) of one server. Reusing the nonce with
 * an increasing `nc` saves a 401 round trip per request; any 401 replaces the challenge and earns one retry.
 */
export class Authenticator {
  private challenge: DigestChallenge | undefined;
  private nc = 0;
  private scheme: 'basic' | 'digest' | undefined;

  constructor(
    readonly mode: AuthMode,
    readonly username: string | undefined,
    private readonly password: string | undefined,
  ) {
    if (mode === 'basic') this.scheme = 'basic';
    if (mode === 'digest') this.scheme = 'digest';
  }

  get hasCredentials(): boolean {
    return this.username !== undefined && this.username !== '';
  }

  /** The scheme in use once known (`auto` learns it from the first challenge). */
  get activeScheme(): 'basic' | 'digest' | undefined {
    return this.scheme;
  }

  /** The Authorization header for a request, or undefined while no challenge has been seen yet. */
  header(method: string, uri: string): string | undefined {
    if (!this.hasCredentials) return undefined;
    if (this.scheme === 'basic') {
      return 'Basic ' + Buffer.from(`${this.username}:${this.password ?? ''}`, 'utf8').toString('base64');
    }
    if (this.scheme === 'digest' && this.challenge) {
      this.nc += 1;
      return authorizationHeader(this.challenge, {
        username: this.username!,
        password: this.password ?? '',
        method,
        uri,
        nc: this.nc,
        cnonce: newCnonce(),
      });
    }
    return undefined;
  }

  /**
   * Learns from a 401's `WWW-Authenticate`. `attempt` counts the tries so far for this request (1 = the
   * first). A first 401 always earns a retry with the fresh challenge (nonces expire, and concurrent
   * requests can reach a strict server out of `nc` order); a later one only when the server says `stale`.
   */
  onUnauthorized(wwwAuthenticate: string | string[] | undefined, attempt: number, sentCredentials: boolean): ChallengeVerdict {
    if (!this.hasCredentials) return { retry: false, reason: 'the server requires credentials and no username is configured' };
    const offered = wwwAuthenticate ? parseChallenges(wwwAuthenticate).map((c) => c.scheme) : [];
    const digest = wwwAuthenticate ? pickDigestChallenge(wwwAuthenticate) : undefined;
    const offersBasic = offered.includes('basic');

    if (this.mode === 'basic' && !offersBasic && digest) {
      return { retry: false, reason: 'the server asks for Digest authentication but auth is set to basic (use digest or auto)' };
    }
    if (this.mode === 'digest' && !digest) {
      if (offersBasic) return { retry: false, reason: 'the server asks for Basic authentication but auth is set to digest (use basic or auto)' };
      return { retry: false, reason: 'the server sent no usable Digest challenge' };
    }
    if (this.mode === 'auto' && this.scheme === undefined) {
      if (digest) this.scheme = 'digest';
      else if (offersBasic) this.scheme = 'basic';
      else return { retry: false, reason: `the server offers no supported scheme (${offered.join(', ') || 'no challenge'})` };
    }
    if (this.scheme === 'digest' && digest) {
      const stale = digest.stale;
      this.challenge = digest;
      this.nc = 0;
      if (!sentCredentials || attempt === 1 || (stale && attempt <= 2)) return { retry: true };
      return { retry: false, reason: 'wrong username or password (Digest rejected)' };
    }
    if (!sentCredentials && attempt === 1) return { retry: true };
    return { retry: false, reason: `wrong username or password (${this.scheme === 'digest' ? 'Digest' : 'Basic'} rejected)` };
  }
}
