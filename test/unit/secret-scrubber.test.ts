import { describe, expect, it } from 'vitest';
import { SecretScrubber } from '../../src/base/secret-scrubber.js';
import { secretForms, secretLeaks } from '../helpers/secret-forms.js';

/** 7 characters, one that every encoder escapes: the issue 47 attack showed 6 of them through the old scrub. */
const PASSWORD = 'Pa5s!wd';
const USER = 'admin';

function scrubber(...secrets: Array<[string, string?]>): SecretScrubber {
  const s = new SecretScrubber();
  for (const [value, user] of secrets) s.add(value, user);
  return s;
}

describe('SecretScrubber', () => {
  it('blanks each form of a secret: literal, URL-encoded, JSON-escaped, base64 (alone, user:secret, at every offset)', () => {
    const s = scrubber([PASSWORD, USER]);
    for (const [name, form] of Object.entries(secretForms(PASSWORD, USER))) {
      const text = `the server said <${form}> to us`;
      expect(s.scrub(text), name).toBe('the server said <[REDACTED]> to us');
    }
  });

  it('blanks mixed forms and either case of hex, HTML character references and + for a space', () => {
    const s = scrubber(['my pass/wörd"\\'], [PASSWORD]);
    const texts = [
      'Pa5s%21wd', // encodeURIComponent
      'Pa5s%21%77d', // some bytes encoded, some not
      'Pa5s\\u0021wd',
      '\\u0050a5s\\U0021wd'.replace('\\U', '\\u'),
      '%50%61%35%73%21%77%64',
      'Pa5s&#33;wd',
      'Pa5s&#x21;wd',
      'Pa5s&#X0021;wd',
      'my+pass%2Fw%C3%B6rd%22%5C',
      'my pass\\/w\\u00F6rd\\"\\\\',
      'my%20pass/w%c3%b6rd&quot;\\',
    ];
    for (const t of texts) expect(s.scrub(`(${t})`), t).toBe('([REDACTED])');
  });

  it('finds the base64 of the secret inside any base64 text, and the URL-safe alphabet', () => {
    const s = scrubber(['s3cr3t>?>?']);
    for (const before of ['', 'x', 'xy', 'a longer prefix:', '{"password":"']) {
      const b64 = Buffer.from(`${before}s3cr3t>?>?"}`).toString('base64');
      for (const text of [b64, b64.replace(/\+/g, '-').replace(/\//g, '_')]) {
        const out = s.scrub(`token ${text} end`);
        expect(out).toContain('[REDACTED]');
        expect(secretLeaks(before, out, 's3cr3t>?>?')).toEqual([]);
      }
    }
  });

  it('leaves text without a secret as it is, and blanks nothing before a secret is registered', () => {
    const s = new SecretScrubber();
    const text = 'HTTP 500 %21 \\u0021 &amp; Basic or Digest Pa5s!wd';
    expect(s.scrub(text)).toBe(text);
    s.add(PASSWORD);
    expect(s.scrub('HTTP 500 %21 \\u0021 &amp; Basic or Digest')).toBe('HTTP 500 %21 \\u0021 &amp; Basic or Digest');
    s.add('');
    s.add(undefined);
    expect(s.scrub('nothing here')).toBe('nothing here');
  });

  it('blanks the longer of two secrets that start alike whole, every occurrence, and overlapping forms once', () => {
    const s = scrubber(['abcdef1'], ['abcdef123456', USER]);
    expect(s.scrub('abcdef123456 abcdef1 abcdef1%32%33456')).toBe('[REDACTED] [REDACTED] [REDACTED]');
    const basic = Buffer.from(`${USER}:abcdef123456`).toString('base64');
    expect(s.scrub(`Authorization: ${basic}.`)).toBe('Authorization: [REDACTED].');
  });

  it('scrubReceived also blanks credentials after an auth scheme and URLs\' user info; scrub leaves the exporter\'s own words', () => {
    const s = scrubber([PASSWORD, USER]);
    const text = 'asks for Basic or Digest; you sent Authorization: Digest username="admin", response="abc", nonce="n" from rtmp://cam:campass@10.0.0.1/live';
    expect(s.scrub(text)).toBe(text);
    const received = s.scrubReceived(text);
    expect(received).toContain('Digest [REDACTED]');
    expect(received).not.toContain('abc');
    expect(received).toContain('rtmp://10.0.0.1/live');
    expect(s.scrubReceived('Bearer eyJ.abc.def and Pa5s%21wd')).toBe('Bearer [REDACTED] and [REDACTED]');
  });

  it('with cut, blanks a secret whose start ends the text', () => {
    const s = scrubber([PASSWORD, USER], ['another-secret-token']);
    expect(s.scrubReceived('body excerpt ... Pa5s!w', { cut: true })).toBe('body excerpt ... [REDACTED]');
    expect(s.scrubReceived('body excerpt ... Pa5s%2', { cut: true })).toBe('body excerpt ... [REDACTED]');
    expect(s.scrubReceived('body excerpt ... another-sec', { cut: true })).toBe('body excerpt ... [REDACTED]');
    expect(s.scrubReceived('body excerpt ... Pa5s!w')).toBe('body excerpt ... Pa5s!w');
    // Two characters say too little to blank them.
    expect(s.scrubReceived('body excerpt Pa', { cut: true })).toBe('body excerpt Pa');
  });

  it('blanks a long token (a JWT) and characters outside the BMP in every form', () => {
    const jwt = `eyJhbGciOiJIUzI1NiJ9.${'eyJzdWIiOiJ4In0'.repeat(40)}.c2lnbmF0dXJl`;
    const emoji = 'key🔑secret';
    const s = scrubber([jwt], [emoji]);
    for (const secret of [jwt, emoji]) {
      for (const [name, form] of Object.entries(secretForms(secret))) {
        const out = s.scrub(`x ${form} y`);
        expect(secretLeaks(name, out, secret)).toEqual([]);
      }
    }
  });

  it('picks up secrets registered after it was first used', () => {
    const s = scrubber([PASSWORD]);
    expect(s.scrub('later-secret Pa5s!wd')).toBe('later-secret [REDACTED]');
    s.add('later-secret');
    expect(s.scrub('later-secret Pa5s!wd')).toBe('[REDACTED] [REDACTED]');
  });
});
