import { promisify } from 'node:util';
import { constants, crc32, deflateRaw, gzip } from 'node:zlib';
import { Utf8Builder } from '../utf8-builder.js';

/**
 * zlib level of /metrics and /probe answers. Level 1 compresses megabytes of exposition text about three
 * times faster than the default 6 for a body ~10% larger: the scrape's latency matters more here.
 */
export const METRICS_GZIP_LEVEL = constants.Z_BEST_SPEED;

const deflateRawAsync = promisify(deflateRaw);
const gzipAsync = promisify(gzip);

/** Gzip member header (RFC 1952): deflate, no flags, no mtime, XFL 4 ("fastest"), OS 3 (Unix), as zlib writes it. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 3]);

/**
 * Text encoded once and reused by many responses, with its compressed form made on first demand (in
 * zlib's thread pool, once) and kept. Immutable: a change makes a new one.
 */
export class EncodedText {
  private deflated: Promise<Buffer> | undefined;
  private checksum: number | undefined;

  private constructor(readonly bytes: Buffer) {}

  /** Encodes the pieces straight into one buffer, without joining them into one string first. */
  static fromChunks(chunks: readonly string[]): EncodedText {
    const out = new Utf8Builder();
    for (const c of chunks) out.add(c);
    return new EncodedText(out.toBuffer(true));
  }

  /**
   * Raw deflate data ending in a sync flush: byte-aligned and not final, so another deflate stream can
   * follow it inside the same gzip member (it never refers back into this one).
   */
  deflate(): Promise<Buffer> {
    this.deflated ??= deflateRawAsync(this.bytes, { level: METRICS_GZIP_LEVEL, finishFlush: constants.Z_SYNC_FLUSH }).catch((err: unknown) => {
      this.deflated = undefined; // a failure must not stick to every later scrape
      throw err;
    });
    return this.deflated;
  }

  /** CRC-32 of the bytes, for the gzip trailer. */
  crc32(): number {
    this.checksum ??= crc32(this.bytes);
    return this.checksum;
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
  trailer.writeUInt32LE((head.bytes.length + tail.length) % 2 ** 32, 4);
  return Buffer.concat([GZIP_HEADER, body, rest, trailer]);
}

/** Gzip of a body made per request (/probe). */
export function gzipText(body: string): Promise<Buffer> {
  return gzipAsync(body, { level: METRICS_GZIP_LEVEL });
}
