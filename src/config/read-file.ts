import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { ConfigError } from './errors.js';

export const MiB = 1024 * 1024;

/** The config file: a real one is a few kB; far more is a file given by mistake (issue 47). */
export const CONFIG_FILE_MAX_BYTES = 4 * MiB;
/** A target file: a generated fleet list of tens of thousands of targets fits several times over. */
export const TARGET_FILE_MAX_BYTES = 16 * MiB;
/** A password, token or secret file. */
export const SECRET_FILE_MAX_BYTES = 1 * MiB;
/** A PEM CA bundle (the whole system bundle is about 200 kB). */
export const CA_FILE_MAX_BYTES = 4 * MiB;

/** What a file that is not a regular one is, for the error. */
function kindOf(s: Stats): string {
  if (s.isDirectory()) return 'a directory';
  if (s.isFIFO()) return 'a FIFO (named pipe)';
  if (s.isCharacterDevice()) return 'a character device';
  if (s.isBlockDevice()) return 'a block device';
  if (s.isSocket()) return 'a socket';
  return 'not a regular file';
}

function cannotRead(field: string, path: string, err: unknown): ConfigError {
  return new ConfigError(`${field}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
}

function formatBytes(n: number): string {
  return n % MiB === 0 ? `${n / MiB} MiB` : `${n} bytes`;
}

function checkStats(s: Stats, path: string, field: string, maxBytes: number | undefined, what: string): void {
  if (!s.isFile()) throw new ConfigError(`${field}: ${path} is ${kindOf(s)}, not a regular file; give the path of ${what}`);
  if (maxBytes !== undefined && s.size > maxBytes) throw tooLarge(path, field, maxBytes, what);
}

function tooLarge(path: string, field: string, maxBytes: number, what: string): ConfigError {
  return new ConfigError(`${field}: ${path} is larger than ${formatBytes(maxBytes)}, the limit for ${what}`);
}

/**
 * Opens `path` for reading if it is a regular file (a symlink is followed; what it points to must be one). Devices,
 * FIFOs and sockets are refused on a stat before any open, as opening some of them blocks (a FIFO without a writer)
 * or acts; O_NONBLOCK and the fstat after the open cover a file swapped in between. Throws ConfigError naming `field`.
 */
function openRegular(path: string, field: string, maxBytes: number | undefined, what: string): { fd: number; stats: Stats } {
  try {
    checkStats(statSync(path), path, field, maxBytes, what);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw cannotRead(field, path, err);
  }
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0));
  } catch (err) {
    throw cannotRead(field, path, err);
  }
  try {
    const stats = fstatSync(fd);
    checkStats(stats, path, field, maxBytes, what);
    return { fd, stats };
  } catch (err) {
    closeSync(fd);
    if (err instanceof ConfigError) throw err;
    throw cannotRead(field, path, err);
  }
}

/**
 * The text of a regular file of at most `maxBytes`, read whole; `what` names the kind of file in errors ("a config
 * file"). Errors name `field` and `path`, never the content. The size is enforced while reading too, for a file
 * that grows, or reports no size (procfs), after the check.
 */
export function readRegularFile(path: string, field: string, maxBytes: number, what: string): { text: string; stats: Stats } {
  const { fd, stats } = openRegular(path, field, maxBytes, what);
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, maxBytes + 1 - total));
      let n: number;
      try {
        n = readSync(fd, chunk, 0, chunk.length, null);
      } catch (err) {
        throw cannotRead(field, path, err);
      }
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw tooLarge(path, field, maxBytes, what);
      chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    }
    return { text: Buffer.concat(chunks, total).toString('utf8'), stats };
  } finally {
    closeSync(fd);
  }
}

/** Checks that `path` is a regular file this process can open (and, with `maxBytes`, not larger), without reading it. */
export function checkRegularFile(path: string, field: string, what: string, maxBytes?: number): void {
  closeSync(openRegular(path, field, maxBytes, what).fd);
}
