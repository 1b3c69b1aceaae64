import { WowzaAuthError, WowzaError, WowzaHttpError, WowzaNetworkError, WowzaUnparsableError } from './errors.js';

/**
 * One explanation per kind of failure, shared by `serve` (its log and status page) and `doctor`, so both name the
 * same cause and the same next step.
 */
export interface Advice {
  /** What went wrong, in the operator's words. */
  cause: string;
  /** What to do about it. */
  fix: string;
}

/** The words every "this is not Wowza's REST API" explanation carries (tests and alerts look for them). */
export const NOT_REST_API = 'not the WSE REST API';

/** The next steps, by failure kind: doctor's checks use the same text. */
export const FIX = {
  wrongScheme: 'is this port plain HTTP? then use an http:// URL',
  maybeTls: 'does this port speak TLS? then use an https:// URL; otherwise check that the server runs and that nothing between resets connections',
  authScheme: 'set --wowza.auth auto (servers[].auth), or the scheme the server asks for',
  authOther: 'run wowza-exporter doctor for this server: it tries each scheme the server offers with these credentials',
  acceptDropped: 'connect to the REST port directly, or make the proxy between here and the server pass the Accept header',
  notRestApi: 'point --wowza.url at the REST port, 8087 by default (the Manager is on 8088, streaming on 1935)',
  refused: 'nothing listens there: the WSE REST API listens on 8087 by default (check <RESTInterface> in Server.xml and that the server runs)',
  unreachableHost: 'check firewalls and that the host is up',
  dns: 'check the host name in --wowza.url and the DNS of this machine',
  noUsername: 'set --wowza.username and --wowza.password-file (or WOWZA_PASSWORD)',
  noPassword: 'set --wowza.password-file or WOWZA_PASSWORD (password_file in a config file)',
  wrongCredentials: 'check the user in Server.xml/admin.password and the password file (a trailing newline is ignored)',
  untrusted: 'pass the server certificate or its CA with --wowza.ca-file, or use --wowza.insecure-skip-verify for a test server',
  timeout: 'check that the server is not overloaded, or raise --wowza.timeout',
} as const;

/** Network codes of a TLS client that met a peer speaking plain HTTP (or nothing it understands). */
const PLAIN_HTTP_CODES = /^(ECONNRESET|EPROTO|ERR_SSL_WRONG_VERSION_NUMBER|ERR_SSL_PACKET_LENGTH_TOO_LONG|UND_ERR_SOCKET)$/;
/** Network codes of a plain-HTTP client that met a peer speaking TLS: a reset, or bytes that are no HTTP answer. */
const TLS_PEER_CODES = /^(ECONNRESET|UND_ERR_SOCKET|HPE_[A-Z_]+)$/;

/** What the exporter knows of the server besides the error: the URL's scheme and whether credentials are set. */
export interface AdviceContext {
  url: string;
  username?: string;
  password?: string;
}

/** The page is the Manager's web UI (its title or its paths). */
export function isManagerPage(body: string): boolean {
  return /Streaming Engine Manager|enginemanager/i.test(body);
}

/** Cause and next step of one failed request (undefined for a failure with nothing to add to its message). */
export function adviseFailure(err: Error, ctx: AdviceContext): Advice | undefined {
  if (!(err instanceof WowzaError)) return undefined;
  const https = ctx.url.startsWith('https:');
  if (err instanceof WowzaNetworkError) {
    if (https && err.code && PLAIN_HTTP_CODES.test(err.code)) return { cause: `no TLS answer from ${hostOf(ctx.url)} (${err.code}): the port may speak plain HTTP`, fix: FIX.wrongScheme };
    if (!https && err.code && TLS_PEER_CODES.test(err.code)) return { cause: `no HTTP answer from ${hostOf(ctx.url)} (${err.code}): the port may speak TLS`, fix: FIX.maybeTls };
    if (err.code === 'ECONNREFUSED') return { cause: `connection refused by ${hostOf(ctx.url)}`, fix: FIX.refused };
    if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return { cause: `${hostOf(ctx.url)} does not resolve`, fix: FIX.dns };
    if (err.kind === 'tls') return { cause: err.message, fix: /expired/.test(err.message) ? 'renew the server certificate' : FIX.untrusted };
    return { cause: err.message, fix: FIX.unreachableHost };
  }
  if (err instanceof WowzaAuthError) {
    if (!ctx.username) return { cause: 'the server asks for credentials and no username is configured', fix: FIX.noUsername };
    // An empty password file is no password either.
    if (!ctx.password) return { cause: `no password configured for user "${ctx.username}"`, fix: FIX.noPassword };
    // The authenticator's verdict is in the message: a scheme the configuration refuses is not a wrong password.
    if (/asks for (Digest|Basic) authentication but auth is set to/.test(err.message)) return { cause: err.message, fix: FIX.authScheme };
    if (/wrong username or password/.test(err.message)) return { cause: `wrong username or password: user "${ctx.username}" was rejected`, fix: FIX.wrongCredentials };
    return { cause: err.message, fix: FIX.authOther };
  }
  if (err.kind === 'timeout') return { cause: err.message, fix: FIX.timeout };
  if (err instanceof WowzaUnparsableError && /Accept header is dropped/.test(err.message)) return { cause: err.message, fix: FIX.acceptDropped };
  if (foreignAnswer(err)) {
    const page = err instanceof WowzaHttpError ? err.page : undefined;
    const cause =
      page === 'manager'
        ? `this is the Wowza Streaming Engine Manager (a web UI), ${NOT_REST_API}`
        : page === 'html' && err instanceof WowzaHttpError
          ? `${err.site.endpoint} answered HTTP ${err.status} with a web page (${err.site.url}): ${NOT_REST_API}`
          : `${err.message}: ${NOT_REST_API}`;
    return { cause, fix: FIX.notRestApi };
  }
  return undefined;
}

/** An answer no WSE REST API gives: a web page, or an error that is not Wowza's JSON envelope. */
export function foreignAnswer(err: Error): boolean {
  if (err instanceof WowzaHttpError) return err.page !== 'wowza';
  return err instanceof WowzaUnparsableError && !/Accept header is dropped/.test(err.message) && /XML\/HTML|invalid JSON/.test(err.message);
}

/** The advice as one line: "cause; fix". */
export function adviceText(a: Advice): string {
  return `${a.cause}; ${a.fix}`;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
