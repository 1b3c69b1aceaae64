import { redactUrl } from '../base/redact.js';

/** Where a failed call went: enough to act on, never a secret. */
export interface CallSite {
  server: string;
  /** Endpoint template, e.g. `/v2/servers/{server}/status`. */
  endpoint: string;
  /** Request URL with any credentials removed. */
  url: string;
}

/** Short machine-friendly reason, used in log lines and the `code` label of the request counter. */
export type WowzaErrorKind = 'auth' | 'http' | 'timeout' | 'too_large' | 'unparsable' | 'network' | 'tls' | 'aborted';

export abstract class WowzaError extends Error {
  abstract readonly kind: WowzaErrorKind;
  constructor(
    message: string,
    readonly site: CallSite,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class WowzaAuthError extends WowzaError {
  readonly kind = 'auth';
  constructor(site: CallSite, readonly username: string, detail: string) {
    super(`authentication failed for user "${username}" at ${site.url}: ${detail}`, site);
  }
}

/** What an error answer looked like: Wowza's JSON envelope, the Manager's web UI, another web page, or anything else. */
export type ErrorPage = 'wowza' | 'manager' | 'html' | 'other';

export class WowzaHttpError extends WowzaError {
  readonly kind = 'http';
  constructor(
    site: CallSite,
    readonly status: number,
    readonly wowzaMessage: string | undefined,
    /** Tells a missing object (Wowza's own 404) from a server that is not the REST API at all. */
    readonly page: ErrorPage = 'wowza',
  ) {
    super(`${site.endpoint} answered HTTP ${status}${wowzaMessage ? `: ${wowzaMessage}` : ''} (${site.url})`, site);
  }
}

export class WowzaTimeoutError extends WowzaError {
  readonly kind = 'timeout';
  constructor(
    site: CallSite,
    readonly timeoutMs: number,
    within = `within ${timeoutMs} ms`,
    /** The poll's deadline cut the request before its own timeout ran out (see heldBackFailure). */
    readonly cutByPollDeadline = false,
  ) {
    super(`${site.endpoint} did not answer ${within} (${site.url})`, site);
  }
}

export class WowzaTooLargeError extends WowzaError {
  readonly kind = 'too_large';
  constructor(site: CallSite, readonly limitBytes: number, what = 'response') {
    super(what === 'response' ? `${site.endpoint} response is larger than the ${limitBytes} byte limit (${site.url})` : `${site.endpoint}: the server's ${what} passed their ${limitBytes} byte budget (${site.url})`, site);
  }
}

export class WowzaUnparsableError extends WowzaError {
  readonly kind = 'unparsable';
  constructor(
    site: CallSite,
    detail: string,
    /** The body is WSE's own XML (the Accept header was dropped on the way): the REST API answered, unusably. */
    readonly restShaped = false,
  ) {
    super(`${site.endpoint} returned an unusable body: ${detail} (${site.url})`, site);
  }
}

/**
 * Whether a failed call was answered by the REST API itself (Wowza's JSON error envelope, or its XML when the Accept
 * header was dropped): a poll that meets such a failure, even one a shared walk met before it, heard the API answer.
 */
export function answeredAsRest(err: Error | undefined): boolean {
  if (err instanceof WowzaHttpError) return err.page === 'wowza';
  return err instanceof WowzaUnparsableError && err.restShaped;
}

export class WowzaNetworkError extends WowzaError {
  readonly kind: 'network' | 'tls';
  constructor(site: CallSite, readonly code: string | undefined, detail: string, cause?: unknown) {
    super(`cannot reach ${redactUrl(site.url)}: ${detail}${code ? ` (${code})` : ''}`, site, { cause });
    this.kind = code && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|HOSTNAME|ERR_TLS/i.test(code) ? 'tls' : 'network';
  }
}

export class WowzaAbortedError extends WowzaError {
  readonly kind = 'aborted';
  constructor(site: CallSite, why?: string) {
    super(`${site.endpoint} request was cancelled${why ? `: ${why}` : ''} (${site.url})`, site);
  }
}
