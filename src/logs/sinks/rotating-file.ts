import { constants } from 'node:fs';
import { rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { makeDirectory, openCreating } from '../file-modes.js';

export interface RotatingFileOptions {
  path: string;
  /** The file is rotated before a write would take it past this size. */
  maxBytes: number;
  /** Rotated files kept (`path.1` newest ... `path.N` oldest); 0 keeps none. */
  maxFiles: number;
}

/**
 * An append-only file rotated by size, like logrotate's `size` + `rotate N`. Each append is synced to
 * disk before it resolves, so a caller may acknowledge what it wrote. Appends must not overlap.
 */
export class RotatingFile {
  private handle: FileHandle | undefined;
  private size = 0;

  constructor(private readonly options: RotatingFileOptions) {}

  get path(): string {
    return this.options.path;
  }

  async append(text: string | Buffer): Promise<void> {
    const bytes = typeof text === 'string' ? Buffer.byteLength(text, 'utf8') : text.length;
    const fh = await this.open();
    if (this.size > 0 && this.size + bytes > this.options.maxBytes) {
      await this.rotate();
      return this.append(text);
    }
    await fh.appendFile(text);
    await fh.datasync();
    this.size += bytes;
  }

  async close(): Promise<void> {
    const fh = this.handle;
    this.handle = undefined;
    await fh?.close();
  }

  private async open(): Promise<FileHandle> {
    if (this.handle) return this.handle;
    await makeDirectory(dirname(this.options.path));
    let fh: FileHandle;
    try {
      // Never through a symbolic link: one planted at the path would send the lines wherever it points.
      fh = await openCreating(this.options.path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new Error(`${this.options.path} is a symbolic link: refusing to write through it (point the setting at the file itself)`);
      throw err;
    }
    this.size = (await fh.stat()).size;
    this.handle = fh;
    return fh;
  }

  private async rotate(): Promise<void> {
    await this.close();
    const { path, maxFiles } = this.options;
    if (maxFiles <= 0) {
      await rm(path, { force: true });
      return;
    }
    await rm(`${path}.${maxFiles}`, { force: true });
    for (let i = maxFiles - 1; i >= 1; i--) {
      await rename(`${path}.${i}`, `${path}.${i + 1}`).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
    }
    await rename(path, `${path}.1`);
  }
}
