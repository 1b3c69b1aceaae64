/**
 * Undoes Java's `URLEncoder.encode(name, "UTF-8")`, which the connectioncounts provider applies to every name it writes
 * (wowza-api.md: `294%2F294%2F294_content_lq.mp4` for `294/294/294_content_lq.mp4`, `cam+1` for `cam 1`): `+` is a
 * space and `%XX` a byte of the name's UTF-8. A `%` not followed by two hex digits stays as written (a server that did
 * not encode), and bytes that are not valid UTF-8 decode to U+FFFD: the result is always a string, never an error.
 */
export function decodeJavaUrl(text: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2b) bytes.push(0x20);
    else if (c === 0x25 && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      // Anything else as its own UTF-8 (a surrogate pair is one code point).
      const cp = text.codePointAt(i)!;
      if (cp > 0xffff) i++;
      bytes.push(...Buffer.from(String.fromCodePoint(cp), 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
