import { randomBytes } from 'node:crypto';
import { closeSync, constants, copyFileSync, fchmodSync, fdatasyncSync, fstatSync, linkSync, lstatSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { FILE_MODE } from '../file-modes.js';

/**
 * Replacing a file atomically, in blocking calls: they run on a thread of their own (atomic-file-thread.ts), where a
 * save of the positions after each batch is one hand-off from the event loop instead of a turn of it per step.
 */

/** The file last written, to tell whether it is still that file (nothing truncated or replaced it since). */
export interface Written {
  ino: number;
  size: number;
}

export interface ReplaceOptions {
  /** Made to hold the file being replaced (or, when that is no longer `keepIf`, the new content). */
  previous?: string;
  keepIf?: Written;
}

/** A name beside `path` no one can guess. */
function tempName(path: string): string {
  return `${path}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
}

/**
 * Replaces `path` with `text` so that readers (and a crash) see either the old or the new content. The new content
 * is on disk before the rename; the rename itself is not synced: after a power loss the file may still hold the
 * previous content, which for positions re-sends lines but never skips any.
 *
 * With `previous`, that path is made to hold the file being replaced when it is still `keepIf` (a hard link and a
 * rename, no second fsync), or else a copy of the new content; `path` itself is never missing. Returns what was
 * written.
 */
export function replaceFileSync(path: string, text: string, options: ReplaceOptions = {}): Written {
  const { previous, keepIf } = options;
  // The file being replaced may have gone or changed since it was written: the new content is kept then.
  const kept = previous !== undefined && keepIf !== undefined && keepIfUnchanged(path, previous, keepIf);
  // Created by us alone (O_EXCL), never through a link: a file or link planted beside `path` cannot be written through.
  const tmp = tempName(path);
  const bytes = Buffer.from(text, 'utf8');
  const written = writeSynced(tmp, bytes);
  try {
    if (previous !== undefined && !kept) keepCopySync(tmp, previous, false);
    renameSync(tmp, path);
  } catch (err) {
    removeQuietly(tmp);
    throw err;
  }
  return written;
}

/** Removes a file of ours after a failure; a failure to remove it must not hide the one being reported. */
function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // left behind: its name is ours alone, and nothing reads it
  }
}

/** Creates `path` (which must not exist, and is never reached through a link) holding `bytes`, synced, mode FILE_MODE. */
function writeSynced(path: string, bytes: Buffer): Written {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, FILE_MODE);
  // Closed once only, even when the close fails: another thread of the process may get the same number at once.
  let open = true;
  try {
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
    const { ino, mode } = fstatSync(fd);
    // The umask can only have taken bits away from FILE_MODE; they are put back before anyone can see the file.
    if ((mode & 0o777) !== FILE_MODE) fchmodSync(fd, FILE_MODE);
    fdatasyncSync(fd);
    open = false;
    closeSync(fd);
    return { ino, size: bytes.length };
  } catch (err) {
    if (open) {
      try {
        closeSync(fd);
      } catch {
        // the failure being reported is the one that matters
      }
    }
    removeQuietly(path);
    throw err;
  }
}

/** Makes `previous` a hard link to `path` when `path` is still the file `expected` describes; whether it did. */
function keepIfUnchanged(path: string, previous: string, expected: Written): boolean {
  try {
    const st = lstatSync(path);
    if (!st.isFile() || st.ino !== expected.ino || st.size !== expected.size) return false;
    keepCopySync(path, previous, true);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes `previous` hold `source` (through a new file of a name no one can guess, renamed over it: a link planted at
 * `previous` is replaced, never written through): a hard link when `share` (the file being replaced, which nothing
 * writes again), else (or where links fail) a copy synced like the file itself, so that a file truncated in place
 * never takes its previous copy with it.
 */
export function keepCopySync(source: string, previous: string, share: boolean): void {
  const staged = tempName(previous);
  try {
    let linked = false;
    if (share) {
      try {
        linkSync(source, staged);
        linked = true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
      }
    }
    if (!linked) {
      copyFileSync(source, staged, constants.COPYFILE_EXCL);
      const fd = openSync(staged, constants.O_RDWR | constants.O_NOFOLLOW);
      try {
        fdatasyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    renameSync(staged, previous);
  } catch (err) {
    removeQuietly(staged);
    throw err;
  }
}
