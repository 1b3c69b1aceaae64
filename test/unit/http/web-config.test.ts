import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import bcrypt from 'bcryptjs';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../../src/config/errors.js';
import { BasicAuthVerifier, parseBasicAuthorization } from '../../../src/http/basic-auth.js';
import { basicAuthGuard, createServerFactory, loadWebConfig, type WebConfig } from '../../../src/http/web-config.js';

const PASSWORD = 's3cret-Pass!';
let dir: string;
let hash: string;
const pem = (name: string) => readFileSync(join(dir, name));

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

/** An EC P-256 key and certificate; signed by the test CA when `signed`, else self-signed. */
function makeCert(name: string, subject: string, ext: string, signed = false): void {
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`];
  if (!signed) {
    openssl('req', '-x509', ...ecKey, '-out', `${name}.crt`, '-days', '2', '-subj', subject, '-addext', ext);
    return;
  }
  writeFileSync(join(dir, `${name}.ext`), `${ext}\nextendedKeyUsage=clientAuth\n`);
  openssl('req', ...ecKey, '-out', `${name}.csr`, '-subj', subject);
  openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`);
}

function writeConfig(name: string, yaml: string): string {
  const path = join(dir, name);
  writeFileSync(path, yaml);
  return path;
}

const open: Array<{ close(): Promise<void> }> = [];

/** A small server from the factory and the guard alone (independent of the exporter's server.ts). */
async function serve(web: WebConfig, warn?: (msg: string, meta: object) => void): Promise<{ server: Server; url: string }> {
  const guard = basicAuthGuard(web);
  const server = createServerFactory(web, warn)({ requestTimeout: 5000, headersTimeout: 5000 }, (req, res) => {
    void (async () => {
      if (guard && !(await guard(req, res))) return;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`ok ${req.url}\n`);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
  const { port } = server.address() as AddressInfo;
  return { server, url: `${web.tls ? 'https' : 'http'}://127.0.0.1:${port}` };
}

function agent(connect: { ca: Buffer; cert?: Buffer; key?: Buffer }): Agent {
  const a = new Agent({ connect });
  open.push({ close: () => a.close() });
  return a;
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

async function loadError(path: string): Promise<Error> {
  const err = await loadWebConfig(path).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  if (!err) throw new Error('expected loadWebConfig to fail');
  expect(err).toBeInstanceOf(ConfigError);
  return err;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'web-config-test-'));
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=test-ca');
  makeCert('server', '/CN=localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost');
  makeCert('rotated', '/CN=rotated', 'subjectAltName=IP:127.0.0.1');
  makeCert('scraper', '/CN=scraper', 'subjectAltName=DNS:prometheus.example', true);
  hash = bcrypt.hashSync(PASSWORD, 4);
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
  vi.restoreAllMocks();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('HTTPS with basic auth', () => {
  it('answers 401 without or with wrong credentials and 200 with the right ones, with the configured headers', async () => {
    const path = writeConfig(
      'web.yml',
      `tls_server_config:
  cert_file: server.crt
  key_file: server.key
http_server_config:
  headers:
    Strict-Transport-Security: max-age=31536000
    X-Content-Type-Options: nosniff
basic_auth_users:
  prometheus: ${hash}
`,
    );
    const web = await loadWebConfig(path);
    const { url } = await serve(web);
    const dispatcher = agent({ ca: pem('server.crt') });

    const anonymous = await request(`${url}/metrics`, { dispatcher });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe('Basic realm="wowza-exporter"');
    expect(anonymous.headers['strict-transport-security']).toBe('max-age=31536000');
    await anonymous.body.text();

    const wrong = await request(`${url}/metrics`, { dispatcher, headers: { authorization: basic('prometheus', 'nope') } });
    expect(wrong.statusCode).toBe(401);
    await wrong.body.text();

    const unknownUser = await request(`${url}/metrics`, { dispatcher, headers: { authorization: basic('admin', PASSWORD) } });
    expect(unknownUser.statusCode).toBe(401);
    await unknownUser.body.text();

    const ok = await request(`${url}/metrics`, { dispatcher, headers: { authorization: basic('prometheus', PASSWORD) } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['x-content-type-options']).toBe('nosniff');
    expect(await ok.body.text()).toBe('ok /metrics\n');

    // Every path is protected, as exporter-toolkit does.
    const healthy = await request(`${url}/-/healthy`, { dispatcher });
    expect(healthy.statusCode).toBe(401);
    await healthy.body.text();
  });

  it('accepts htpasswd $2y$ hashes', async () => {
    const path = writeConfig('web-2y.yml', `basic_auth_users:\n  prometheus: "${hash.replace(/^\$2[ab]\$/, '$2y$')}"\n`);
    const web = await loadWebConfig(path);
    const { url } = await serve(web);
    const res = await request(url, { headers: { authorization: basic('prometheus', PASSWORD) } });
    expect(res.statusCode).toBe(200);
    await res.body.text();
  });

  it('serves plain HTTP without tls_server_config and warns that basic auth then travels in clear text', async () => {
    const warn = vi.fn();
    const path = writeConfig('web-plain.yml', `basic_auth_users:\n  prometheus: ${hash}\n`);
    const web = await loadWebConfig(path, warn);
    expect(web.tls).toBeUndefined();
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('clear text'), expect.anything());
    const { url } = await serve(web);
    const res = await request(url);
    expect(res.statusCode).toBe(401);
    await res.body.text();
  });

  it('leaves every request through when no users are configured', async () => {
    const web = await loadWebConfig(writeConfig('web-empty.yml', '# nothing configured\n'));
    expect(basicAuthGuard(web)).toBeUndefined();
    const { url } = await serve(web);
    const res = await request(url);
    expect(res.statusCode).toBe(200);
    await res.body.text();
  });

  it('answers 429 beyond the rate limit burst', async () => {
    const web = await loadWebConfig(writeConfig('web-rate.yml', 'rate_limit:\n  interval: 1h\n  burst: 2\n'));
    const { url } = await serve(web);
    const codes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(url);
      codes.push(res.statusCode);
      await res.body.text();
    }
    expect(codes).toEqual([200, 200, 429]);
  });
});

describe('BasicAuthVerifier', () => {
  it('runs bcrypt once for repeated correct credentials, and again for a wrong password', async () => {
    const compare = vi.spyOn(bcrypt, 'compare');
    const verifier = new BasicAuthVerifier(new Map([['prometheus', hash]]));
    expect(await verifier.verify('prometheus', PASSWORD)).toBe(true);
    expect(await verifier.verify('prometheus', PASSWORD)).toBe(true);
    expect(await verifier.verify('prometheus', PASSWORD)).toBe(true);
    expect(compare).toHaveBeenCalledTimes(1);
    expect(await verifier.verify('prometheus', `${PASSWORD}x`)).toBe(false);
    expect(compare).toHaveBeenCalledTimes(2);
  });

  it('shares one bcrypt run between concurrent requests with the same credentials', async () => {
    const compare = vi.spyOn(bcrypt, 'compare');
    const verifier = new BasicAuthVerifier(new Map([['prometheus', hash]]));
    const results = await Promise.all(Array.from({ length: 5 }, () => verifier.verify('prometheus', PASSWORD)));
    expect(results).toEqual([true, true, true, true, true]);
    expect(compare).toHaveBeenCalledTimes(1);
  });

  it('still pays a bcrypt comparison for unknown users, and rejects them', async () => {
    const compare = vi.spyOn(bcrypt, 'compare');
    const verifier = new BasicAuthVerifier(new Map([['prometheus', hash]]));
    // Even the password of another user does not let an unknown name in.
    expect(await verifier.verify('admin', PASSWORD)).toBe(false);
    expect(compare).toHaveBeenCalledTimes(1);
  });

  it('parses Basic authorization headers and refuses malformed ones', () => {
    expect(parseBasicAuthorization(basic('a', 'b:c'))).toEqual({ user: 'a', password: 'b:c' });
    expect(parseBasicAuthorization(`basic ${Buffer.from('ü:ö').toString('base64')}`)).toEqual({ user: 'ü', password: 'ö' });
    expect(parseBasicAuthorization(undefined)).toBeUndefined();
    expect(parseBasicAuthorization('Bearer abc')).toBeUndefined();
    expect(parseBasicAuthorization('Basic !!!')).toBeUndefined();
    expect(parseBasicAuthorization(`Basic ${Buffer.from('no-colon').toString('base64')}`)).toBeUndefined();
  });
});

describe('client certificates', () => {
  const mtls = (extra = '') =>
    writeConfig(
      'web-mtls.yml',
      `tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
${extra}`,
    );

  it('requires a certificate signed by client_ca_file with RequireAndVerifyClientCert', async () => {
    const { url } = await serve(await loadWebConfig(mtls()));
    await expect(request(url, { dispatcher: agent({ ca: pem('server.crt') }) }).then((r) => r.body.text())).rejects.toThrow();
    // A certificate the client CA did not sign is refused too.
    await expect(request(url, { dispatcher: agent({ ca: pem('server.crt'), cert: pem('rotated.crt'), key: pem('rotated.key') }) }).then((r) => r.body.text())).rejects.toThrow();
    const ok = await request(url, { dispatcher: agent({ ca: pem('server.crt'), cert: pem('scraper.crt'), key: pem('scraper.key') }) });
    expect(ok.statusCode).toBe(200);
    await ok.body.text();
  });

  it('checks client_allowed_sans', async () => {
    const client = { ca: pem('server.crt'), cert: pem('scraper.crt'), key: pem('scraper.key') };
    const allowed = await serve(await loadWebConfig(mtls('  client_allowed_sans: [other.example, prometheus.example]\n')));
    const ok = await request(allowed.url, { dispatcher: agent(client) });
    expect(ok.statusCode).toBe(200);
    await ok.body.text();

    const refused = await serve(await loadWebConfig(mtls('  client_allowed_sans: [other.example]\n')));
    await expect(request(refused.url, { dispatcher: agent(client) }).then((r) => r.body.text())).rejects.toThrow();
  });
});

describe('certificate reload', () => {
  it('serves a renewed certificate to new connections without a restart', async () => {
    copyFileSync(join(dir, 'server.crt'), join(dir, 'live.crt'));
    copyFileSync(join(dir, 'server.key'), join(dir, 'live.key'));
    const warn = vi.fn();
    const web = await loadWebConfig(writeConfig('web-live.yml', 'tls_server_config:\n  cert_file: live.crt\n  key_file: live.key\n'), warn);
    const { server } = await serve(web, warn);
    const port = (server.address() as AddressInfo).port;
    const peerCn = () =>
      new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
          const cn = new X509Certificate(socket.getPeerX509Certificate()!.raw).subject;
          socket.end();
          resolve(cn);
        });
        socket.on('error', reject);
      });
    expect(await peerCn()).toBe('CN=localhost');

    // Renewal as cert-manager or a secret mount does it: new files swapped in atomically.
    copyFileSync(join(dir, 'rotated.crt'), join(dir, 'live.crt.tmp'));
    copyFileSync(join(dir, 'rotated.key'), join(dir, 'live.key.tmp'));
    renameSync(join(dir, 'live.key.tmp'), join(dir, 'live.key'));
    renameSync(join(dir, 'live.crt.tmp'), join(dir, 'live.crt'));
    expect(await peerCn()).toBe('CN=rotated');

    // A broken renewal keeps the last good certificate.
    writeFileSync(join(dir, 'live.crt.tmp'), 'garbage');
    renameSync(join(dir, 'live.crt.tmp'), join(dir, 'live.crt'));
    expect(await peerCn()).toBe('CN=rotated');
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('cannot reload'), expect.objectContaining({ err: expect.stringContaining('live.crt') }));
  });
});

describe('docs/web-config.md', () => {
  it('has an example that loads as documented', async () => {
    const doc = readFileSync(new URL('../../../docs/web-config.md', import.meta.url), 'utf8');
    const example = /```yaml\n([\s\S]*?)```/.exec(doc)![1]!;
    copyFileSync(join(dir, 'server.crt'), join(dir, 'exporter.crt'));
    copyFileSync(join(dir, 'server.key'), join(dir, 'exporter.key'));
    const web = await loadWebConfig(writeConfig('documented.yml', example));
    expect(web.tls?.minVersion).toBe('TLSv1.2');
    expect(web.headers).toEqual({ 'Strict-Transport-Security': 'max-age=31536000', 'X-Content-Type-Options': 'nosniff' });
    expect([...web.basicAuthUsers.keys()]).toEqual(['prometheus']);
  });
});

describe('config errors', () => {
  it('names an unknown key with its path and a suggestion', async () => {
    const err = await loadError(writeConfig('bad-key.yml', 'tls_server_config:\n  cert_fil: server.crt\n  key_file: server.key\n'));
    expect(err.message).toContain('tls_server_config.cert_fil: unknown key (did you mean "cert_file"?)');
  });

  it('names a missing cert file', async () => {
    const err = await loadError(writeConfig('no-cert.yml', 'tls_server_config:\n  cert_file: missing.crt\n  key_file: server.key\n'));
    expect(err.message).toContain(`tls_server_config.cert_file: cannot read ${join(dir, 'missing.crt')} (ENOENT)`);
  });

  it('names the missing web config file', async () => {
    const err = await loadError(join(dir, 'absent.yml'));
    expect(err.message).toBe(`--web.config.file: cannot read ${join(dir, 'absent.yml')} (ENOENT)`);
  });

  it('names a key that does not belong to the certificate', async () => {
    const err = await loadError(writeConfig('mismatch.yml', 'tls_server_config:\n  cert_file: server.crt\n  key_file: rotated.key\n'));
    expect(err.message).toContain(`tls_server_config.key_file ${join(dir, 'rotated.key')}: this key does not belong to the certificate`);
  });

  it('names a file that is not a certificate', async () => {
    const err = await loadError(writeConfig('not-pem.yml', 'tls_server_config:\n  cert_file: ca.key\n  key_file: server.key\n'));
    expect(err.message).toContain(`tls_server_config.cert_file ${join(dir, 'ca.key')}: not a PEM certificate`);
  });

  it('never repeats a password pasted instead of a hash, nor secrets from a broken YAML line', async () => {
    const plain = await loadError(writeConfig('plain-pass.yml', `basic_auth_users:\n  prometheus: "${PASSWORD}"\n`));
    expect(plain.message).toContain('basic_auth_users.prometheus: not a bcrypt hash');
    expect(plain.message).not.toContain(PASSWORD);

    const broken = await loadError(writeConfig('broken.yml', `tls_server_config:\n  key: "${PASSWORD}\n  cert_file: [\n`));
    expect(broken.message).toContain('not valid YAML');
    expect(broken.message).not.toContain(PASSWORD);
  });

  it('refuses headers exporter-toolkit does not allow, and bad values for enumerated ones', async () => {
    const unknown = await loadError(writeConfig('hdr1.yml', 'http_server_config:\n  headers:\n    Set-Cookie: a=b\n'));
    expect(unknown.message).toContain('http_server_config.headers.Set-Cookie: this header can not be configured');
    const value = await loadError(writeConfig('hdr2.yml', 'http_server_config:\n  headers:\n    X-Frame-Options: allow\n'));
    expect(value.message).toContain('http_server_config.headers.X-Frame-Options: must be one of deny, sameorigin');
  });

  it('checks the TLS policy: client CA needs an auth type, verification needs a CA, versions in order, known ciphers', async () => {
    const tls = (extra: string) => `tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n${extra}`;
    expect((await loadError(writeConfig('p1.yml', tls('  client_ca_file: ca.crt\n')))).message).toContain('tls_server_config.client_auth_type');
    expect((await loadError(writeConfig('p2.yml', tls('  client_auth_type: RequireAndVerifyClientCert\n')))).message).toContain('tls_server_config.client_ca_file: required');
    expect((await loadError(writeConfig('p3.yml', tls('  client_auth_type: Sometimes\n')))).message).toContain('tls_server_config.client_auth_type: Invalid option');
    expect((await loadError(writeConfig('p4.yml', tls('  min_version: TLS13\n  max_version: TLS12\n')))).message).toContain('min_version: TLS13 is above max_version TLS12');
    expect((await loadError(writeConfig('p5.yml', tls('  cipher_suites: [TLS_FAKE_SUITE]\n')))).message).toContain('cipher_suites[0]: unknown cipher suite "TLS_FAKE_SUITE"');
    expect((await loadError(writeConfig('p6.yml', 'tls_server_config:\n  key_file: server.key\n'))).message).toContain('tls_server_config.cert_file: missing');
  });

  it('maps Go cipher suite names and versions onto the server, warning about TLS 1.3 suites', async () => {
    const warn = vi.fn();
    const web = await loadWebConfig(
      writeConfig(
        'ciphers.yml',
        'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]\n  curve_preferences: [CurveP256]\n',
      ),
      warn,
    );
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('TLS 1.3 cipher suites'), expect.anything());
    const { server } = await serve(web);
    const port = (server.address() as AddressInfo).port;
    const negotiated = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
        resolve(`${socket.getProtocol()} ${socket.getCipher().name}`);
        socket.end();
      });
      socket.on('error', reject);
    });
    expect(negotiated).toBe('TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256');
  });
});
