import { constants } from 'node:fs';
import { chmod, mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * The modes of what the log pipeline creates (positions, sink and dead-letter files, their directories). The mode
 * given to mkdir and open is masked by the umask, so a process started under umask 000 would make them 0777 and
 * 0666: the modes are set again once created. Files and directories that already exist keep theirs (the operator's
 * choice).
 */
export const DIR_MODE = 0o750;
export const FILE_MODE = 0o640;

/** `mkdir -p` whose new directories get {@link DIR_MODE} whatever the umask. */
export async function makeDirectory(path: string): Promise<void> {
  const first = await mkdir(path, { recursive: true, mode: DIR_MODE });
  if (first === undefined) return; // it existed: nothing created, nothing to set
  // mkdir names the topmost directory it created; every one from there down to `path` is new.
  const top = resolve(first);
  const made: string[] = [];
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    made.push(dir);
    if (dir === top || dirname(dir) === dir) break;
  }
  for (const dir of made.reverse()) await chmod(dir, DIR_MODE);
}

/**
 * Opens `path` with `flags` (which hold O_CREAT), never through a symbolic link; when this call created the file it
 * gets `mode` whatever the umask. A file that existed keeps its mode.
 */
export async function openCreating(path: string, flags: number, mode: number = FILE_MODE): Promise<FileHandle> {
  const nofollow = flags | constants.O_NOFOLLOW;
  for (let attempt = 0; ; attempt++) {
    let fh: FileHandle;
    try {
      fh = await open(path, nofollow | constants.O_EXCL, mode);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || (flags & constants.O_EXCL) !== 0) throw err;
      try {
        return await open(path, nofollow & ~constants.O_CREAT, mode);
      } catch (again) {
        // Removed between the two opens (a rotation by another tool): create it after all, once more.
        if ((again as NodeJS.ErrnoException).code === 'ENOENT' && attempt === 0) continue;
        throw again;
      }
    }
    try {
      await fh.chmod(mode);
    } catch (err) {
      await fh.close().catch(() => undefined);
      throw err;
    }
    return fh;
  }
}
