/**
 * Collects strings and bytes and writes them into one buffer, each string encoded on its own. A batch
 * built as one long string and encoded at the end costs ten times as much: a single line with a character
 * beyond Latin-1 makes the whole joined string two-byte, the slow case of the encoder, and flattening the
 * joined string copies it once more.
 */
export class Utf8Builder {
  private readonly parts: Array<string | Uint8Array> = [];
  private bytes = 0;

  add(part: string | Uint8Array): this {
    this.parts.push(part);
    this.bytes += typeof part === 'string' ? Buffer.byteLength(part, 'utf8') : part.length;
    return this;
  }

  /** Bytes added so far: where the next part starts. */
  get byteLength(): number {
    return this.bytes;
  }

  /**
   * The bytes; `transferable` gives them an ArrayBuffer of their own (not a slice of Node's shared pool), which
   * can move to another thread or be kept long without pinning the pool.
   */
  toBuffer(transferable = false): Buffer {
    const out = transferable ? Buffer.allocUnsafeSlow(this.bytes) : Buffer.allocUnsafe(this.bytes);
    let at = 0;
    for (const part of this.parts) {
      if (typeof part === 'string') at += out.write(part, at, 'utf8');
      else {
        out.set(part, at);
        at += part.length;
      }
    }
    return out;
  }
}
