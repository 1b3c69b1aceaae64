import type { z } from 'zod';
import { capLists } from './list-cap.js';

/** What reading a JSON answer gave: the validated value, or why it is not one. Plain data: it crosses threads. */
export type AnswerOutcome =
  | { ok: true; data: unknown; dropped: number }
  | { ok: false; problem: 'json'; bytes: number; head: string }
  | { ok: false; problem: 'schema'; at: string; message: string };

/** Characters of an unparsable body kept for its error message (scrubbed, then cut, by the caller). */
const HEAD_CHARS = 4096;

/**
 * Parses a JSON answer, cuts its lists to `maxItems` and validates it: the same steps on the event loop (small
 * answers) and on the parser's thread (big ones), so both give the same result.
 */
export function validateAnswer(body: Uint8Array, schema: z.ZodType, maxItems: number): AnswerOutcome {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'json', bytes: body.byteLength, head: text.slice(0, HEAD_CHARS) };
  }
  const dropped = capLists(json, maxItems);
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, problem: 'schema', at: issue.path.length > 0 ? issue.path.join('.') : '(root)', message: issue.message };
  }
  return { ok: true, data: parsed.data, dropped };
}
