import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { isIP } from 'node:net';
import { dirname, resolve } from 'node:path';
import { createSecureContext, type SecureContextOptions, type SecureVersion, type TLSSocket } from 'node:tls';
import { parseYaml } from '../config/yaml.js';
import { z } from 'zod';
import { parseDuration } from '../config/duration.js';
import { ConfigError, describeIssues, formatPath } from '../config/errors.js';
import { readRegularFile } from '../config/read-file.js';
import type { Warn } from '../config/load.js';
import { bcryptCost, createBasicAuthGuard, type RequestGuard } from './basic-auth.js';

/*
 * The Prometheus exporter-toolkit web config (`--web.config.file`), the same file node_exporter and
 * blackbox_exporter read: https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md
 */

const CLIENT_AUTH_TYPES = ['NoClientCert', 'RequestClientCert', 'RequireAnyClientCert', 'RequireClientCert', 'VerifyClientCertIfGiven', 'RequireAndVerifyClientCert'] as const;
export type ClientAuthType = Exclude<(typeof CLIENT_AUTH_TYPES)[number], 'RequireClientCert'>;

const TLS_VERSIONS = { TLS10: 'TLSv1', TLS11: 'TLSv1.1', TLS12: 'TLSv1.2', TLS13: 'TLSv1.3' } as const satisfies Record<string, SecureVersion>;
type TlsVersionName = keyof typeof TLS_VERSIONS;

/** Go's configurable suites (crypto/tls CipherSuites(), up to TLS 1.2) by their IANA names -> OpenSSL names. */
const CIPHER_SUITES: Record<string, string> = {
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
};
/** Listed by Go, but TLS 1.3 suites are not configurable there either: accepted and ignored. */
const TLS13_SUITES = new Set(['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256']);

const CURVES = { CurveP256: 'P-256', CurveP384: 'P-384', CurveP521: 'P-521', X25519: 'X25519' } as const;

/** The headers exporter-toolkit lets a config add (it keeps the list closed on purpose), with their allowed values. */
const CONFIGURABLE_HEADERS: Record<string, readonly string[] | undefined> = {
  'Strict-Transport-Security': undefined,
  'X-Content-Type-Options': ['nosniff'],
  'X-Frame-Options': ['deny', 'sameorigin'],
  'X-XSS-Protection': undefined,
  'Content-Security-Policy': undefined,
};

const TlsServerSchema = z.strictObject({
  cert: z.string().optional(),
  key: z.string().optional(),
  client_ca: z.string().optional(),
  cert_file: z.string().optional(),
  key_file: z.string().optional(),
  client_auth_type: z.enum(CLIENT_AUTH_TYPES).optional(),
  client_ca_file: z.string().optional(),
  client_allowed_sans: z.array(z.string()).nullish(),
  min_version: z.enum(Object.keys(TLS_VERSIONS) as [TlsVersionName, ...TlsVersionName[]]).optional(),
  max_version: z.enum(Object.keys(TLS_VERSIONS) as [TlsVersionName, ...TlsVersionName[]]).optional(),
  cipher_suites: z.array(z.string()).nullish(),
  prefer_server_cipher_suites: z.boolean().optional(),
  curve_preferences: z.array(z.enum(Object.keys(CURVES) as [keyof typeof CURVES, ...Array<keyof typeof CURVES>])).nullish(),
});

const HttpServerSchema = z.strictObject({
  /** Accepted for compatibility: this server speaks HTTP/1.1 only. */
  http2: z.boolean().optional(),
  headers: z.record(z.string(), z.string()).nullish(),
});

const RateLimitSchema = z.strictObject({
  interval: z.union([z.string(), z.number()]).optional(),
  burst: z.number().int().min(0).optional(),
});

const WebConfigFileSchema = z.strictObject({
  tls_server_config: TlsServerSchema.nullish(),
  http_server_config: HttpServerSchema.nullish(),
  basic_auth_users: z.record(z.string(), z.string()).nullish(),
  rate_limit: RateLimitSchema.nullish(),
});

const KNOWN_KEYS: Record<string, string[]> = {
  '': Object.keys(WebConfigFileSchema.shape),
  tls_server_config: Object.keys(TlsServerSchema.shape),
  http_server_config: Object.keys(HttpServerSchema.shape),
  rate_limit: Object.keys(RateLimitSchema.shape),
};

/** Where the server's certificate, key and client CAs come from: a file (absolute path) or inline PEM. */
interface PemSource {
  field: string;
  file?: string;
  inline?: string;
}

export interface TlsSettings {
  cert: PemSource;
  key: PemSource;
  clientCa?: PemSource;
  clientAuth: ClientAuthType;
  /** Client certificates must carry one of these SANs (DNS, IP, e-mail or URI). */
  allowedSans?: readonly string[];
  minVersion: SecureVersion;
  maxVersion: SecureVersion;
  /** OpenSSL cipher list for TLS <= 1.2; Node's default when undefined. */
  ciphers?: string;
  ecdhCurve?: string;
  honorCipherOrder: boolean;
}

export interface WebConfig {
  /** The file it came from. */
  path: string;
  /** HTTPS when set, plain HTTP otherwise. */
  tls?: TlsSettings;
  /** Extra headers set on every response. */
  headers: Readonly<Record<string, string>>;
  /** User -> bcrypt hash; empty means no authentication. */
  basicAuthUsers: ReadonlyMap<string, string>;
  /** Token bucket over all requests: one token per interval, at most `burst` at once. */
  rateLimit?: { intervalMs: number; burst: number };
}

/** Creates the exporter's server; the shape of `http.createServer(options, handler)`. */
export type ServerFactory = (options: ServerOptions, handler: RequestListener) => Server;

function fail(path: string, problem: string): never {
  throw new ConfigError(`invalid web config ${path}: ${problem}`);
}

async function readWebConfigDocument(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new ConfigError(`--web.config.file: cannot read ${path} (${e.code ?? e.message})`);
  }
  try {
    return parseYaml(text) ?? {};
  } catch (err) {
    // Only the first line: the rest quotes the file, which may hold an inline key.
    return fail(path, `not valid YAML: ${(err as Error).message.split('\n')[0]!.replace(/:$/, '')}`);
  }
}

/** Reads and checks a web config file, including its certificate and key; throws ConfigError naming what is wrong. */
export async function loadWebConfig(path: string, warn: Warn = () => {}): Promise<WebConfig> {
  const doc = await readWebConfigDocument(path);
  const parsed = WebConfigFileSchema.safeParse(doc);
  if (!parsed.success) {
    const lines = describeIssues(parsed.error, (p) => KNOWN_KEYS[p.join('.')] ?? []);
    throw new ConfigError(`invalid web config ${path}:\n  ${lines.join('\n  ')}`);
  }
  const file = parsed.data;
  const baseDir = dirname(resolve(path));

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(file.http_server_config?.headers ?? {})) {
    const field = formatPath(['http_server_config', 'headers', name]);
    if (!(name in CONFIGURABLE_HEADERS)) fail(path, `${field}: this header can not be configured (allowed: ${Object.keys(CONFIGURABLE_HEADERS).join(', ')})`);
    if (value === '') continue; // blank means unset, as in exporter-toolkit
    const allowed = CONFIGURABLE_HEADERS[name];
    if (allowed && !allowed.includes(value)) fail(path, `${field}: must be one of ${allowed.join(', ')}`);
    if (!/^[\t\x20-\x7e]*$/.test(value)) fail(path, `${field}: contains characters not allowed in an HTTP header`);
    headers[name] = value;
  }

  const basicAuthUsers = new Map<string, string>();
  for (const [user, hash] of Object.entries(file.basic_auth_users ?? {})) {
    const field = formatPath(['basic_auth_users', user]);
    if (user.includes(':')) fail(path, `${field}: a user name can not contain ":" (Basic auth could not send it)`);
    // Never echo the value: a plain password pasted by mistake must not reach logs.
    if (bcryptCost(hash) === undefined) fail(path, `${field}: not a bcrypt hash; store the hash, not the password (make one with: htpasswd -nBC 10 "" | tr -d ':\\n')`);
    basicAuthUsers.set(user, hash);
  }

  let rateLimit: WebConfig['rateLimit'];
  if (file.rate_limit) {
    let intervalMs = 0;
    try {
      intervalMs = file.rate_limit.interval === undefined ? 0 : parseDuration(file.rate_limit.interval);
    } catch (err) {
      fail(path, `rate_limit.interval: ${(err as Error).message}`);
    }
    const burst = file.rate_limit.burst ?? 0;
    if (intervalMs > 0 && burst < 1) fail(path, 'rate_limit.burst: must be at least 1 when rate_limit.interval is set');
    if (intervalMs > 0) rateLimit = { intervalMs, burst };
  }

  const tlsFile = file.tls_server_config;
  const tls = tlsFile && Object.keys(tlsFile).length > 0 ? resolveTls(path, baseDir, tlsFile, warn) : undefined;
  if (tls) {
    // Read every file once now, so a missing or broken certificate stops the start instead of the first handshake.
    try {
      checkTlsMaterial(readTlsMaterial(tls), tls, warn);
    } catch (err) {
      fail(path, (err as Error).message);
    }
  } else if (basicAuthUsers.size > 0) {
    warn('web config: basic_auth_users without tls_server_config, passwords cross the network in clear text unless a TLS proxy is in front', { file: path });
  }

  return { path, tls, headers, basicAuthUsers, rateLimit };
}

function resolveTls(path: string, baseDir: string, t: z.infer<typeof TlsServerSchema>, warn: Warn): TlsSettings {
  const source = (field: string, fileField: string, inline: string | undefined, file: string | undefined): PemSource | undefined => {
    if (inline !== undefined && file !== undefined) fail(path, `tls_server_config: set ${field} or ${fileField}, not both`);
    if (file !== undefined) return { field: `tls_server_config.${fileField}`, file: resolve(baseDir, file) };
    if (inline !== undefined) return { field: `tls_server_config.${field}`, inline };
    return undefined;
  };
  const cert = source('cert', 'cert_file', t.cert, t.cert_file);
  const key = source('key', 'key_file', t.key, t.key_file);
  const clientCa = source('client_ca', 'client_ca_file', t.client_ca, t.client_ca_file);
  if (!cert) fail(path, 'tls_server_config.cert_file: missing (or give the PEM inline as tls_server_config.cert)');
  if (!key) fail(path, 'tls_server_config.key_file: missing (or give the PEM inline as tls_server_config.key)');

  const clientAuth: ClientAuthType = t.client_auth_type === 'RequireClientCert' ? 'RequireAnyClientCert' : (t.client_auth_type ?? 'NoClientCert');
  if (clientCa && clientAuth === 'NoClientCert') fail(path, 'tls_server_config.client_auth_type: client CAs are configured but no client certificate is asked for; use RequireAndVerifyClientCert');
  // Stricter than exporter-toolkit, which falls back to the system roots: any publicly issued certificate would pass.
  if (!clientCa && (clientAuth === 'RequireAndVerifyClientCert' || clientAuth === 'VerifyClientCertIfGiven')) {
    fail(path, `tls_server_config.client_ca_file: required with client_auth_type ${clientAuth}`);
  }
  if (t.client_allowed_sans && clientAuth !== 'RequireAnyClientCert' && clientAuth !== 'RequireAndVerifyClientCert') {
    fail(path, 'tls_server_config.client_allowed_sans: needs client_auth_type RequireAnyClientCert or RequireAndVerifyClientCert');
  }

  const order = Object.keys(TLS_VERSIONS);
  const min = t.min_version ?? 'TLS12';
  const max = t.max_version ?? 'TLS13';
  if (order.indexOf(min) > order.indexOf(max)) fail(path, `tls_server_config.min_version: ${min} is above max_version ${max}`);

  const ciphers: string[] = [];
  (t.cipher_suites ?? []).forEach((name, i) => {
    if (TLS13_SUITES.has(name)) return;
    const openssl = CIPHER_SUITES[name];
    if (!openssl) fail(path, `tls_server_config.cipher_suites[${i}]: unknown cipher suite "${name}" (use Go names such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)`);
    ciphers.push(openssl);
  });
  if (t.cipher_suites?.some((name) => TLS13_SUITES.has(name))) {
    warn('web config: TLS 1.3 cipher suites are not configurable and are ignored', { file: path, field: 'tls_server_config.cipher_suites' });
  }

  return {
    cert,
    key,
    clientCa,
    clientAuth,
    allowedSans: t.client_allowed_sans ?? undefined,
    minVersion: TLS_VERSIONS[min],
    maxVersion: TLS_VERSIONS[max],
    ciphers: ciphers.length > 0 ? ciphers.join(':') : undefined,
    ecdhCurve: t.curve_preferences?.length ? t.curve_preferences.map((c) => CURVES[c]).join(':') : undefined,
    honorCipherOrder: t.prefer_server_cipher_suites ?? true,
  };
}

interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
}

/** Larger than any certificate chain, key or CA bundle (a system's whole bundle is about 250 KB). */
const PEM_MAX_BYTES = 1024 * 1024;

/**
 * A regular file only: a FIFO without a writer, given by mistake, blocked the read (and the event loop with it) at the
 * start and at every reload of the TLS files.
 */
function readPem(src: PemSource): Buffer {
  if (src.file === undefined) return Buffer.from(src.inline ?? '');
  return Buffer.from(readRegularFile(src.file, src.field, PEM_MAX_BYTES, 'a PEM file').text, 'utf8');
}

function readTlsMaterial(t: TlsSettings): TlsMaterial {
  return { cert: readPem(t.cert), key: readPem(t.key), ca: t.clientCa ? readPem(t.clientCa) : undefined };
}

const where = (src: PemSource) => (src.file ? `${src.field} ${src.file}` : src.field);

/** Parses each piece on its own so an error names the file at fault, then the whole context (key/cert match). */
function checkTlsMaterial(m: TlsMaterial, t: TlsSettings, warn: Warn): void {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(m.cert);
  } catch (err) {
    throw new Error(`${where(t.cert)}: not a PEM certificate (${(err as Error).message})`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(m.key);
  } catch (err) {
    throw new Error(`${where(t.key)}: not an unencrypted PEM private key (${(err as Error).message})`);
  }
  if (!cert.checkPrivateKey(key)) throw new Error(`${where(t.key)}: this key does not belong to the certificate in ${where(t.cert)}`);
  if (t.clientCa && m.ca) {
    try {
      new X509Certificate(m.ca);
    } catch (err) {
      throw new Error(`${where(t.clientCa)}: not a PEM certificate bundle (${(err as Error).message})`);
    }
  }
  try {
    createSecureContext(secureContextOptions(m, t));
  } catch (err) {
    throw new Error(`tls_server_config: OpenSSL rejects the settings (${(err as Error).message})`);
  }
  const expires = new Date(cert.validTo);
  if (expires.getTime() < Date.now()) warn('web config: the server certificate has expired', { file: t.cert.file, not_after: expires.toISOString() });
}

function secureContextOptions(m: TlsMaterial, t: TlsSettings): SecureContextOptions {
  return {
    cert: m.cert,
    key: m.key,
    ca: m.ca,
    minVersion: t.minVersion,
    maxVersion: t.maxVersion,
    ciphers: t.ciphers,
    ecdhCurve: t.ecdhCurve,
    honorCipherOrder: t.honorCipherOrder,
  };
}

/**
 * Keeps the secure context in step with the files: exporter-toolkit picks up renewed certificates without a
 * restart, so this does too. Checked when a connection arrives (a few stat calls); a change that does not load
 * (say the key is written before the certificate) keeps the previous context until the files change again.
 */
class TlsFileWatch {
  private seen: string;

  constructor(
    private readonly t: TlsSettings,
    private readonly warn: Warn,
  ) {
    this.seen = this.fingerprint();
  }

  private fingerprint(): string {
    return [this.t.cert.file, this.t.key.file, this.t.clientCa?.file]
      .map((f) => {
        if (!f) return '';
        try {
          const s = statSync(f);
          return `${s.ino}:${s.size}:${s.mtimeMs}`;
        } catch {
          return 'missing';
        }
      })
      .join('|');
  }

  /** New context options when the files changed and load cleanly; undefined otherwise. */
  changed(): SecureContextOptions | undefined {
    const now = this.fingerprint();
    if (now === this.seen) return undefined;
    this.seen = now;
    try {
      const m = readTlsMaterial(this.t);
      checkTlsMaterial(m, this.t, this.warn);
      return secureContextOptions(m, this.t);
    } catch (err) {
      this.warn('web config: cannot reload the TLS files, keeping the previous certificate', { err: (err as Error).message });
      return undefined;
    }
  }
}

/** Why a client's certificate does not meet the policy, for the modes Node cannot enforce during the handshake. */
function clientCertProblem(t: TlsSettings, socket: TLSSocket): string | undefined {
  if (t.clientAuth === 'NoClientCert' || t.clientAuth === 'RequestClientCert') return undefined;
  const cert = socket.getPeerX509Certificate();
  if (!cert) return t.clientAuth === 'VerifyClientCertIfGiven' ? undefined : 'no client certificate';
  // RequireAndVerifyClientCert is enforced by the handshake already; checked again so a change there cannot open it.
  if ((t.clientAuth === 'VerifyClientCertIfGiven' || t.clientAuth === 'RequireAndVerifyClientCert') && !socket.authorized) return 'untrusted client certificate';
  if (t.allowedSans && !subjectAltNames(cert).some((san) => t.allowedSans!.some((allowed) => sameSan(san, allowed)))) {
    return 'client certificate has none of client_allowed_sans';
  }
  return undefined;
}

/** Values of a certificate's DNS, IP, e-mail and URI SANs (Node renders them as `DNS:a, IP Address:b, ...`). */
function subjectAltNames(cert: X509Certificate): string[] {
  const out: string[] = [];
  const re = /(DNS|IP Address|email|URI):("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/gy;
  const text = cert.subjectAltName ?? '';
  for (let m = re.exec(text); m && m[0] !== ''; m = re.exec(text)) {
    const raw = m[2]!;
    out.push(raw.startsWith('"') ? (JSON.parse(raw) as string) : raw);
  }
  return out;
}

/** IPs compare by value (`0:0:0:0:0:0:0:1` is `::1`), everything else exactly, as Go does. */
function sameSan(san: string, allowed: string): boolean {
  if (san === allowed) return true;
  if (isIP(san) === 6 && isIP(allowed) === 6) return new URL(`http://[${san}]/`).hostname === new URL(`http://[${allowed}]/`).hostname;
  return false;
}

/** Token bucket as Go's rate.Limiter: starts full, one token back per interval. */
class TokenBucket {
  private tokens: number;
  private last = performance.now();

  constructor(
    private readonly intervalMs: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  take(): boolean {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + (now - this.last) / this.intervalMs);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** Applies the parts of the config that touch every response: the rate limit and the extra headers. */
function withResponsePolicy(web: WebConfig, handler: RequestListener): RequestListener {
  const headers = Object.entries(web.headers);
  const bucket = web.rateLimit ? new TokenBucket(web.rateLimit.intervalMs, web.rateLimit.burst) : undefined;
  return (req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    if (bucket && !bucket.take()) {
      const body = 'Too Many Requests\n';
      res.writeHead(429, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    handler(req, res);
  };
}

/**
 * A `createServer(options, handler)` for the exporter: HTTPS with the configured TLS policy when the config has
 * `tls_server_config`, plain HTTP otherwise; either way the configured headers and rate limit apply.
 */
export function createServerFactory(web: WebConfig, warn: Warn = () => {}): ServerFactory {
  return (options, handler) => {
    const listener = withResponsePolicy(web, handler);
    const t = web.tls;
    if (!t) return createHttpServer(options, listener);

    const watch = new TlsFileWatch(t, warn);
    let material: TlsMaterial;
    try {
      material = readTlsMaterial(t);
    } catch (err) {
      fail(web.path, (err as Error).message);
    }
    const server = createHttpsServer(
      {
        ...options,
        ...secureContextOptions(material, t),
        requestCert: t.clientAuth !== 'NoClientCert',
        rejectUnauthorized: t.clientAuth === 'RequireAndVerifyClientCert',
        // A client that never finishes the handshake holds a socket as long as one that never sends headers.
        handshakeTimeout: options.headersTimeout ?? 10_000,
      },
      listener,
    );
    // Prepended so the new context is in place before Node wraps this very connection.
    server.prependListener('connection', () => {
      const next = watch.changed();
      if (next) server.setSecureContext(next);
    });
    server.prependListener('secureConnection', (socket: TLSSocket) => {
      if (clientCertProblem(t, socket)) socket.destroy();
    });
    return server;
  };
}

/** The guard for the config's `basic_auth_users`, or undefined when it has none (every request passes). */
export function basicAuthGuard(web: WebConfig): RequestGuard | undefined {
  return web.basicAuthUsers.size > 0 ? createBasicAuthGuard(web.basicAuthUsers) : undefined;
}

export type { RequestGuard };
