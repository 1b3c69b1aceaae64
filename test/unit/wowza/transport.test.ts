import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonDepthGuard } from '../../../src/wowza/transport.js';

/** The guard as first written, a byte at a time: what the faster one must agree with. */
function byteByByte(chunks: Uint8Array[], limit: number): number | undefined {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let k = 0; k < chunks.length; k++) {
    for (const c of chunks[k]!) {
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c) escaped = true;
        else if (c === 0x22) inString = false;
      } else if (c === 0x22) inString = true;
      else if (c === 0x5b || c === 0x7b) {
        if (++depth > limit) return k;
      } else if (c === 0x5d || c === 0x7d) depth--;
    }
  }
  return undefined;
}

/** The chunk at which the guard refuses the body, or undefined. */
function guarded(chunks: Uint8Array[], limit: number): number | undefined {
  const guard = new JsonDepthGuard(limit);
  for (let k = 0; k < chunks.length; k++) if (guard.exceeded(chunks[k]!)) return k;
  return undefined;
}

/** Bytes heavy in what matters to the guard: quotes, backslashes, brackets, braces. */
const jsonish = fc.array(fc.constantFrom(...'""\\\\[]{}[{a b,:1é'.split('')), { maxLength: 300 }).map((cs) => Buffer.from(cs.join('')));

function split(bytes: Buffer, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(from, c));
    from = c;
  }
  return out;
}

describe('JsonDepthGuard', () => {
  it('refuses at the same chunk as a byte-by-byte scan, however the bytes are split', () => {
    fc.assert(
      fc.property(jsonish, fc.array(fc.nat(), { maxLength: 6 }), fc.integer({ min: 1, max: 6 }), (bytes, cuts, limit) => {
        const chunks = split(bytes, cuts);
        expect(guarded(chunks, limit)).toBe(byteByByte(chunks, limit));
      }),
      { numRuns: 2000 },
    );
  });

  it('skips strings whole: brackets, escaped quotes and backslashes inside a string do not count', () => {
    const page = Buffer.from(JSON.stringify({ logLines: Array.from({ length: 500 }, (_, i) => `[{"nested ${i}": "\\\\ \\" [[[[{{{{"}]`) }));
    expect(guarded([page], 3)).toBeUndefined();
    expect(guarded(split(page, [1, 17, 4096, 9000]), 3)).toBeUndefined();
    expect(guarded([Buffer.from('{"a":[[[[1]]]]}')], 3)).toBe(0);
    expect(guarded([Buffer.from('{"a":"x\\\\'), Buffer.from('"'), Buffer.from(',"b":[[[[1]]]]}')], 3)).toBe(2);
  });
});
