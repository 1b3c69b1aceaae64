import { describe, expect, it } from 'vitest';
import { WowzaAuthError, WowzaHttpError, WowzaNetworkError, WowzaUnparsableError } from '../../../src/wowza/errors.js';
import { adviseFailure, FIX, foreignAnswer } from '../../../src/wowza/failure-advice.js';

const site = { server: 'wse', endpoint: '/v2/machine/monitoring/current', url: 'https://wse:8087/v2/machine/monitoring/current' };

describe('one explanation per failure kind', () => {
  it('https on a plain-HTTP port: use an http:// URL, whatever code the TLS client met', () => {
    for (const code of ['ECONNRESET', 'EPROTO', 'ERR_SSL_WRONG_VERSION_NUMBER']) {
      expect(adviseFailure(new WowzaNetworkError(site, code, 'x'), { url: 'https://wse:8087' })?.fix, code).toBe(FIX.wrongScheme);
    }
    // Over http, a reset is not a scheme problem.
    expect(adviseFailure(new WowzaNetworkError(site, 'ECONNRESET', 'x'), { url: 'http://wse:8087' })?.fix).not.toBe(FIX.wrongScheme);
  });

  it('a 401 names what is missing: the username, the password (unset or empty), or else the credentials are wrong', () => {
    const auth = new WowzaAuthError(site, 'admin', 'rejected');
    expect(adviseFailure(auth, { url: 'http://wse:8087' })?.fix).toBe(FIX.noUsername);
    expect(adviseFailure(auth, { url: 'http://wse:8087', username: 'admin' })?.cause).toBe('no password configured for user "admin"');
    expect(adviseFailure(auth, { url: 'http://wse:8087', username: 'admin', password: '' })?.fix).toBe(FIX.noPassword);
    // The authenticator's own words (auth.ts): a rejected password, a scheme the configuration refuses, anything else.
    const rejected = new WowzaAuthError(site, 'admin', 'wrong username or password (Basic rejected)');
    expect(adviseFailure(rejected, { url: 'http://wse:8087', username: 'admin', password: 'p' })?.fix).toBe(FIX.wrongCredentials);
    const scheme = new WowzaAuthError(site, 'admin', 'the server asks for Digest authentication but auth is set to basic (use digest or auto)');
    expect(adviseFailure(scheme, { url: 'http://wse:8087', username: 'admin', password: 'p' })).toEqual({ cause: scheme.message, fix: FIX.authScheme });
    const other = new WowzaAuthError(site, 'admin', 'the server kept rejecting fresh challenges');
    expect(adviseFailure(other, { url: 'http://wse:8087', username: 'admin', password: 'p' })).toEqual({ cause: other.message, fix: FIX.authOther });
  });

  it('http:// on a TLS port: a reset or bytes that are no HTTP answer suggest https://', () => {
    for (const code of ['ECONNRESET', 'UND_ERR_SOCKET', 'HPE_INVALID_CONSTANT']) {
      expect(adviseFailure(new WowzaNetworkError(site, code, 'x'), { url: 'http://wse:8087' })?.fix, code).toBe(FIX.maybeTls);
    }
  });

  it('XML from a server whose Accept header was dropped on the way is Wowza, not a foreign answer', () => {
    const xml = new WowzaUnparsableError(site, 'the server answered XML/HTML although JSON was requested (Accept: application/json); WSE answers XML when the Accept header is dropped on the way: a proxy between here and the server may drop it (connect to the REST port directly, or make the proxy pass Accept)');
    expect(foreignAnswer(xml)).toBe(false);
    expect(adviseFailure(xml, { url: 'http://wse:8087' })?.fix).toBe(FIX.acceptDropped);
  });

  it("Wowza's own 404 envelope is not a foreign answer; a web page, the Manager and text are", () => {
    expect(foreignAnswer(new WowzaHttpError(site, 404, 'Application (x) not found.', 'wowza'))).toBe(false);
    expect(adviseFailure(new WowzaHttpError(site, 404, 'Application (x) not found.', 'wowza'), { url: 'http://wse:8087' })).toBeUndefined();
    expect(adviseFailure(new WowzaHttpError(site, 404, 'Not Found', 'html'), { url: 'http://wse:8087' })?.cause).toContain('not the WSE REST API');
    expect(adviseFailure(new WowzaHttpError(site, 200, undefined, 'manager'), { url: 'http://wse:8088' })?.cause).toMatch(/Manager.*not the WSE REST API/);
    expect(foreignAnswer(new WowzaUnparsableError(site, 'the server answered XML/HTML although JSON was requested'))).toBe(true);
  });

  it('connection refused points at the REST port', () => {
    expect(adviseFailure(new WowzaNetworkError(site, 'ECONNREFUSED', 'x'), { url: 'http://wse:8088' })?.fix).toBe(FIX.refused);
  });
});
