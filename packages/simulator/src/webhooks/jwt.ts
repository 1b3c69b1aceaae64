import { createHmac } from 'node:crypto';

const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/**
 * The token a Wowza server sends with a webhook event for a target with a secret: a JWT (RFC 7519) signed with
 * HS256, HMAC-SHA256 of `header.payload` keyed with the secret (RFC 7515, RFC 7518 section 3.2).
 */
export function signHs256(claims: Record<string, unknown>, secret: string): string {
  const signingInput = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify(claims))}`;
  return `${signingInput}.${createHmac('sha256', secret).update(signingInput).digest('base64url')}`;
}
