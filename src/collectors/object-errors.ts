import type { Logger } from '../logger.js';
import { WowzaError } from '../wowza/errors.js';

/**
 * The reason label of a failure: the error kind of the REST client (`http`, `timeout`, `unparsable`...) or of the
 * Wowza Video client (`http`, `rate_limited`...), else `error`.
 */
export function errorReason(err: Error): string {
  if (err instanceof WowzaError) return err.kind;
  const kind = (err as { kind?: unknown }).kind;
  return typeof kind === 'string' && /^[a-z_]{1,32}$/.test(kind) ? kind : 'error';
}

/** What the objects of one poll did, for the status page: "N of M objects failed" and the last reason. */
export interface ObjectSummary {
  total: number;
  failed: number;
  lastReason?: string;
  lastError?: string;
}

/** One poll's view of its objects (streams, vhosts, applications): each read either answered or failed. */
export interface ObjectOutcomes {
  ok(object: string): void;
  failed(object: string, err: Error): void;
  /** The poll read every object: `total` of them (answered, failed or vanished). */
  finish(total: number): void;
  summary(): ObjectSummary | undefined;
}

/**
 * Per server and collector: which objects are failing now, so a failure is logged when an object starts failing or
 * fails for another reason, and its recovery once, not every cycle. Objects that left the server are forgotten with
 * the poll that no longer lists them.
 */
export class ObjectErrorLog {
  private failing = new Map<string, string>();

  constructor(private readonly count: (reason: string) => void) {}

  forPoll(log: Logger): ObjectOutcomes {
    const seen = new Set<string>();
    let failed = 0;
    let last: { reason: string; error: string } | undefined;
    let done: ObjectSummary | undefined;
    return {
      ok: (object) => {
        seen.add(object);
        if (this.failing.delete(object)) log.info({ object }, 'object answers again');
      },
      failed: (object, err) => {
        seen.add(object);
        failed++;
        const reason = errorReason(err);
        last = { reason, error: err.message };
        this.count(reason);
        if (this.failing.get(object) === reason) return;
        this.failing.set(object, reason);
        log.warn({ object, reason, err: err.message }, 'object failed: left out of this poll, the other objects stay');
      },
      finish: (total) => {
        for (const object of this.failing.keys()) if (!seen.has(object)) this.failing.delete(object);
        done = { total, failed, ...(last ? { lastReason: last.reason, lastError: last.error } : {}) };
      },
      summary: () => done,
    };
  }
}

/** For polls that keep no history (a probe, doctor): counts nothing, logs nothing. */
export function untrackedObjects(): ObjectOutcomes {
  let done: ObjectSummary | undefined;
  let failed = 0;
  return {
    ok: () => undefined,
    failed: () => void failed++,
    finish: (total) => void (done = { total, failed }),
    summary: () => done,
  };
}
