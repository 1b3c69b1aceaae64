/**
 * Failures of Wowza Video API calls. Each message says which call failed and why, in one line a person can
 * act on. Messages are built from text the client has already scrubbed of the token.
 */

/** Short machine-friendly reason, for logs and the `code` label of request counters. */
export type VideoErrorKind = 'http' | 'rate_limited' | 'timeout' | 'network' | 'unparsable' | 'too_large' | 'aborted' | 'input';

export abstract class VideoError extends Error {
  abstract readonly kind: VideoErrorKind;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The fields of the API's error envelope `{"meta":{status,code,title,message,description,links}}` that were present. */
export interface VideoErrorMeta {
  status?: number;
  code?: string;
  title?: string;
  message?: string;
  description?: string;
}

const HINTS: Record<number, string> = {
  401: 'the API token was refused (expired, revoked or not a Wowza Video token?)',
  403: 'the API token is not allowed to do this',
  410: 'the schedule has been deleted',
};

function describe(call: string, status: number, meta: VideoErrorMeta, bodyText: string | undefined, hint: string | undefined): string {
  let text = `${call}: HTTP ${status}`;
  if (meta.code) text += ` ${meta.code}`;
  if (meta.title) text += ` (${meta.title})`;
  const details = [meta.message, meta.description].filter((d): d is string => !!d && d.trim() !== '');
  const unique = details.filter((d, i) => details.indexOf(d) === i);
  if (unique.length > 0) text += `: ${unique.join(' - ')}`;
  else if (bodyText) text += `: ${bodyText}`;
  if (hint) text += `; ${hint}`;
  return text;
}

/** The API answered with an error status. */
export class VideoHttpError extends VideoError {
  readonly kind: 'http' | 'rate_limited' = 'http';
  constructor(
    /** `METHOD /path`, e.g. `PATCH /schedules/abc123`. */
    readonly call: string,
    readonly status: number,
    readonly meta: VideoErrorMeta,
    /** A short, tag-free excerpt of a body that was not the JSON envelope. */
    readonly bodyText?: string,
    hint: string | undefined = HINTS[status],
  ) {
    super(describe(call, status, meta, bodyText, hint));
  }
}

/** Still HTTP 429 after the allowed retries, or the API asked for a longer wait than the client allows. */
export class VideoRateLimitError extends VideoHttpError {
  override readonly kind = 'rate_limited';
  constructor(call: string, meta: VideoErrorMeta, bodyText: string | undefined, reason: string) {
    super(call, 429, meta, bodyText, `rate limited by Wowza Video: ${reason}`);
  }
}

export class VideoTimeoutError extends VideoError {
  readonly kind = 'timeout';
  constructor(readonly call: string, readonly timeoutMs: number) {
    super(`${call}: no answer within ${timeoutMs} ms`);
  }
}

export class VideoNetworkError extends VideoError {
  readonly kind = 'network';
  constructor(readonly call: string, origin: string, detail: string, cause?: unknown) {
    super(`${call}: cannot reach ${origin}: ${detail}`, { cause });
  }
}

export class VideoUnparsableError extends VideoError {
  readonly kind = 'unparsable';
  constructor(
    readonly call: string,
    detail: string,
    /** The HTTP status of the answer that could not be read, when there was one (a 2xx: the call took effect). */
    readonly status?: number,
  ) {
    super(`${call}: unexpected response: ${detail}`);
  }
}

export class VideoTooLargeError extends VideoError {
  readonly kind = 'too_large';
  constructor(readonly call: string, readonly limitBytes: number) {
    super(`${call}: response is larger than the ${limitBytes} byte limit`);
  }
}

export class VideoAbortedError extends VideoError {
  readonly kind = 'aborted';
  constructor(readonly call: string) {
    super(`${call}: cancelled`);
  }
}

/** One thing wrong with a request the caller asked for; `field` is the API field name. */
export interface VideoInputIssue {
  field: string;
  message: string;
}

/** The request was refused before anything was sent. */
export class VideoInputError extends VideoError {
  readonly kind = 'input';
  constructor(readonly issues: readonly VideoInputIssue[]) {
    super(`invalid schedule update: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`);
  }
}
