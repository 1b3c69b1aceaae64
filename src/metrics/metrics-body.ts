import { promisify } from 'node:util';
import { constants, crc32, deflateRaw, gzip } from 'node:zlib';
import { runAtOnce, runInSlices } from '../base/time-slices.js';
import { Utf8Builder } from '../base/utf8-builder.js';

/**
 * zlib level of /metrics and /probe answers. Level 1 compresses megabytes of exposition text about three
 * times faster than the default 6 for a body ~10% larger: the scrape's latency matters more here.
 */
export const METRICS_GZIP_LEVEL = constants.Z_BEST_SPEED;

const deflateRawAsync = promisify(deflateRaw);
const gzipAsync = promisify(gzip);

/** Gzip member header (RFC 1952): deflate, no flags, no mtime, XFL 4 ("fastest"), OS 3 (Unix), as zlib writes it. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 3]);

/** Pieces shorter than this are copied together into one part; longer byte pieces are kept as they are. */
const COALESCE_BYTES = 16 * 1024;

/** Work between two yields of the event loop while a large body is put together: a scrape never holds it longer. */
const SLICE_MS = 4;

/**
 * Text encoded once and reused by many responses, with its compressed form made on first demand (in
 * zlib's thread pool, once) and kept. Immutable: a change makes a new one.
 *
 * The bytes are kept as parts, not joined: the long ones are views of the rendered sets' own buffers (which the
 * store holds anyway), so the exposition is not held twice; short ones are copied together so a response is a
 * few dozen writes, not thousands.
 */
export class EncodedText {
  private deflated: Promise<Buffer> | undefined;
  private checksum: number | undefined;

  /** Made by fromChunks (or its sliced form) only; `deflated`, when the deflate began while the parts were made. */
  constructor(
    readonly parts: readonly Uint8Array[],
    readonly length: number,
    deflated?: Promise<Buffer>,
  ) {
    if (deflated) this.keepDeflated(deflated);
  }

  /** Strings are encoded; byte pieces of 16 KB and more are kept as views, shorter ones copied together. */
  static fromChunks(chunks: readonly (string | Uint8Array)[]): EncodedText {
    return runAtOnce(coalesce(chunks));
  }

  /**
   * fromChunks handing the event loop back every few milliseconds: at a fleet's size (hundreds of thousands of
   * pieces, tens of megabytes) the copying takes hundreds of milliseconds, which health checks must not wait for.
   * With `deflate`, each piece is deflated (in zlib's threads) as soon as it is made, while the rest is put together.
   */
  static fromChunksInSlices(chunks: readonly (string | Uint8Array)[], deflate = false): Promise<EncodedText> {
    return runInSlices(coalesce(chunks, deflate ? new PieceDeflater() : undefined), SLICE_MS);
  }

  /** All of it in one buffer (a copy: for tests and tools, not for responses). */
  toBuffer(): Buffer {
    return Buffer.concat(this.parts, this.length);
  }

  /**
   * Raw deflate data ending in a sync flush: byte-aligned and not final, so another deflate stream can
   * follow it inside the same gzip member (it never refers back into this one).
   */
  deflate(): Promise<Buffer> {
    if (!this.deflated) {
      const deflater = new PieceDeflater();
      for (const p of this.parts) deflater.add(p);
      this.keepDeflated(deflater.finish());
    }
    return this.deflated!;
  }

  /**
   * Keeps a deflate for the scrapes to come, until it fails: a failure must not stick to every later scrape. The
   * handler also keeps a deflate made ahead of any gzip scrape (fromChunksInSlices) from failing unheard.
   */
  private keepDeflated(deflated: Promise<Buffer>): void {
    this.deflated = deflated;
    deflated.catch(() => {
      if (this.deflated === deflated) this.deflated = undefined;
    });
  }

  /** CRC-32 of the bytes, for the gzip trailer. */
  crc32(): number {
    if (this.checksum === undefined) {
      let c = 0;
      for (const p of this.parts) c = crc32(p, c);
      this.checksum = c;
    }
    return this.checksum;
  }
}

/**
 * A run of small pieces copied together ends at this size: each copy is a few milliseconds (a slice), and the gzip's
 * pieces are joined from a few such runs, a cheap copy of large blocks.
 */
const RUN_BYTES = 1024 * 1024;

/** The parts of fromChunks, pausing (yielding) every few thousand pieces and after each run; each part also to `deflater`. */
function* coalesce(chunks: readonly (string | Uint8Array)[], deflater?: PieceDeflater): Generator<void, EncodedText> {
  const parts: Uint8Array[] = [];
  const keep = (part: Uint8Array) => {
    parts.push(part);
    deflater?.add(part);
  };
  let run = new Utf8Builder();
  let length = 0;
  const flush = () => {
    if (run.byteLength === 0) return;
    keep(run.toBuffer(true));
    run = new Utf8Builder();
  };
  let count = 0;
  for (const c of chunks) {
    const n = typeof c === 'string' ? Buffer.byteLength(c, 'utf8') : c.length;
    if (n === 0) continue;
    length += n;
    if (typeof c !== 'string' && n >= COALESCE_BYTES) {
      flush();
      keep(c);
    } else {
      run.add(c);
      if (run.byteLength >= RUN_BYTES) {
        flush();
        yield;
      }
    }
    if (++count % 2048 === 0) yield;
  }
  flush();
  return new EncodedText(parts, length, deflater?.finish());
}

/**
 * Bytes of text deflated as one job of zlib's thread pool. Each job is one trip back through the event loop, which a
 * busy exporter (a fleet's polls) answers late: a 50 MB exposition sent to zlib in 16 KB pieces took over a minute
 * there, in 1 MiB pieces 10-15 s; in 8 MiB pieces two at a time it is a handful of trips. The pieces are
 * independent deflate streams, each ending in a sync flush, joined as they are (a piece never refers back into the one
 * before it): 8 MiB each, the cost in size is a few hundred bytes.
 */
const DEFLATE_PIECE = 8 * 1024 * 1024;

/** Pieces deflated at the same time: each holds a copy of its text until it is done. */
const PIECES_AT_ONCE = 2;

/**
 * Raw deflate of parts given in order, ending in a sync flush (see EncodedText.deflate): each piece of 8 MiB starts as
 * soon as it is complete (at most two at a time), so a scrape's gzip runs while the body is still being put together.
 */
class PieceDeflater {
  private readonly done: Promise<Buffer>[] = [];
  private readonly waiting: Array<() => void> = [];
  private running = 0;
  private piece: Uint8Array[] = [];
  private size = 0;

  add(part: Uint8Array): void {
    this.piece.push(part);
    this.size += part.length;
    if (this.size >= DEFLATE_PIECE) this.cut();
  }

  finish(): Promise<Buffer> {
    this.cut();
    // Every piece's promise is awaited here: one failing rejects this, and the others are not left unhandled.
    return Promise.all(this.done).then((out) => Buffer.concat(out));
  }

  private cut(): void {
    if (this.size === 0 && this.done.length > 0) return;
    const own = this.piece;
    const size = this.size;
    this.piece = [];
    this.size = 0;
    this.done.push(this.deflatePiece(own, size));
  }

  private async deflatePiece(own: Uint8Array[], size: number): Promise<Buffer> {
    if (this.running >= PIECES_AT_ONCE) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      // Output room of a quarter of the input: at the text's usual 20-40x, a piece's output never takes a second trip.
      return await deflateRawAsync(own.length === 1 ? own[0]! : Buffer.concat(own, size), { level: METRICS_GZIP_LEVEL, finishFlush: constants.Z_SYNC_FLUSH, chunkSize: Math.max(64 * 1024, size >> 2) });
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

/**
 * One gzip member of `head` followed by `tail`: head's cached deflate data, then tail deflated now (small),
 * then a trailer covering both. One member rather than two concatenated ones, so that clients that stop
 * at the first member's end still read everything.
 */
export async function gzipJoined(head: EncodedText, tail: Buffer): Promise<Buffer> {
  const [body, rest] = await Promise.all([head.deflate(), deflateRawAsync(tail, { level: METRICS_GZIP_LEVEL })]);
  const trailer = Buffer.allocUnsafe(8);
  // Node's crc32 of an empty buffer without storage answers 0, not the value it continues from.
  trailer.writeUInt32LE(tail.length > 0 ? crc32(tail, head.crc32()) : head.crc32(), 0);
  trailer.writeUInt32LE((head.length + tail.length) % 2 ** 32, 4);
  return Buffer.concat([GZIP_HEADER, body, rest, trailer]);
}

/** Gzip of a body made per request (/probe). */
export function gzipText(body: string): Promise<Buffer> {
  return gzipAsync(body, { level: METRICS_GZIP_LEVEL });
}
