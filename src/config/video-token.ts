import { ConfigError } from './errors.js';
import { readSecretFile } from './secrets.js';

export const VIDEO_TOKEN_ENV = 'WOWZA_VIDEO_TOKEN';

/** A bearer token is one run of visible ASCII; anything else is a wrong file, and would break the header. */
export function isUsableToken(token: string): boolean {
  return /^[\x21-\x7e]+$/.test(token);
}

export interface VideoTokenSource {
  /** Path given with `--video.token-file` (wins over the environment). */
  tokenFile?: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Told when the token file is readable by every user. */
  warn?: (msg: string, meta: object) => void;
}

/**
 * The Wowza Video API token from a file or `WOWZA_VIDEO_TOKEN`; never from a flag, as flags end up in
 * shell history and process lists. Throws ConfigError (never quoting the token) when none is usable.
 */
export function resolveVideoToken(source: VideoTokenSource): string {
  let token: string;
  let field: string;
  if (source.tokenFile !== undefined && source.tokenFile !== '') {
    field = '--video.token-file';
    token = readSecretFile(source.tokenFile, field, source.warn).trim();
  } else {
    field = VIDEO_TOKEN_ENV;
    token = (source.env[VIDEO_TOKEN_ENV] ?? '').trim();
    if (token === '') throw new ConfigError(`no Wowza Video API token: pass --video.token-file <file> or set ${VIDEO_TOKEN_ENV}`);
  }
  if (!isUsableToken(token)) {
    throw new ConfigError(`${field}: the token contains whitespace or control characters; expected the JWT access token alone`);
  }
  return token;
}
