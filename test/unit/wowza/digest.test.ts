import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  authorizationHeader,
  digestResponse,
  formatNonceCount,
  newCnonce,
  parseAuthorization,
  parseChallenges,
  pickDigestChallenge,
  toDigestChallenge,
  type DigestAlgorithm,
  type DigestChallenge,
} from '../../../src/wowza/digest.js';

// RFC 7616 section 3.9.1
const RFC = {
  username: 'Mufasa',
  password: 'Circle of Life',
  realm: 'http-auth@example.org',
  nonce: '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v',
  cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ',
  nc: '00000001',
  qop: 'auth',
  method: 'GET',
  uri: '/dir/index.html',
};
const opaque = 'FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('digestResponse', () => {
  it('matches the RFC 7616 MD5 example', () => {
    expect(digestResponse({ ...RFC, algorithm: 'MD5' })).toBe('8ca523f5e9506fed4657c9700eebdbec');
  });

  it('matches the RFC 7616 SHA-256 example', () => {
    expect(digestResponse({ ...RFC, algorithm: 'SHA-256' })).toBe('753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1');
  });

  it('matches the RFC 2617 example (qop=auth, MD5)', () => {
    expect(
      digestResponse({
        algorithm: 'MD5',
        username: 'Mufasa',
        password: 'Circle Of Life',
        realm: 'testrealm@host.com',
        nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
        cnonce: '0a4f113b',
        nc: 1,
        qop: 'auth',
        method: 'GET',
        uri: '/dir/index.html',
      }),
    ).toBe('6629fae49393a05397450978507c4ef1');
  });

  it('hashes HA1 with the nonce and cnonce for the -sess variants', () => {
    for (const [algorithm, H] of [
      ['MD5-sess', md5],
      ['SHA-256-sess', sha256],
    ] as const) {
      const ha1 = H(`${H(`${RFC.username}:${RFC.realm}:${RFC.password}`)}:${RFC.nonce}:${RFC.cnonce}`);
      const ha2 = H(`${RFC.method}:${RFC.uri}`);
      const expected = H(`${ha1}:${RFC.nonce}:${RFC.nc}:${RFC.cnonce}:auth:${ha2}`);
      expect(digestResponse({ ...RFC, algorithm })).toBe(expected);
      expect(digestResponse({ ...RFC, algorithm })).not.toBe(digestResponse({ ...RFC, algorithm: algorithm === 'MD5-sess' ? 'MD5' : 'SHA-256' }));
    }
  });

  it('uses the legacy RFC 2069 form when the server offers no qop', () => {
    const ha1 = md5(`${RFC.username}:${RFC.realm}:${RFC.password}`);
    const ha2 = md5(`GET:${RFC.uri}`);
    expect(digestResponse({ ...RFC, qop: undefined, algorithm: 'MD5' })).toBe(md5(`${ha1}:${RFC.nonce}:${ha2}`));
  });

  it('covers the body with qop=auth-int', () => {
    const withBody = digestResponse({ ...RFC, algorithm: 'SHA-256', qop: 'auth-int', method: 'PUT', body: '{"a":1}' });
    const ha1 = sha256(`${RFC.username}:${RFC.realm}:${RFC.password}`);
    const ha2 = sha256(`PUT:${RFC.uri}:${sha256('{"a":1}')}`);
    expect(withBody).toBe(sha256(`${ha1}:${RFC.nonce}:${RFC.nc}:${RFC.cnonce}:auth-int:${ha2}`));
  });

  it('accepts the nonce count as a number and refuses out-of-range counts', () => {
    expect(digestResponse({ ...RFC, nc: 1, algorithm: 'MD5' })).toBe('8ca523f5e9506fed4657c9700eebdbec');
    expect(formatNonceCount(255)).toBe('000000ff');
    expect(formatNonceCount(0xffffffff)).toBe('ffffffff');
    expect(() => formatNonceCount(0)).toThrow(/nonce count/);
    expect(() => formatNonceCount(2 ** 32)).toThrow(/nonce count/);
    expect(() => formatNonceCount('1')).toThrow(/8 hex digits/);
  });

  it('refuses an unknown qop and a -sess algorithm without cnonce', () => {
    expect(() => digestResponse({ ...RFC, algorithm: 'MD5', qop: 'auth-conf' })).toThrow(/unsupported qop/);
    expect(() => digestResponse({ ...RFC, algorithm: 'MD5-sess', cnonce: undefined })).toThrow(/cnonce/);
  });
});

describe('parseChallenges', () => {
  it('reads the challenge real Wowza servers send', () => {
    const nonce = Buffer.from('1736858722000:0a1b2c3d4e5f').toString('base64');
    const [c] = parseChallenges(`Digest realm="Wowza", domain="/", nonce="${nonce}", algorithm=MD5, qop="auth"`);
    expect(c).toEqual({ scheme: 'digest', params: { realm: 'Wowza', domain: '/', nonce, algorithm: 'MD5', qop: 'auth' } });
  });

  it('splits several comma-joined challenges, with quoted commas kept inside values', () => {
    const h = 'Digest realm="a, b", nonce="n1", algorithm=SHA-256, qop="auth, auth-int", Digest realm="a", nonce="n2", Basic realm="x, y"';
    const cs = parseChallenges(h);
    expect(cs.map((c) => c.scheme)).toEqual(['digest', 'digest', 'basic']);
    expect(cs[0]!.params).toEqual({ realm: 'a, b', nonce: 'n1', algorithm: 'SHA-256', qop: 'auth, auth-int' });
    expect(cs[1]!.params).toEqual({ realm: 'a', nonce: 'n2' });
    expect(cs[2]!.params).toEqual({ realm: 'x, y' });
  });

  it('reads several header values, case-insensitive names, escapes and token68', () => {
    const cs = parseChallenges(['BASIC Realm="R\\"1\\\\"', 'Negotiate abc+/==', 'dIgEsT NONCE=xyz ,REALM = "r" ,  stale=TRUE']);
    expect(cs).toEqual([
      { scheme: 'basic', params: { realm: 'R"1\\' } },
      { scheme: 'negotiate', params: {}, token68: 'abc+/==' },
      { scheme: 'digest', params: { nonce: 'xyz', realm: 'r', stale: 'TRUE' } },
    ]);
  });

  it('reads bare values that are not strictly tokens (base64 nonces, paths)', () => {
    expect(parseChallenges('Digest nonce=ab/c+d==, domain=/, realm=r')[0]!.params).toEqual({ nonce: 'ab/c+d==', domain: '/', realm: 'r' });
  });

  it('keeps the first of a repeated parameter and survives garbage', () => {
    expect(parseChallenges('Digest nonce="a", nonce="b"')[0]!.params.nonce).toBe('a');
    expect(parseChallenges('')).toEqual([]);
    expect(parseChallenges(',,, ;;')).toEqual([]);
    expect(parseChallenges('Digest realm="unterminated')[0]!.params.realm).toBe('unterminated');
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(Array.isArray(parseChallenges(s))).toBe(true);
      }),
    );
  });
});

describe('toDigestChallenge / pickDigestChallenge', () => {
  it('types the challenge: stale in any case, qop list, optional fields', () => {
    const [c] = parseChallenges('Digest realm="Wowza", nonce="n", opaque="o", stale=TRUE, qop="auth,auth-int", domain="/", charset=UTF-8, userhash=false');
    expect(toDigestChallenge(c!)).toEqual({
      realm: 'Wowza',
      nonce: 'n',
      opaque: 'o',
      algorithm: 'MD5',
      qop: ['auth', 'auth-int'],
      stale: true,
      domain: '/',
      charset: 'UTF-8',
      userhash: false,
    });
    expect(toDigestChallenge(parseChallenges('Digest realm="r", nonce="n", stale=true')[0]!)!.stale).toBe(true);
    expect(toDigestChallenge(parseChallenges('Digest realm="r", nonce="n", stale=false')[0]!)!.stale).toBe(false);
    expect(toDigestChallenge(parseChallenges('Digest realm="r", nonce="n"')[0]!)).toMatchObject({ algorithm: 'MD5', qop: [], stale: false });
  });

  it('rejects what it cannot answer', () => {
    const one = (h: string) => toDigestChallenge(parseChallenges(h)[0]!);
    expect(one('Basic realm="r"')).toBeUndefined();
    expect(one('Digest realm="r", nonce="n", algorithm=SHA-512-256')).toBeUndefined();
    expect(one('Digest realm="r"')).toBeUndefined();
    expect(one('Digest realm="r", nonce="n", qop="auth-conf"')).toBeUndefined();
    expect(one('Digest realm="r", nonce="n", algorithm=sha-256-SESS')!.algorithm).toBe('SHA-256-sess');
  });

  it('prefers SHA-256 over MD5, whatever the order', () => {
    expect(pickDigestChallenge(['Digest realm="W", nonce="m", algorithm=MD5', 'Digest realm="W", nonce="s", algorithm=SHA-256'])!.nonce).toBe('s');
    expect(pickDigestChallenge('Digest realm="W", nonce="s", algorithm=SHA-256, Digest realm="W", nonce="m", algorithm=MD5')!.nonce).toBe('s');
    expect(pickDigestChallenge('Basic realm="x", Digest realm="W", nonce="m"')!.nonce).toBe('m');
    expect(pickDigestChallenge('Digest realm="W", nonce="u", algorithm=SHA-512-256, Basic realm="x"')).toBeUndefined();
  });
});

describe('authorizationHeader / parseAuthorization', () => {
  const challenge: DigestChallenge = { realm: RFC.realm, nonce: RFC.nonce, opaque, algorithm: 'SHA-256', qop: ['auth', 'auth-int'], stale: false };

  it('produces the RFC 7616 example header', () => {
    const h = authorizationHeader(challenge, { username: RFC.username, password: RFC.password, method: 'GET', uri: RFC.uri, nc: 1, cnonce: RFC.cnonce });
    expect(h).toBe(
      'Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=SHA-256, ' +
        'nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", ' +
        'qop=auth, response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"',
    );
  });

  it('round-trips through the server-side parser, which can verify it', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.string(),
        fc.constantFrom<DigestAlgorithm>('MD5', 'MD5-sess', 'SHA-256', 'SHA-256-sess'),
        fc.integer({ min: 1, max: 0xffffffff }),
        (username, password, algorithm, nc) => {
          const c: DigestChallenge = { realm: 'Wowza', nonce: 'abc', algorithm, qop: ['auth'], stale: false, opaque: 'o"q' };
          const cnonce = newCnonce();
          const h = authorizationHeader(c, { username, password, method: 'GET', uri: '/v2/a?b=c,d', nc, cnonce });
          const p = parseAuthorization(h)!;
          expect(p.username).toBe(username);
          expect(p).toMatchObject({ realm: 'Wowza', nonce: 'abc', uri: '/v2/a?b=c,d', qop: 'auth', nc: formatNonceCount(nc), cnonce, opaque: 'o"q', algorithm });
          expect(p.response).toBe(digestResponse({ algorithm, username, password, realm: 'Wowza', nonce: 'abc', cnonce, nc: p.nc, qop: 'auth', method: 'GET', uri: p.uri! }));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('sends a non-ASCII username as username* and hashes it when the server asks for userhash', () => {
    const c: DigestChallenge = { realm: 'api@example.org', nonce: 'n', algorithm: 'SHA-256', qop: ['auth'], stale: false };
    const h = authorizationHeader(c, { username: 'Jäsøn Doe', password: 'p', method: 'GET', uri: '/', nc: 1, cnonce: 'c' });
    expect(h).toContain("username*=UTF-8''J%C3%A4s%C3%B8n%20Doe");
    expect(parseAuthorization(h)!.username).toBe('Jäsøn Doe');
    const hashed = authorizationHeader({ ...c, userhash: true }, { username: 'Mufasa', password: 'p', method: 'GET', uri: '/', nc: 1, cnonce: 'c' });
    expect(parseAuthorization(hashed)).toMatchObject({ username: sha256('Mufasa:api@example.org'), userhash: 'true' });
  });

  it('omits nc, cnonce and qop for an RFC 2069 server', () => {
    const h = authorizationHeader({ realm: 'r', nonce: 'n', algorithm: 'MD5', qop: [], stale: false }, { username: 'u', password: 'p', method: 'GET', uri: '/', nc: 1, cnonce: 'c' });
    const p = parseAuthorization(h)!;
    expect(p.qop).toBeUndefined();
    expect(p.nc).toBeUndefined();
    expect(p.response).toBe(digestResponse({ algorithm: 'MD5', username: 'u', password: 'p', realm: 'r', nonce: 'n', method: 'GET', uri: '/' }));
  });

  it('refuses a uri with a line break instead of writing it into a header', () => {
    expect(() => authorizationHeader(challenge, { username: 'u', password: 'p', method: 'GET', uri: '/a\r\nX: y', nc: 1, cnonce: 'c' })).toThrow(/control character/);
  });

  it('rejects non-Digest or unreadable Authorization headers', () => {
    expect(parseAuthorization('Basic YWRtaW46YWRtaW4=')).toBeUndefined();
    expect(parseAuthorization('')).toBeUndefined();
    expect(parseAuthorization("Digest username*=latin1''%ZZ")).toBeUndefined();
  });

  it('makes a fresh random cnonce each time', () => {
    const a = newCnonce();
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(newCnonce()).not.toBe(a);
  });
});
