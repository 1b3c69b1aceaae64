import { z } from 'zod';
import { parseDuration } from './duration.js';

/*
 * Field types every configuration schema shares (the main one and its logs section), defined once.
 */

/** Durations as `15s`, `2m`, `500ms` (or a bare number of seconds), turned into milliseconds. */
export const Duration = z.union([z.string(), z.number()]).transform((v, ctx) => {
  try {
    return parseDuration(v);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

/** Sizes as `32MiB`, `1MB`, `512KiB` or a number of bytes. */
export const ByteSize = z.union([z.string(), z.number().int().nonnegative()]).transform((v, ctx) => {
  if (typeof v === 'number') return v;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(B|KB|KiB|MB|MiB|GB|GiB)?\s*$/i.exec(v);
  if (!m) {
    ctx.addIssue({ code: 'custom', message: `invalid size "${v}": use bytes or a unit like 512KiB, 32MiB` });
    return z.NEVER;
  }
  const unit = (m[2] ?? 'B').toLowerCase();
  const mult: Record<string, number> = { b: 1, kb: 1e3, kib: 1024, mb: 1e6, mib: 1024 ** 2, gb: 1e9, gib: 1024 ** 3 };
  return Math.round(Number(m[1]) * mult[unit]!);
});

export const Regex = z.string().superRefine((v, ctx) => {
  try {
    new RegExp(v);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `invalid regular expression: ${(err as Error).message}` });
  }
});
