import { describe, expect, it } from 'vitest';
import { WowzaAuthError, WowzaHttpError, WowzaNetworkError, WowzaUnparsableError } from '../../src/wowza/errors.js';
import { adviseFailure, FIX, foreignAnswer } from '../../src/wowza/failure-advice.js';

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
    expect(adviseFailure(auth, { url: 'http://wse:8087', username: 'admin', password: 'p' })?.fix).toBe(FIX.wrongCredentials);
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
