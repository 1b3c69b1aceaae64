import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signHs256 } from '../../src/webhooks/jwt.js';

describe('signHs256', () => {
  it('signs the well-known HS256 example token (header {"alg":"HS256","typ":"JWT"})', () => {
    expect(signHs256({ sub: '1234567890', name: 'John Doe', iat: 1516239022 }, 'your-256-bit-secret')).toBe(
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
    );
  });

  it('writes base64url without padding, and the signature covers header.payload', () => {
    const token = signHs256({ iss: 'ü?>', exp: 1 }, 's3cret');
    const [h, p, s] = token.split('.') as [string, string, string];
    for (const part of [h, p, s]) expect(part).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(JSON.parse(Buffer.from(p, 'base64url').toString('utf8'))).toEqual({ iss: 'ü?>', exp: 1 });
    expect(s).toBe(createHmac('sha256', 's3cret').update(`${h}.${p}`).digest('base64url'));
  });
});
