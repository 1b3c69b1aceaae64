import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import bcrypt from 'bcryptjs';
import pLimit from 'p-limit';

/** Runs before routing; resolves false when it has already answered the request (e.g. with a 401). */
export type RequestGuard = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

export const BASIC_AUTH_REALM = 'wowza-exporter';

/** `$2a$`, `$2b$` or `$2y$` (htpasswd), a two-digit cost, 22 salt and 31 hash characters. */
const BCRYPT_HASH = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;

/** The bcrypt cost of `hash`, or undefined when it is not a bcrypt hash that bcryptjs can check. */
export function bcryptCost(hash: string): number | undefined {
  const m = BCRYPT_HASH.exec(hash);
  if (!m) return undefined;
  const cost = Number(m[1]);
  return cost >= 4 && cost <= 31 ? cost : undefined;
}

/** User and password of an `Authorization: Basic ...` header; undefined when absent or malformed. */
export function parseBasicAuthorization(header: string | undefined): { user: string; password: string } | undefined {
  if (!header) return undefined;
  const m = /^basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * Checks user/password pairs against bcrypt hashes. bcrypt costs ~100 ms of CPU by design, so a password that
 * passed once is remembered per user as a keyed SHA-256 (HMAC with a per-process random key, so memory never
 * holds a fast unsalted hash of it) and later requests only pay a constant-time comparison. Only successes are
 * remembered and there is one slot per configured user: the cache is bounded by the config and garbage
 * credentials can never evict a good entry.
 */
export class BasicAuthVerifier {
  private readonly key = randomBytes(32);
  private readonly verified = new Map<string, Buffer>();
  private readonly pending = new Map<string, Promise<boolean>>();
  /** One bcrypt at a time, as exporter-toolkit does: bounds the CPU a flood of wrong passwords can take. */
  private readonly oneAtATime = pLimit(1);
  /** Checks that may wait for it: beyond that a flood is turned away at once instead of queueing without bound. */
  static readonly MAX_WAITING = 32;
  /** Unknown users are checked against a real hash so that timing does not tell which users exist. */
  private readonly decoyHash: string;

  constructor(private readonly users: ReadonlyMap<string, string>) {
    const first = users.values().next();
    if (first.done) throw new Error('BasicAuthVerifier needs at least one user');
    this.decoyHash = first.value;
  }

  /** True for the right password, false for a wrong one, `busy` when too many checks wait already (nothing checked). */
  async verify(user: string, password: string): Promise<boolean | 'busy'> {
    const hash = this.users.get(user);
    const digest = createHmac('sha256', this.key).update(user).update('\0').update(password).digest();
    const known = hash === undefined ? undefined : this.verified.get(user);
    if (known && timingSafeEqual(known, digest)) return true;

    // Concurrent requests with the same credentials (a cold start with several scrapers) share one bcrypt run.
    const id = digest.toString('hex');
    let check = this.pending.get(id);
    if (!check && this.oneAtATime.pendingCount >= BasicAuthVerifier.MAX_WAITING) return 'busy';
    if (!check) {
      check = this.oneAtATime(() => bcrypt.compare(password, hash ?? this.decoyHash)).finally(() => this.pending.delete(id));
      this.pending.set(id, check);
    }
    const ok = (await check) && hash !== undefined;
    if (ok) this.verified.set(user, digest);
    return ok;
  }
}

/** A guard answering 401 with a Basic challenge unless the request carries the credentials of a configured user. */
export function createBasicAuthGuard(users: ReadonlyMap<string, string>, realm = BASIC_AUTH_REALM): RequestGuard {
  const verifier = new BasicAuthVerifier(users);
  const challenge = `Basic realm="${realm}"`;
  return async (req, res) => {
    const credentials = parseBasicAuthorization(req.headers.authorization);
    const verdict = credentials ? await verifier.verify(credentials.user, credentials.password) : false;
    if (verdict === true) return true;
    if (verdict === 'busy') {
      const text = 'Too many password checks waiting; try again\n';
      res.writeHead(503, { 'retry-after': '1', 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return false;
    }
    const body = 'Unauthorized\n';
    res.writeHead(401, { 'www-authenticate': challenge, 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return false;
  };
}
