import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../logger.js';

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

/**
 * The positions file: one JSON document per exporter with an entry per server and log type. Written
 * atomically (temp file, fsync, rename, directory fsync), so a crash leaves the old or the new file,
 * never half of one. Callers set a position only once every sink acknowledged the lines before it.
 */
export class PositionStore {
  private readonly positions = new Map<string, { server: string; logType: string; pos: LogPosition }>();
  private version = 0;
  private savedVersion = 0;
  private saving: Promise<void> = Promise.resolve();

  private constructor(
    readonly path: string,
    private readonly logger: Logger,
  ) {}

  /** Loads the file; a missing or corrupt file gives an empty store (and a warning), never an error. */
  static async open(path: string, logger: Logger): Promise<PositionStore> {
    const store = new PositionStore(path, logger);
    await store.load();
    return store;
  }

  private async load(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        this.logger.info({ path: this.path }, 'no positions file yet: every log starts at its configured start position');
      } else {
        this.logger.warn({ path: this.path, code }, 'cannot read the positions file: starting without saved positions');
      }
      return;
    }
    let body: z.infer<typeof FileBody>;
    try {
      body = FileBody.parse(JSON.parse(text));
    } catch (err) {
      const reason = err instanceof z.ZodError ? 'not a positions document (expected {"version":1,"positions":[...]})' : (err as Error).message;
      const kept = `${this.path}.corrupt`;
      await rename(this.path, kept).catch(() => undefined);
      this.logger.warn({ path: this.path, kept, reason }, 'positions file is corrupt: starting without saved positions (the bad file was kept aside)');
      return;
    }
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
    await writeAtomically(this.path, text);
    this.savedVersion = version;
  }
}

/** Directories made by writeAtomically already, so a save is not one more round trip to the file system. */
const madeDirs = new Set<string>();

/**
 * Replaces `path` with `text` so that readers (and a crash) see either the old or the new content. The new
 * content is on disk before the rename; the rename itself is not synced: after a power loss the file may
 * still hold the previous positions, which re-sends lines but never skips any. Positions are saved after
 * every delivered batch, so each round trip here is time the pipeline waits.
 */
export async function writeAtomically(path: string, text: string): Promise<void> {
  const dir = dirname(path);
  if (!madeDirs.has(dir)) {
    await mkdir(dir, { recursive: true });
    madeDirs.add(dir);
  }
  // A name no one can guess, created by us alone (O_EXCL), never through a link: a file or link planted beside the
  // positions file cannot be written through.
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
  let fh;
  try {
    fh = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  } catch (err) {
    madeDirs.delete(dir); // removed behind our back: make it again next time
    throw err;
  }
  try {
    await fh.writeFile(text, 'utf8');
    await fh.datasync();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}
