import { deserialize, serialize } from 'node:v8';

/**
 * A validated answer in pieces, to cross from the parser's thread to the event loop: the value with its long arrays
 * emptied, and those arrays' items in slices. The event loop rebuilds it a slice at a time, so a 100,000-item list is
 * a few hundred short pauses rather than one long one (a whole list cloned at once took longer than its parse).
 */
export interface SlicedValue {
  skeleton: Uint8Array;
  slices: Array<{ path: Array<string | number>; bytes: Uint8Array }>;
}

/** Items in one slice: a few milliseconds to rebuild on the event loop at the most. */
export const SLICE_ITEMS = 1000;

/** Cuts `value` (consumed: its long arrays are emptied) into a skeleton and slices. */
export function sliceValue(value: unknown): SlicedValue {
  const slices: SlicedValue['slices'] = [];
  const visit = (v: unknown, path: Array<string | number>): void => {
    if (v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      if (v.length > SLICE_ITEMS) {
        const items = v.splice(0, v.length);
        for (let i = 0; i < items.length; i += SLICE_ITEMS) slices.push({ path, bytes: serialize(items.slice(i, i + SLICE_ITEMS)) });
        return;
      }
      v.forEach((item, i) => visit(item, [...path, i]));
      return;
    }
    for (const key in v) visit((v as Record<string, unknown>)[key], [...path, key]);
  };
  visit(value, []);
  return { skeleton: serialize(value), slices };
}

/** The buffers of a sliced value that can move to another thread without a copy. */
export function transferables(s: SlicedValue): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const b of [s.skeleton, ...s.slices.map((x) => x.bytes)]) {
    if (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer) out.add(b.buffer);
  }
  return [...out];
}

/** Rebuilds a sliced value, handing the event loop back between slices after `sliceMs`. */
export async function assembleValue(s: SlicedValue, sliceMs = 4): Promise<unknown> {
  const value: unknown = deserialize(s.skeleton);
  let started = performance.now();
  for (const { path, bytes } of s.slices) {
    if (performance.now() - started >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve));
      started = performance.now();
    }
    let target = value as Record<string | number, unknown>;
    for (const key of path) target = target[key] as Record<string | number, unknown>;
    const items = deserialize(bytes) as unknown[];
    for (const item of items) (target as unknown as unknown[]).push(item);
  }
  return value;
}
