import { lookup } from 'node:dns/promises';
import { isIP, connect as netConnect } from 'node:net';
import { readFileSync } from 'node:fs';
import { connect as tlsConnect, checkServerIdentity, type PeerCertificate } from 'node:tls';
import { request } from '../base/undici-core.js';
import type { Collector } from '../collectors/collector.js';
import { OneOffSession } from '../polling/server-session.js';
import { streamIntervalWithin } from '../polling/request-budget.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../base/logger.js';
import { scrubSecrets, type OwnSecret } from '../base/secret-scrubber.js';
import { WowzaClient, type WowzaTarget } from '../wowza/client.js';
import { parseChallenges } from '../wowza/digest.js';
import { WowzaError, WowzaUnparsableError } from '../wowza/errors.js';
import { FIX, isManagerPage, NOT_REST_API } from '../wowza/failure-advice.js';
import { apiUrl } from '../wowza/api-url.js';
import { createAgent } from '../wowza/transport.js';
import { versionOf } from '../collectors/status.js';
import type { CheckResult } from './report.js';

export interface DoctorOptions {
  target: WowzaTarget;
  config: Config;
  collectors: Collector[];
  intervalMs: number;
  logger: Logger;
  /** Called as each check finishes, so the report streams. */
  emit?: (r: CheckResult) => void;
}

const WEBHOOKS_MIN = [4, 9, 6];

function atLeast(version: string, min: number[]): boolean | undefined {
  const parts = version.split('.').map(Number);
  if (parts.length < 3 || parts.some((p) => !Number.isFinite(p))) return undefined;
  for (let i = 0; i < min.length; i++) {
    if (parts[i]! !== min[i]!) return parts[i]! > min[i]!;
  }
  return true;
}

function portOf(u: URL): number {
  return Number(u.port || (u.protocol === 'https:' ? 443 : 80));
}

/** Runs the checks in order, stopping where a later check cannot mean anything. */
export async function runDoctor(o: DoctorOptions): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const add = (found: CheckResult) => {
    const r = scrubbed(found, o.target);
    results.push(r);
    o.emit?.(r);
    return r;
  };
  const url = new URL(o.target.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = portOf(url);

  // 1. DNS and TCP.
  if (isIP(host)) {
    add({ check: 'dns', status: 'pass', message: `${host} is an IP address` });
  } else {
    try {
      const addrs = await lookup(host, { all: true });
      add({ check: 'dns', status: 'pass', message: `${host} resolves to ${addrs.map((a) => a.address).join(', ')}` });
    } catch (err) {
      add({ check: 'dns', status: 'fail', message: `${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})`, fix: FIX.dns });
      return results;
    }
  }
  const tcp = await tcpCheck(host, port, o.target.timeoutMs);
  if (tcp) {
    add({ check: 'tcp', status: 'fail', message: `cannot connect to ${host}:${port} (${tcp})`, fix: tcp === 'ECONNREFUSED' ? FIX.refused : FIX.unreachableHost });
    return results;
  }
  add({ check: 'tcp', status: 'pass', message: `${host}:${port} accepts connections` });

  // TLS handshake, certificate chain, expiry, host name.
  if (url.protocol === 'https:') {
    const r = add(await tlsCheck(host, port, o.target));
    if (r.status === 'fail') return results;
  }

  // 2. An HTTP answer from the REST API (not a streaming port, the Manager or another web page).
  const http = add(await httpCheck(url, o.target));
  if (http.status === 'fail') return results;
  const offered = (http.details?.offered as string[] | undefined) ?? [];

  // 3. Authentication.
  const auth = add(await authCheck(o.target, offered));
  if (auth.status === 'fail') return results;

  // 4-5. JSON and version.
  const client = new WowzaClient(o.target);
  try {
    let status;
    try {
      status = await client.serverStatus();
      add({ check: 'content-type', status: 'pass', message: 'the server answers JSON to Accept: application/json' });
    } catch (err) {
      if (err instanceof WowzaUnparsableError && /XML/.test(err.message)) {
        add({
          check: 'content-type',
          status: 'fail',
          message: 'the server answered XML although Accept: application/json was sent',
          fix: 'WSE sends XML only when the Accept header is missing: a proxy between here and the server probably drops it; connect to the REST port directly or make the proxy pass Accept',
        });
      } else add(failure('content-type', err));
      return results;
    }
    const { version, build } = versionOf(status);
    const webhooks = atLeast(version, WEBHOOKS_MIN);
    add({
      check: 'version',
      status: 'pass',
      message: `Wowza Streaming Engine ${version}${build ? ` (build ${build})` : ''}; webhooks ${webhooks === undefined ? 'unknown (version not recognised)' : webhooks ? 'available' : 'not available (need 4.9.6+)'}`,
      details: { version, build, webhooks },
    });

    // 6. Discovery and the cost of one poll cycle, measured by running it; what connectioncounts would save.
    const cost = add(await costCheck(o));
    const counts = o.collectors.some((c) => c.name === 'connectioncounts');
    add(await connectionCountsCheck(counts ? o.target : { ...o.target, connectionCountsUrl: undefined, connectionCountsAuto: false }, (cost.details?.streams as number | undefined) ?? 0, client.auth.activeScheme, counts));

    // 7. Logs.
    add(await logsCheck(client));
  } finally {
    await client.close();
  }
  return results;
}

/**
 * A result as printed: messages quote what servers answered (and undici's errors), which may hold a secret in any
 * form. The configured secrets go, not credentials after an auth scheme: the doctor's own words name Basic and Digest.
 */
function scrubbed(r: CheckResult, own: OwnSecret): CheckResult {
  const out: CheckResult = { ...r, message: scrubSecrets(r.message, own) };
  if (r.fix !== undefined) out.fix = scrubSecrets(r.fix, own);
  if (r.details !== undefined) out.details = scrubbedValue(r.details, own) as Record<string, unknown>;
  return out;
}

function scrubbedValue(value: unknown, own: OwnSecret): unknown {
  if (typeof value === 'string') return scrubSecrets(value, own);
  if (Array.isArray(value)) return value.map((v) => scrubbedValue(v, own));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubbedValue(v, own)]));
  return value;
}

function failure(check: string, err: unknown, fix?: string): CheckResult {
  return { check, status: 'fail', message: (err as Error).message, fix: fix ?? 'see the message; run with --log.level debug for details' };
}

function tcpCheck(host: string, port: number, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const s = netConnect({ host, port });
    const done = (r: string | undefined) => {
      s.destroy();
      resolve(r);
    };
    s.setTimeout(timeoutMs, () => done('timeout'));
    s.once('connect', () => done(undefined));
    s.once('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
  });
}

function tlsCheck(host: string, port: number, t: WowzaTarget): Promise<CheckResult> {
  return new Promise((resolve) => {
    const ca = t.tls?.caFile ? readFileSync(t.tls.caFile) : undefined;
    const s = tlsConnect({ host, port, servername: isIP(host) ? undefined : host, rejectUnauthorized: false, ...(ca ? { ca } : {}) });
    s.setTimeout(t.timeoutMs, () => {
      s.destroy();
      resolve({ check: 'tls', status: 'fail', message: `no TLS handshake within ${t.timeoutMs} ms`, fix: FIX.wrongScheme });
    });
    s.once('error', (e: NodeJS.ErrnoException) =>
      resolve({ check: 'tls', status: 'fail', message: `TLS handshake failed (${e.code ?? e.message})`, fix: FIX.wrongScheme }),
    );
    s.once('secureConnect', () => {
      const cert = s.getPeerCertificate() as PeerCertificate;
      const authErr = s.authorizationError ? String(s.authorizationError) : undefined;
      const identityErr = checkServerIdentity(host, cert);
      s.end();
      const expires = cert.valid_to ? new Date(cert.valid_to) : undefined;
      const days = expires ? Math.floor((expires.getTime() - Date.now()) / 86_400_000) : undefined;
      const details = { subject: cert.subject?.CN, issuer: cert.issuer?.CN, validTo: cert.valid_to, authorizationError: authErr };
      if (authErr) {
        const selfSigned = /SELF_SIGNED|UNABLE_TO_GET_ISSUER|UNABLE_TO_VERIFY/.test(authErr);
        if (t.tls?.insecureSkipVerify) {
          resolve({ check: 'tls', status: 'warn', message: `certificate not trusted (${authErr}), accepted because insecure_skip_verify is set`, fix: 'prefer --wowza.ca-file with the server certificate over skipping verification', details });
        } else {
          resolve({
            check: 'tls',
            status: 'fail',
            message: `certificate not trusted (${authErr})${selfSigned ? ': it is self-signed or signed by a private CA' : ''}`,
            fix: selfSigned ? FIX.untrusted : 'renew or fix the server certificate',
            details,
          });
        }
        return;
      }
      if (identityErr && !t.tls?.insecureSkipVerify) {
        resolve({ check: 'tls', status: 'fail', message: `certificate does not match ${host}: ${identityErr.message}`, fix: 'use the host name the certificate was issued for in --wowza.url', details });
        return;
      }
      if (days !== undefined && days < 14) {
        resolve({ check: 'tls', status: days < 0 ? 'fail' : 'warn', message: `certificate ${days < 0 ? 'expired' : `expires in ${days} days`} (${cert.valid_to})`, fix: 'renew the server certificate', details });
        return;
      }
      resolve({ check: 'tls', status: 'pass', message: `trusted certificate for ${cert.subject?.CN ?? host}, valid until ${cert.valid_to}`, details });
    });
  });
}

async function httpCheck(url: URL, t: WowzaTarget): Promise<CheckResult> {
  const agent = createAgent({ connections: 1, tls: t.tls });
  const probeUrl = apiUrl(url, '/v2/machine/monitoring/current');
  try {
    const res = await request(probeUrl, { dispatcher: agent, headers: { accept: 'application/json' }, signal: AbortSignal.timeout(t.timeoutMs) });
    const body = (await res.body.text()).slice(0, 4096);
    const ct = String(res.headers['content-type'] ?? '');
    const www = res.headers['www-authenticate'];
    const offered = www ? [...new Set(parseChallenges(www).map((c) => c.scheme))] : [];
    const html = /html/i.test(ct) || /^\s*<(!doctype|html)/i.test(body);
    if (res.statusCode === 401 && offered.length > 0) {
      return { check: 'http', status: 'pass', message: `REST API answered and asks for ${offered.map(cap).join(' or ')} authentication`, details: { offered } };
    }
    if (html) {
      const manager = isManagerPage(body);
      return {
        check: 'http',
        status: 'fail',
        message: manager ? `this is the Wowza Streaming Engine Manager (a web UI), ${NOT_REST_API}` : `HTTP ${res.statusCode} with an HTML page: ${NOT_REST_API}`,
        fix: FIX.notRestApi,
      };
    }
    if (res.statusCode >= 200 && res.statusCode < 300) {
      return { check: 'http', status: 'warn', message: 'REST API answered without asking for credentials', fix: 'enable authentication on the REST interface (authenticationMethod in Server.xml): anyone who reaches it can control the server', details: { offered: [] } };
    }
    if (res.statusCode === 404) {
      return { check: 'http', status: 'fail', message: 'HTTP 404 for /v2/machine/monitoring/current: no WSE REST API here', fix: 'point --wowza.url at the REST port, 8087 by default, without a path' };
    }
    return { check: 'http', status: 'fail', message: `HTTP ${res.statusCode} from ${probeUrl.origin}: not the answer of a WSE REST API`, fix: 'point --wowza.url at the REST port, 8087 by default' };
  } catch (err) {
    const e = err as { code?: string; name?: string; message?: string };
    const notHttp = /HTTPParser|UND_ERR_SOCKET|ECONNRESET|UND_ERR_HEADERS_TIMEOUT|TimeoutError|AbortError/.test(`${e.code} ${e.name}`);
    return {
      check: 'http',
      status: 'fail',
      message: notHttp ? `no HTTP answer from ${url.host} (${e.code ?? e.name}): this port does not speak HTTP${url.protocol === 'http:' ? ' (or needs https://)' : ''}` : `request failed: ${e.message}`,
      fix: 'use the REST port (8087 by default); 1935 is the streaming port',
    };
  } finally {
    await agent.close();
  }
}

const cap = (s: string) => (s === 'digest' ? 'Digest' : s === 'basic' ? 'Basic' : s);

async function authCheck(t: WowzaTarget, offered: string[]): Promise<CheckResult> {
  if (offered.length === 0) return { check: 'auth', status: 'pass', message: 'no authentication required' };
  if (!t.username) return { check: 'auth', status: 'fail', message: `the server asks for ${offered.map(cap).join(' or ')} and no username is configured`, fix: FIX.noUsername };
  if (!t.password) return { check: 'auth', status: 'fail', message: `no password configured for user "${t.username}"`, fix: FIX.noPassword };
  const supported = offered.filter((s): s is 'basic' | 'digest' => s === 'basic' || s === 'digest');
  const works: string[] = [];
  const unsure: string[] = [];
  for (const scheme of supported) {
    const c = new WowzaClient({ ...t, auth: scheme });
    try {
      await c.machineCurrent();
      works.push(scheme);
    } catch (err) {
      // Only a refusal of the credentials says they are wrong. An error status past authentication (a 500 of the
      // endpoint) or an unreadable body means they were accepted: those are the later checks' business.
      if (err instanceof WowzaError && (err.kind === 'unparsable' || err.kind === 'http')) works.push(scheme);
      else if (!(err instanceof WowzaError && err.kind === 'auth')) unsure.push(`${cap(scheme)}: ${(err as Error).message}`);
    } finally {
      await c.close();
    }
  }
  const autoPick = supported.includes('digest') ? 'digest' : supported[0];
  const details = { offered, works, configured: t.auth, autoPicks: autoPick };
  if (t.auth !== 'auto' && !offered.includes(t.auth)) {
    return {
      check: 'auth',
      status: 'fail',
      message: `auth is set to ${cap(t.auth)} but the server offers only ${offered.map(cap).join(' and ')}${works.length ? ` (${works.map(cap).join(', ')} works with these credentials)` : ''}`,
      fix: `use --wowza.auth ${works[0] ?? supported[0] ?? 'auto'} or auto`,
      details,
    };
  }
  if (works.length === 0 && unsure.length > 0) {
    return { check: 'auth', status: 'warn', message: `could not tell whether the credentials work: ${unsure.join('; ')}`, details };
  }
  if (works.length === 0) {
    return { check: 'auth', status: 'fail', message: `wrong username or password: user "${t.username}" was rejected with ${supported.map(cap).join(' and ')}`, fix: FIX.wrongCredentials, details };
  }
  const chosen = t.auth === 'auto' ? autoPick! : t.auth;
  if (!works.includes(chosen)) {
    return { check: 'auth', status: 'fail', message: `${cap(chosen)} is rejected but ${works.map(cap).join(', ')} works`, fix: `use --wowza.auth ${works[0]}`, details };
  }
  return {
    check: 'auth',
    status: 'pass',
    message: `${works.map(cap).join(' and ')} accepted for user "${t.username}"; ${t.auth === 'auto' ? `auto picks ${cap(autoPick!)}` : `configured ${cap(t.auth)}`}`,
    details,
  };
}

async function costCheck(o: DoctorOptions): Promise<CheckResult> {
  let requests = 0;
  let requestSeconds = 0;
  const challenges: Record<string, number> = {};
  const session = new OneOffSession(o.target, o.config, {
    discoveryMaxAgeMs: 60_000,
    log: o.logger,
    onRequest: (_endpoint, _code, seconds) => {
      requests++;
      requestSeconds += seconds;
    },
    onChallenge: (reason) => void (challenges[reason] = (challenges[reason] ?? 0) + 1),
  });
  const limiter = session.limiter;
  try {
    const signal = AbortSignal.timeout(Math.max(o.intervalMs * 4, 30_000));
    const started = performance.now();
    const topology = await session.discovery.get(signal);
    const results = await session.pollAll(o.collectors, signal, o.logger);
    const seconds = (performance.now() - started) / 1000;
    // With `auto`, the estimate goes by where the limiter settled against this server.
    const concurrency = limiter.limit;
    const series = results.reduce((n, r) => n + r.set.size, 0) + results.length * 3 + 1; // + success, duration, last poll per collector, + wowza_up
    const failed = results.filter((r) => !r.ok);
    const latencyMs = requests ? (requestSeconds / requests) * 1000 : 0;
    const V = topology.vhosts.length;
    const A = topology.apps.length;
    const S = topology.streams.length;
    const rounds = 1 + Math.ceil(V / concurrency) + Math.ceil(A / concurrency) + Math.ceil((requests - 1 - V - A) / concurrency);
    const estimateS = (rounds * latencyMs) / 1000;
    // What serve would do under the request budget, with every collector at the poll interval.
    const intervals = new Map(o.collectors.filter((c) => c.appliesTo?.(o.target) ?? true).map((c) => [c.name as string, o.intervalMs]));
    const stretched = intervals.has('stream') ? streamIntervalWithin(o.config.poll.max_requests_per_second, { vhosts: V, apps: A, streams: S }, intervals, o.intervalMs * 0.9) : undefined;
    const challenged = Object.entries(challenges).map(([reason, n]) => `${n} ${reason}`).join(', ');
    const details = {
      vhosts: V,
      applications: A,
      instances: topology.instances.length,
      streams: S,
      droppedStreams: topology.droppedStreams,
      requests,
      series,
      measuredSeconds: seconds,
      latencyMs,
      concurrency,
      estimatedSeconds: estimateS,
      intervalSeconds: o.intervalMs / 1000,
      authChallenges: challenges,
      ...(stretched ? { streamIntervalSeconds: stretched.intervalMs / 1000, streamIntervalReason: stretched.reason ?? null } : {}),
    };
    const found = `${V} vhost(s), ${A} application(s), ${topology.instances.length} instance(s), ${S} stream(s)${topology.droppedStreams ? ` (+${topology.droppedStreams} over the cap)` : ''}`;
    const cost =
      `one poll cycle costs ${requests} API requests${challenged ? ` (401 challenges: ${challenged})` : ''} and ${series} series; it took ${seconds.toFixed(2)} s (${latencyMs.toFixed(0)} ms per request, concurrency ${concurrency})` +
      (stretched?.reason ? `; ${stretched.reason}` : '');
    if (failed.length > 0) {
      return { check: 'discovery', status: 'fail', message: `${found}; collectors failed: ${failed.map((f) => `${f.collector} (${f.error!.message})`).join('; ')}`, fix: 'see the messages; the user may lack REST rights for these endpoints', details };
    }
    if (Math.max(seconds, estimateS) > (o.intervalMs / 1000) * 0.9) {
      return { check: 'discovery', status: 'warn', message: `${found}; ${cost}: longer than the poll interval allows`, fix: 'raise --poll.interval or poll.concurrency, give the stream collector its own longer interval, or filter streams', details };
    }
    return { check: 'discovery', status: 'pass', message: `${found}; ${cost}`, details };
  } finally {
    await session.close();
  }
}

/**
 * Whether the server offers the connectioncounts provider (admin port 8086 by default, or beside the REST API
 * behind a proxy), and what it saves: viewers of every stream in one request instead of one per stream.
 */
async function connectionCountsCheck(t: WowzaTarget, streams: number, restScheme: 'basic' | 'digest' | undefined, collectorOn: boolean): Promise<CheckResult> {
  const rest = new URL(t.url);
  const admin = new URL(rest);
  admin.port = '8086';
  if (!t.connectionCountsUrl && !t.connectionCountsAuto) {
    const why = collectorOn ? 'connectioncounts_url is off' : 'the connectioncounts collector is off';
    return { check: 'connectioncounts', status: 'pass', message: `${why}: the provider is not asked, viewers are read per stream through the REST API` };
  }
  // Each port negotiates its own scheme (a default install: REST on Basic, :8086 on Digest): name both.
  const schemesOf = (client: WowzaClient, url: string) => {
    const own = client.schemes.find((s) => s.origin === new URL(url).origin)?.scheme;
    return `REST on :${portOf(rest)} ${restScheme ? `uses ${cap(restScheme)}` : 'asks no credentials'}, :${portOf(new URL(url))} ${own ? `uses ${cap(own)}` : 'asks no credentials'}`;
  };
  const candidates = t.connectionCountsUrl ? [t.connectionCountsUrl] : [...new Set([`${admin.origin}/connectioncounts`, `${rest.origin}/connectioncounts`])];
  const saves = `viewers of ${streams} stream(s) in 1 request instead of ${streams}, and the per-stream REST reads (bytes, uptime) every 60 s`;
  const errors: string[] = [];
  for (const url of candidates) {
    const client = new WowzaClient({ ...t, connectionCountsUrl: url });
    try {
      const found = await client.connectionCounts(AbortSignal.timeout(t.timeoutMs));
      const schemes = schemesOf(client, url);
      const details = { url, streams: found.size, configured: t.connectionCountsUrl !== undefined, schemes: client.schemes };
      if (t.connectionCountsUrl) return { check: 'connectioncounts', status: 'pass', message: `${url} answers with ${found.size} stream(s) (${schemes}): ${saves}`, details };
      // serve looks at the admin port's address itself (connectioncounts_url unset): nothing to add there.
      if (t.connectionCountsAuto && url === `${admin.origin}/connectioncounts`) {
        return { check: 'connectioncounts', status: 'pass', message: `${url} answers with ${found.size} stream(s) (${schemes}): serve finds and uses it (viewers from connectioncounts): ${saves}`, details };
      }
      return {
        check: 'connectioncounts',
        status: 'warn',
        message: `the server offers connectioncounts at ${url} (${found.size} stream(s), ${schemes}) but it is not used`,
        fix: `add --wowza.connectioncounts-url ${url} (servers[].connectioncounts_url): ${saves}`,
        details,
      };
    } catch (err) {
      errors.push((err as Error).message);
    } finally {
      await client.close();
    }
  }
  if (t.connectionCountsUrl) {
    return {
      check: 'connectioncounts',
      status: 'fail',
      message: errors[0]!,
      fix: 'check the URL (the admin port, 8086 by default) and that VHost.xml keeps the HTTPConnectionCountsXML provider (path connectioncounts*) on that port',
    };
  }
  return { check: 'connectioncounts', status: 'pass', message: `not offered at ${candidates.join(' or ')}: viewers are read per stream through the REST API`, details: { errors } };
}

async function logsCheck(client: WowzaClient): Promise<CheckResult> {
  try {
    const types = await client.logTypes();
    const sizes: Record<string, number | string> = {};
    for (const t of types) {
      try {
        const page = await client.logPage(t, { lineCount: 1, startOffset: 0, filter: ['noHeader', 'noColumnHeadings'] });
        sizes[t] = page.fileLength;
      } catch (err) {
        sizes[t] = `unreadable: ${(err as Error).message}`;
      }
    }
    const unreadable = Object.entries(sizes).filter(([, v]) => typeof v === 'string');
    const text = Object.entries(sizes)
      .map(([k, v]) => (typeof v === 'number' ? `${k} (${v} bytes)` : `${k} (unreadable)`))
      .join(', ');
    if (types.length === 0) return { check: 'logs', status: 'warn', message: 'the server lists no log types', fix: 'log shipping will have nothing to follow', details: { sizes } };
    if (unreadable.length > 0) return { check: 'logs', status: 'warn', message: `log types: ${text}`, fix: 'the user may lack rights to read some logs', details: { sizes } };
    return { check: 'logs', status: 'pass', message: `readable log types: ${text}`, details: { sizes } };
  } catch (err) {
    return { check: 'logs', status: 'warn', message: `cannot list logs: ${(err as Error).message}`, fix: 'log shipping needs GET {S}/logs; check the user rights', details: {} };
  }
}
