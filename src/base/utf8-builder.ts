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

/**
 * A growing UTF-8 buffer written in place: strings are encoded straight into it (no intermediate string, no
 * list of parts), and hot loops may write bytes themselves through `buf` and `pos` after `ensure`. One writer
 * is reused for many outputs; `take` copies what was written into a buffer of its own and starts over.
 */
export class Utf8Writer {
  buf: Buffer;
  pos = 0;

  constructor(initialBytes = 64 * 1024) {
    this.buf = Buffer.allocUnsafeSlow(Math.max(16, initialBytes));
  }

  /** Makes room for `bytes` more bytes after `pos`. */
  ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  /** Writes `text` as UTF-8 (lone surrogates as U+FFFD, as Buffer#write does). */
  string(text: string): void {
    this.ensure(text.length * 3);
    this.pos += this.buf.write(text, this.pos, 'utf8');
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  bytes(part: Uint8Array): void {
    this.ensure(part.length);
    this.buf.set(part, this.pos);
    this.pos += part.length;
  }

  /**
   * What was written, in a buffer with an ArrayBuffer of its own (transferable to another thread, never a
   * slice of Node's shared pool); the writer starts empty again, keeping its memory for the next output.
   * Memory that grew far beyond what outputs need is given back.
   */
  take(): Buffer {
    const out = Buffer.allocUnsafeSlow(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    if (this.buf.length > 8 * 1024 * 1024 && this.pos < this.buf.length / 8) this.buf = Buffer.allocUnsafeSlow(Math.max(64 * 1024, this.pos * 2));
    this.pos = 0;
    return out;
  }
}
