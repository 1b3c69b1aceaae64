import { createHmac, timingSafeEqual } from 'node:crypto';

export class JwtError extends Error {
  constructor(readonly reason: 'malformed' | 'algorithm' | 'signature' | 'expired' | 'not_yet_valid', message: string) {
    super(message);
  }
}

function b64urlJson(part: string, what: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
    return v as Record<string, unknown>;
  } catch {
    throw new JwtError('malformed', `token ${what} is not base64url JSON`);
  }
}

/**
 * Verifies an HS256 JWT: the signature with the shared secret (constant-time), then `exp` and `nbf` with a
 * little clock skew. Other claims are tolerated, since Wowza does not document them.
 */
export function verifyHs256(token: string, secret: string, nowMs = Date.now(), skewSeconds = 30): Record<string, unknown> {
  const parts = token.split('.');
  if (parts.length !== 3) throw new JwtError('malformed', 'token is not a JWT (three dot-separated parts)');
  const [h, p, s] = parts as [string, string, string];
  const header = b64urlJson(h, 'header');
  if (header.alg !== 'HS256') throw new JwtError('algorithm', `token algorithm ${JSON.stringify(header.alg)} is not HS256`);
  const expected = createHmac('sha256', secret).update(`${h}.${p}`).digest();
  const given = Buffer.from(s, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new JwtError('signature', 'token signature does not match the secret');
  const claims = b64urlJson(p, 'payload');
  const now = nowMs / 1000;
  if (typeof claims.exp === 'number' && now > claims.exp + skewSeconds) throw new JwtError('expired', 'token has expired');
  if (typeof claims.nbf === 'number' && now < claims.nbf - skewSeconds) throw new JwtError('not_yet_valid', 'token is not valid yet');
  return claims;
}

/** Signs claims as an HS256 JWT (the simulator uses this to sign the events it fires). */
export function signHs256(claims: Record<string, unknown>, secret: string): string {
  const h = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
  const p = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const s = createHmac('sha256', secret).update(`${h}.${p}`).digest('base64url');
  return `${h}.${p}.${s}`;
}
