import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, link, lstat, open, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../../base/logger.js';
import { FILE_MODE, makeDirectory } from '../file-modes.js';

/** Where a follower stands in one log: the file (by identity) and the byte offset reading continues at. */
export interface LogPosition {
  /** Identity of the file: its `logStartDate` (or `#Start-Date`); empty when the server tells none. */
  fileId: string;
  offset: number;
  /** Fingerprint of the file's first record line, which tells apart files started within the same second. */
  head?: string;
  /** The `#Fields` in force at `offset`, for pages that arrive without a header. */
  fields?: string;
  /**
   * While `head` is unknown (no record read from the file yet): the fingerprint of the file read before it.
   * Files rotated within one second share a date, so this is what tells which of them the position is in.
   */
  prevHead?: string;
}

const Entry = z.object({
  server: z.string().min(1),
  log_type: z.string().min(1),
  file_id: z.string(),
  file_head: z.string().optional(),
  prev_file_head: z.string().optional(),
  offset: z.number().int().nonnegative(),
  fields: z.string().optional(),
});
const FileBody = z.object({ version: z.literal(1), positions: z.array(z.unknown()) });

const key = (server: string, logType: string) => `${server}\u0000${logType}`;

/** What a positions file on disk held, read and checked. */
type FileState = { kind: 'ok'; text: string; body: z.infer<typeof FileBody> } | { kind: 'missing' } | { kind: 'unreadable'; code: string } | { kind: 'corrupt'; reason: string };

async function readPositionsFile(path: string): Promise<FileState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    return code === 'ENOENT' ? { kind: 'missing' } : { kind: 'unreadable', code };
  }
  try {
    return { kind: 'ok', text, body: FileBody.parse(JSON.parse(text)) };
  } catch (err) {
    return { kind: 'corrupt', reason: err instanceof z.ZodError ? 'not a positions document (expected {"version":1,"positions":[...]})' : (err as Error).message };
  }
}

/** The file a store wrote last, to tell whether it is still that file (nothing truncated or replaced it since). */
interface Written {
  ino: number;
  size: number;
}

export interface PositionStoreOptions {
  /**
   * The positions file could not be used at start (corrupt, truncated, unreadable): `previous` when its previous
   * copy was taken instead, `none` when that could not be used either (logs then start at their start position).
   */
  onUnusable?: (fallback: 'previous' | 'none') => void;
}

/**
 * The positions file: one JSON document per exporter with an entry per server and log type. Written
 * atomically (temp file, fsync, rename), so a crash leaves the old or the new file, never half of one. Each
 * write keeps the file it replaces as `<path>.prev`: a file truncated or broken behind the exporter's back is
 * replaced by that copy at the next start, which re-sends some lines but loses none. Callers set a position only
 * once every sink acknowledged the lines before it.
 */
export class PositionStore {
  private readonly positions = new Map<string, { server: string; logType: string; pos: LogPosition }>();
  private version = 0;
  private savedVersion = 0;
  private saving: Promise<void> = Promise.resolve();
  /** The positions file as last written or read intact; undefined when there is no intact one to keep. */
  private written: Written | undefined;

  private constructor(
    readonly path: string,
    private readonly logger: Logger,
    private readonly options: PositionStoreOptions,
  ) {}

  /** Where the previous good copy of the positions file is kept. */
  get previousPath(): string {
    return `${this.path}.prev`;
  }

  /**
   * Loads the file; a missing file gives an empty store, a corrupt one its previous copy (or an empty store), with
   * a warning: never an error.
   */
  static async open(path: string, logger: Logger, options: PositionStoreOptions = {}): Promise<PositionStore> {
    const store = new PositionStore(path, logger, options);
    await store.load();
    return store;
  }

  private async load(): Promise<void> {
    const current = await readPositionsFile(this.path);
    if (current.kind === 'ok') {
      this.apply(current.body);
      this.written = await identify(this.path);
      return;
    }
    if (current.kind === 'missing') {
      // A removed file is how positions are reset: the previous copy is not brought back.
      this.logger.info({ path: this.path }, 'no positions file yet: every log starts at its configured start position');
      return;
    }
    const reason = current.kind === 'corrupt' ? current.reason : `cannot read it (${current.code})`;
    const kept = `${this.path}.corrupt`;
    if (current.kind === 'corrupt') await keepCopy(this.path, kept, false).catch(() => undefined);
    const previous = await readPositionsFile(this.previousPath);
    if (previous.kind === 'ok') {
      this.apply(previous.body);
      // Put back at once: a crash before the first save must find the same positions again, not the broken file.
      try {
        this.written = await writeAtomically(this.path, previous.text);
      } catch (err) {
        this.logger.warn({ path: this.path, error: (err as Error).message }, 'cannot put the previous copy of the positions file back yet; the next save writes it');
        this.version++;
      }
      this.logger.warn(
        { path: this.path, previous: this.previousPath, ...(current.kind === 'corrupt' ? { kept } : {}), reason },
        'positions file is unusable: resuming from its previous copy (lines read since are sent again; counted in wowza_log_positions_unusable_total)',
      );
      this.options.onUnusable?.('previous');
      return;
    }
    if (current.kind === 'corrupt') await rm(this.path, { force: true }).catch(() => undefined);
    this.logger.warn(
      { path: this.path, ...(current.kind === 'corrupt' ? { kept } : {}), reason, previous: this.previousPath, previous_state: previous.kind },
      current.kind === 'corrupt'
        ? 'positions file is corrupt: starting without saved positions (the bad file was kept aside; no usable previous copy)'
        : 'cannot read the positions file: starting without saved positions (no usable previous copy)',
    );
    this.options.onUnusable?.('none');
  }

  private apply(body: z.infer<typeof FileBody>): void {
    let skipped = 0;
    for (const raw of body.positions) {
      const e = Entry.safeParse(raw);
      if (!e.success) {
        skipped++;
        continue;
      }
      const pos: LogPosition = { fileId: e.data.file_id, offset: e.data.offset };
      if (e.data.file_head !== undefined) pos.head = e.data.file_head;
      if (e.data.fields !== undefined) pos.fields = e.data.fields;
      if (e.data.prev_file_head !== undefined) pos.prevHead = e.data.prev_file_head;
      this.positions.set(key(e.data.server, e.data.log_type), { server: e.data.server, logType: e.data.log_type, pos });
    }
    if (skipped > 0) this.logger.warn({ path: this.path, skipped }, 'ignored invalid entries in the positions file');
  }

  get(server: string, logType: string): LogPosition | undefined {
    const p = this.positions.get(key(server, logType))?.pos;
    return p ? { ...p } : undefined;
  }

  set(server: string, logType: string, pos: LogPosition): void {
    this.positions.set(key(server, logType), { server, logType, pos: { ...pos } });
    this.version++;
  }

  /** All entries, for tools and tests. */
  entries(): Array<{ server: string; logType: string; position: LogPosition }> {
    return [...this.positions.values()].map((e) => ({ server: e.server, logType: e.logType, position: { ...e.pos } }));
  }

  /** Writes the file when anything changed since the last write. Concurrent calls are serialized. */
  save(): Promise<void> {
    const run = this.saving.then(() => this.writeIfChanged());
    this.saving = run.catch(() => undefined);
    return run;
  }

  private async writeIfChanged(): Promise<void> {
    if (this.version === this.savedVersion) return;
    const version = this.version;
    const positions = [...this.positions.values()].map((e) => ({
      server: e.server,
      log_type: e.logType,
      file_id: e.pos.fileId,
      ...(e.pos.head !== undefined ? { file_head: e.pos.head } : {}),
      offset: e.pos.offset,
      ...(e.pos.fields !== undefined ? { fields: e.pos.fields } : {}),
      ...(e.pos.prevHead !== undefined ? { prev_file_head: e.pos.prevHead } : {}),
    }));
    const text = JSON.stringify({ version: 1, updated_at: new Date().toISOString(), positions }, null, 2) + '\n';
    // The file being replaced becomes the previous copy, unless something changed it since it was written (a
    // truncation): then the new file is the one kept.
    this.written = await writeAtomically(this.path, text, { previous: this.previousPath, ...(this.written ? { keepIf: this.written } : {}) });
    this.savedVersion = version;
  }
}

async function identify(path: string): Promise<Written | undefined> {
  try {
    const st = await lstat(path);
    return st.isFile() ? { ino: st.ino, size: st.size } : undefined;
  } catch {
    return undefined;
  }
}

function sameFile(a: Written | undefined, b: Written): boolean {
  return a !== undefined && a.ino === b.ino && a.size === b.size;
}

/** Directories made by writeAtomically already, so a save is not one more round trip to the file system. */
const madeDirs = new Set<string>();

/**
 * Replaces `path` with `text` so that readers (and a crash) see either the old or the new content. The new
 * content is on disk before the rename; the rename itself is not synced: after a power loss the file may
 * still hold the previous positions, which re-sends lines but never skips any.
 *
 * With `previous`, that path is made to hold the file being replaced when it is still `keepIf` (a hard link and a
 * rename, no second fsync), or else a copy of the new content; `path` itself is never missing. Returns what was
 * written.
 *
 * Positions are saved after every delivered batch, and the next batch waits for it. Each step is a round trip to
 * libuv's thread pool that also waits for a turn of a busy event loop (and, on two CPUs shared with a sink's gzip, for
 * a CPU), so the steps that do not depend on each other run side by side: the previous copy is made while the new
 * file is written, its identity is read while its bytes are written, its mode is set (when the umask changed it) while
 * it is synced, and it is closed while it is renamed. Four steps are in a row (open, write, sync, rename); nine were.
 */
export async function writeAtomically(path: string, text: string, options: { previous?: string; keepIf?: Written } = {}): Promise<Written> {
  const dir = dirname(path);
  if (!madeDirs.has(dir)) {
    await makeDirectory(dir);
    madeDirs.add(dir);
  }
  // A name no one can guess, created by us alone (O_EXCL), never through a link: a file or link planted beside the
  // positions file cannot be written through.
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
  const { previous, keepIf } = options;
  // The file being replaced may have gone or changed since it was written: the new content is kept then.
  const keeping = previous !== undefined && keepIf !== undefined ? keepIfUnchanged(path, previous, keepIf) : Promise.resolve(false);
  let synced: Synced;
  try {
    synced = await writeSynced(tmp, Buffer.from(text, 'utf8'), () => madeDirs.delete(dir));
  } catch (err) {
    await keeping;
    throw err;
  }
  try {
    const kept = await keeping;
    if (previous !== undefined && !kept) await keepCopy(tmp, previous, false);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  } finally {
    // Its bytes are synced: a close that fails now cannot lose them, and the rename does not need it closed.
    await synced.closing;
  }
  return synced.written;
}

/** A file written and synced, and its close under way. */
interface Synced {
  written: Written;
  /** Never rejects. */
  closing: Promise<void>;
}

/**
 * Creates `path` (which must not exist, and is never reached through a link) holding `bytes`, synced, with the mode
 * FILE_MODE whatever the umask; `onCreateFailed` runs when it cannot be created.
 */
async function writeSynced(path: string, bytes: Buffer, onCreateFailed: () => void): Promise<Synced> {
  let fh: FileHandle;
  try {
    fh = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, FILE_MODE);
  } catch (err) {
    onCreateFailed(); // the directory may have been removed behind our back: make it again next time
    throw err;
  }
  try {
    const identity = fh.stat();
    identity.catch(() => undefined); // awaited below; a write failure must not leave it unhandled
    let at = 0;
    while (at < bytes.length) at += (await fh.write(bytes, at)).bytesWritten;
    const { ino, mode } = await identity;
    // The umask can only have taken bits away from FILE_MODE; they are put back before anyone can see the file.
    await Promise.all([fh.datasync(), (mode & 0o777) === FILE_MODE ? undefined : fh.chmod(FILE_MODE)]);
    return { written: { ino, size: bytes.length }, closing: fh.close().catch(() => undefined) };
  } catch (err) {
    await fh.close().catch(() => undefined);
    await rm(path, { force: true }).catch(() => undefined);
    throw err;
  }
}

/** Makes `previous` a hard link to `path` when `path` is still the file `expected` describes; resolves whether it did. */
async function keepIfUnchanged(path: string, previous: string, expected: Written): Promise<boolean> {
  try {
    if (!sameFile(await identify(path), expected)) return false;
    await keepCopy(path, previous, true);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes `previous` hold `source` (through a new file of a name no one can guess, renamed over it: a link planted at
 * `previous` is replaced, never written through): a hard link when `share` (the file being replaced, which nothing writes again),
 * else (or where links fail) a copy synced like the file itself, so that a file truncated in place never takes its
 * previous copy with it.
 */
async function keepCopy(source: string, previous: string, share: boolean): Promise<void> {
  const staged = `${previous}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
  try {
    let linked = false;
    if (share) {
      try {
        await link(source, staged);
        linked = true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
      }
    }
    if (!linked) {
      await copyFile(source, staged, constants.COPYFILE_EXCL);
      const fh = await open(staged, constants.O_RDWR | constants.O_NOFOLLOW);
      try {
        await fh.datasync();
      } finally {
        await fh.close();
      }
    }
    await rename(staged, previous);
  } catch (err) {
    await rm(staged, { force: true }).catch(() => undefined);
    throw err;
  }
}
