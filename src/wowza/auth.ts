import { authorizationHeader, newCnonce, pickDigestChallenge, parseChallenges, type DigestChallenge } from './digest.js';

export type AuthMode = 'auto' | 'basic' | 'digest';

/** What to do after a 401, and what kind of challenge it was (for wowza_exporter_auth_challenges_total). */
export type ChallengeVerdict = ({ retry: true } | { retry: false; reason: string }) & { challenge: ChallengeKind };

/** `initial`: no credentials (or no nonce) were sent yet; `stale`: the nonce was retired; `rejected`: the rest. */
export type ChallengeKind = 'initial' | 'stale' | 'rejected';

/** One digest session: a nonce and its count, used by one request at a time. */
export interface DigestSession {
  challenge?: DigestChallenge;
  nc: number;
}

/**
 * Holds the credentials of one origin (scheme, host, port) of a server and its digest sessions. Every origin negotiates
 * on its own: a default install has REST on Basic and the `:8086` providers on Digest (wowza-api.md), so a challenge
 * from one must never change what is sent to the other. Reusing a nonce with an increasing `nc` saves a 401
 * round trip per request, but a nonce shared by concurrent requests turns its retirement into a burst of 401s
 * (one per request in flight), and reaches a strict server with `nc` out of order (wowza-api.md, "Auth"). So each
 * request holds a session of its own while it runs: sessions are made as concurrency needs them, reused after,
 * and a 401 replaces only that session's nonce.
 */
export class Authenticator {
  private scheme: 'basic' | 'digest' | undefined;
  private readonly idle: DigestSession[] = [];
  private made = 0;

  /**
   * `basicRefused`: in `auto`, a Basic-only challenge is not answered and this says why. Basic sends the password in
   * clear to whoever asks, so it goes only where the user pointed (the REST URL, a configured provider URL) or over
   * TLS; an address the exporter found on its own gets credentials only in answer to a Digest challenge.
   */
  constructor(
    readonly mode: AuthMode,
    readonly username: string | undefined,
    private readonly password: string | undefined,
    private readonly basicRefused?: string,
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

  /** A session for one request, held until release: the most recently used idle one, or a new one. */
  acquire(): DigestSession {
    const session = this.idle.pop();
    if (session) return session;
    this.made++;
    return { nc: 0 };
  }

  release(session: DigestSession): void {
    this.idle.push(session);
  }

  /** Digest sessions made so far: the most requests that ran at once, not more. */
  get sessions(): number {
    return this.made;
  }

  /** The Authorization header for a request in `session`, or undefined while that session has no challenge yet. */
  header(method: string, uri: string, session: DigestSession): string | undefined {
    if (!this.hasCredentials) return undefined;
    if (this.scheme === 'basic') {
      return 'Basic ' + Buffer.from(`${this.username}:${this.password ?? ''}`, 'utf8').toString('base64');
    }
    if (this.scheme === 'digest' && session.challenge) {
      session.nc += 1;
      return authorizationHeader(session.challenge, {
        username: this.username!,
        password: this.password ?? '',
        method,
        uri,
        nc: session.nc,
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
  onUnauthorized(wwwAuthenticate: string | string[] | undefined, attempt: number, sentCredentials: boolean, session: DigestSession): ChallengeVerdict {
    const verdict = this.judge(wwwAuthenticate, attempt, sentCredentials, session);
    const stale = wwwAuthenticate !== undefined && pickDigestChallenge(wwwAuthenticate)?.stale === true;
    return { ...verdict, challenge: !sentCredentials ? 'initial' : stale ? 'stale' : 'rejected' };
  }

  private judge(
    wwwAuthenticate: string | string[] | undefined,
    attempt: number,
    sentCredentials: boolean,
    session: DigestSession,
  ): { retry: true } | { retry: false; reason: string } {
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
      else if (offersBasic && this.basicRefused !== undefined) return { retry: false, reason: this.basicRefused };
      else if (offersBasic) this.scheme = 'basic';
      else return { retry: false, reason: `the server offers no supported scheme (${offered.join(', ') || 'no challenge'})` };
    }
    if (this.scheme === 'digest' && digest) {
      const stale = digest.stale;
      session.challenge = digest;
      session.nc = 0;
      if (!sentCredentials || attempt === 1 || (stale && attempt <= 2)) return { retry: true };
      return { retry: false, reason: 'wrong username or password (Digest rejected)' };
    }
    if (!sentCredentials && attempt === 1) return { retry: true };
    return { retry: false, reason: `wrong username or password (${this.scheme === 'digest' ? 'Digest' : 'Basic'} rejected)` };
  }
}
