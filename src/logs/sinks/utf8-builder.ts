/**
 * Collects strings and encodes them into one UTF-8 buffer, each string on its own. A batch built as one
 * long string and encoded at the end costs ten times as much: a single line with a character beyond
 * Latin-1 makes the whole joined string two-byte, the slow case of the encoder, and flattening the joined
 * string copies it once more.
 */
export class Utf8Builder {
  private readonly parts: string[] = [];
  private bytes = 0;

  add(text: string): this {
    this.parts.push(text);
    this.bytes += Buffer.byteLength(text, 'utf8');
    return this;
  }

  get byteLength(): number {
    return this.bytes;
  }

  toBuffer(): Buffer {
    const out = Buffer.allocUnsafe(this.bytes);
    let at = 0;
    for (const part of this.parts) at += out.write(part, at, 'utf8');
    return out;
  }
}
