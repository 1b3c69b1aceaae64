import type { z } from 'zod';
import { OnDemandThread } from '../base/on-demand-thread.js';
import { assembleValue, type SlicedValue } from './answer-slices.js';
import { validateAnswer, type AnswerOutcome } from './answer-validation.js';
import { LIST_ANSWERS } from './schemas.js';

/**
 * Answers at least this big are parsed on a thread of their own. Parsing and validating JSON costs about 15 ms a
 * megabyte on the event loop, which also answers /metrics and the health checks: a 32 MB list held it for over a
 * second (6 s with its validation), long enough for a liveness probe to time out. Smaller answers, nearly all of
 * them, cost less than the trip to the thread.
 */
export const THREAD_MIN_BYTES = 512 * 1024;

/**
 * Heap of the parser's thread. A 32 MB answer needs about 200 MB to parse and validate; one that needs more than this
 * ends the thread (and the answer is refused) instead of growing the process without bound.
 */
const THREAD_HEAP_MB = 512;

/** The thread stops after this long without work: most servers never send an answer big enough to need it. */
const IDLE_MS = 30_000;

/**
 * After an answer this big the thread stops as soon as it has nothing queued: its heap holds what parsing left (the
 * text, the tree, the slices) until V8 collects it, which it does lazily below the heap limit, and the next poll's
 * parse piled onto that garbage (a peak of 400 MB and more at 32 MB lists every 5 s). A new thread starts in tens of
 * milliseconds, against hundreds for parsing such an answer.
 */
const RESTART_AFTER_BYTES = 8 * 1024 * 1024;

export interface ParseRequest {
  id: number;
  body: Uint8Array;
  schema: string;
  maxItems: number;
}

export type ParseResponse =
  | { id: number; ok: true; dropped: number; sliced: SlicedValue }
  | { id: number; ok: false; outcome: AnswerOutcome }
  | { id: number; ok: false; error: string };

/** The parser's thread died on an answer (out of its heap, most likely): the answer is refused, never retried inline. */
export class ParserThreadError extends Error {}

const NAMES = new Map<z.ZodType, string>(Object.entries(LIST_ANSWERS).map(([name, schema]) => [schema, name]));

/**
 * Parses and validates JSON answers: small ones on the event loop, big ones of a known list schema on one thread
 * shared by every server. The thread's result comes back in slices (answer-slices.ts), so neither the parse nor the
 * copy back holds the event loop for long.
 */
export class AnswerParser {
  private readonly thread: OnDemandThread<ParseRequest, ParseResponse> | undefined;

  constructor(url: URL = new URL('./answer-worker.js', import.meta.url)) {
    // Run from TypeScript sources (unit tests) there is no compiled thread: every answer is parsed on the event loop.
    this.thread = OnDemandThread.ifCompiled({
      url,
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
      idleMs: IDLE_MS,
      failure: ({ error, exitCode }) =>
        new ParserThreadError(
          error === undefined
            ? `the parser's thread exited with code ${exitCode}`
            : error.code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? `parsing it needed more than the parser's ${THREAD_HEAP_MB} MB`
              : `the parser's thread failed: ${error.message}`,
        ),
    });
  }

  /** Whether an answer of this size and schema goes to the thread. */
  usesThread(bytes: number, schema: z.ZodType): boolean {
    return this.thread !== undefined && bytes >= THREAD_MIN_BYTES && NAMES.has(schema);
  }

  async parse(body: Buffer, schema: z.ZodType, maxItems: number): Promise<AnswerOutcome> {
    if (!this.usesThread(body.length, schema)) return validateAnswer(body, schema, maxItems);
    // Moved, not copied, when the body owns its memory (a body joined from chunks does): the caller is done with it.
    const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
    const bytes = own ? body : Uint8Array.prototype.slice.call(body);
    const request = { body: bytes, schema: NAMES.get(schema)!, maxItems };
    // A thread that parsed a big answer is stopped once it has nothing queued (RESTART_AFTER_BYTES).
    const response = await this.thread!.request(request, [bytes.buffer as ArrayBuffer], body.length >= RESTART_AFTER_BYTES);
    if (!response.ok) {
      if ('error' in response) throw new Error(response.error);
      return response.outcome;
    }
    return { ok: true, data: await assembleValue(response.sliced), dropped: response.dropped };
  }

  async close(): Promise<void> {
    await this.thread?.close(new ParserThreadError('the exporter is stopping'));
  }
}

let shared: AnswerParser | undefined;

/** The process's parser: one thread for every server's big answers. */
export function answerParser(): AnswerParser {
  shared ??= new AnswerParser();
  return shared;
}
