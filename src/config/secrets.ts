import { ConfigError } from './errors.js';
import { readRegularFile, SECRET_FILE_MAX_BYTES } from './read-file.js';

/**
 * Reads a secret from a file (one trailing newline removed). The file's content is never echoed in
 * errors. Calls `warn` when others may read the file, as a password readable by every user is a leak.
 */
export function readSecretFile(path: string, field: string, warn?: (msg: string, meta: object) => void): string {
  const { text, stats } = readRegularFile(path, field, SECRET_FILE_MAX_BYTES, 'a secret file');
  if (process.platform !== 'win32' && (stats.mode & 0o004) !== 0) {
    warn?.('secret file is readable by every user; chmod 600 it', { field, path });
  }
  const value = text.replace(/\r?\n$/, '');
  if (value === '') throw new ConfigError(`${field}: ${path} is empty`);
  return value;
}
