import { describe, expect, it } from 'vitest';
import { digestResponse, parseAuthorization, parseDigestAlgorithm } from '../src/digest.js';

// RFC 7616 section 3.9.1: the example request, answered with MD5 and with SHA-256.
const EXAMPLE = {
  username: 'Mufasa',
  password: 'Circle of Life',
  realm: 'http-auth@example.org',
  nonce: '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v',
  cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ',
  nc: '00000001',
  method: 'GET',
  uri: '/dir/index.html',
};

describe('digestResponse', () => {
  it("gives the RFC 7616 example's responses", () => {
    expect(digestResponse({ ...EXAMPLE, algorithm: 'MD5' })).toBe('8ca523f5e9506fed4657c9700eebdbec');
    expect(digestResponse({ ...EXAMPLE, algorithm: 'SHA-256' })).toBe('753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1');
  });
});

describe('parseDigestAlgorithm', () => {
  it('knows MD5 and SHA-256 in any case, and nothing else', () => {
    expect(parseDigestAlgorithm('md5')).toBe('MD5');
    expect(parseDigestAlgorithm(' sha-256 ')).toBe('SHA-256');
    expect(parseDigestAlgorithm('MD5-sess')).toBeUndefined();
    expect(parseDigestAlgorithm('SHA-512-256')).toBeUndefined();
  });
});

describe('parseAuthorization', () => {
  it("reads the RFC 7616 example's Authorization header", () => {
    const header = `Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=MD5,
      nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ",
      qop=auth, response="8ca523f5e9506fed4657c9700eebdbec", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"`.replace(/\n\s*/g, ' ');
    expect(parseAuthorization(header)).toEqual({
      username: 'Mufasa',
      realm: 'http-auth@example.org',
      uri: '/dir/index.html',
      algorithm: 'MD5',
      nonce: EXAMPLE.nonce,
      nc: '00000001',
      cnonce: EXAMPLE.cnonce,
      qop: 'auth',
      response: '8ca523f5e9506fed4657c9700eebdbec',
      opaque: 'FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS',
    });
  });

  it('lowercases names, unescapes quoted values, keeps the first of a repeated name', () => {
    expect(parseAuthorization('digest USERNAME="a\\"b", Realm=Wowza, realm="other", uri="/x?a=1,2"')).toEqual({ username: 'a"b', realm: 'Wowza', uri: '/x?a=1,2' });
  });

  it('decodes username* (RFC 8187) when there is no plain username', () => {
    expect(parseAuthorization(`Digest username*=UTF-8''J%C3%A4s%C3%B8n%20Doe, realm="r"`)?.username).toBe('Jäsøn Doe');
    expect(parseAuthorization(`Digest username="plain", username*=UTF-8''other`)?.username).toBe('plain');
    expect(parseAuthorization(`Digest username*=UTF-8''%E0%A4%A`)).toBeUndefined();
    expect(parseAuthorization(`Digest username*=latin1-without-quotes`)).toBeUndefined();
  });

  it('is undefined for other schemes', () => {
    expect(parseAuthorization('Basic YWRtaW46YWRtaW4=')).toBeUndefined();
    expect(parseAuthorization('Digestive username="a"')).toBeUndefined();
    expect(parseAuthorization('')).toBeUndefined();
  });
});
