import { readFileSync, statSync } from 'node:fs';
import { ConfigError } from './errors.js';

/**
 * Reads a secret from a file (one trailing newline removed). The file's content is never echoed in
 * errors. Calls `warn` when others may read the file, as a password readable by every user is a leak.
 */
export function readSecretFile(path: string, field: string, warn?: (msg: string, meta: object) => void): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(`${field}: cannot read ${path}${code ? ` (${code})` : ''}`);
  }
  try {
    if (process.platform !== 'win32' && (statSync(path).mode & 0o004) !== 0) {
      warn?.('secret file is readable by every user; chmod 600 it', { field, path });
    }
  } catch {
    // stat failing after a successful read is not worth failing over
  }
  const value = text.replace(/\r?\n$/, '');
  if (value === '') throw new ConfigError(`${field}: ${path} is empty`);
  return value;
}
