import { lstat, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../../base/logger.js';
import { makeDirectory } from '../file-modes.js';
import type { ReplaceOptions, Written } from './atomic-file.js';
import { AtomicFileThread } from './atomic-file-thread.js';

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
    if (current.kind === 'corrupt') await files.keepCopy(this.path, kept, false).catch(() => undefined);
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

/** Directories made by writeAtomically already, so a save is not one more round trip to the file system. */
const madeDirs = new Set<string>();

/** Where the blocking file operations of every positions file run. */
const files = new AtomicFileThread();

/**
 * Replaces `path` with `text` atomically (replaceFileSync, on its own thread), making its directory first. With
 * `previous`, that path keeps the file being replaced. Returns what was written.
 *
 * Positions are saved after every delivered batch, and the next batch waits for it: one hand-off to the file thread,
 * not the nine steps (four in a row) of the same save done with promises, each waiting for a turn of a busy event loop.
 */
export async function writeAtomically(path: string, text: string, options: ReplaceOptions = {}): Promise<Written> {
  const dir = dirname(path);
  if (!madeDirs.has(dir)) {
    await makeDirectory(dir);
    madeDirs.add(dir);
  }
  try {
    return await files.replace(path, text, options);
  } catch (err) {
    madeDirs.delete(dir); // the directory may have been removed behind our back: make it again next time
    throw err;
  }
}
