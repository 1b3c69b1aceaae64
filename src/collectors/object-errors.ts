import type { Logger } from '../base/logger.js';
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
  /**
   * Logs what changed in this poll, once, after its server's state is known: `serverDown` when the server's own line
   * says it (it was not reached), so objects failing for that are not said one by one, nor when they answer again.
   */
  say(serverDown: boolean): void;
}

/** Reasons that are the server's, not an object's: while its server is down, its own line says them. */
const SERVER_REASONS: ReadonlySet<string> = new Set(['network', 'tls', 'auth', 'timeout', 'aborted']);

/** Object names a line gives as examples of many. */
const EXAMPLES = 5;

/**
 * A request the exporter's own limits (the request budget, a concurrency slot) held back until its poll's deadline
 * (request-pacer.ts): the object was not read, but nothing is wrong with it. After an outage every collector polls at
 * once and a few such reads are expected; they are counted like failures, not logged as the object failing.
 */
const HELD_BACK = 'budget_wait';

/**
 * Per server and collector: which objects are failing now, so a failure is logged when an object starts failing or
 * fails for another reason, and its recovery once, not every cycle. A poll's changes are said together, one line per
 * reason and one for the objects that answer again, whatever the number of objects: an outage of a server of 1,000
 * streams is not 1,000 lines. Objects that left the server are forgotten with the poll that no longer lists them.
 */
export class ObjectErrorLog {
  private failing = new Map<string, string>();
  /** Whether the poll before held objects back: a run of such polls is said at its first. */
  private heldBackBefore = false;

  constructor(private readonly count: (reason: string) => void) {}

  forPoll(log: Logger): ObjectOutcomes {
    const seen = new Set<string>();
    let failed = 0;
    let last: { reason: string; error: string } | undefined;
    let done: ObjectSummary | undefined;
    /** Objects that started failing (or changed reason) in this poll, by reason: a count, examples and the first error. */
    const started = new Map<string, { count: number; examples: string[]; error: string }>();
    const recovered: string[] = [];
    /** Objects this poll did not read because the exporter held their requests back: one info line for them all. */
    const heldBack: string[] = [];
    let heldBackError = '';
    let said = false;
    return {
      ok: (object) => {
        seen.add(object);
        if (this.failing.delete(object)) recovered.push(object);
      },
      failed: (object, err) => {
        seen.add(object);
        failed++;
        const reason = errorReason(err);
        last = { reason, error: err.message };
        this.count(reason);
        if (reason === HELD_BACK) {
          // Neither a failure nor an answer of the object: a failing object stays failing, an answering one is not
          // said to fail (nor to answer again next poll).
          if (heldBack.length === 0) heldBackError = err.message;
          heldBack.push(object);
          return;
        }
        if (this.failing.get(object) === reason) return;
        this.failing.set(object, reason);
        let group = started.get(reason);
        if (!group) started.set(reason, (group = { count: 0, examples: [], error: err.message }));
        group.count++;
        if (group.examples.length < EXAMPLES) group.examples.push(object);
      },
      finish: (total) => {
        for (const object of this.failing.keys()) if (!seen.has(object)) this.failing.delete(object);
        done = { total, failed, ...(last ? { lastReason: last.reason, lastError: last.error } : {}) };
      },
      summary: () => done,
      say: (serverDown) => {
        if (said) return;
        said = true;
        if (serverDown) {
          // Forgotten as failing too: nothing is said of them when the server answers again (its own line says that).
          for (const [object, reason] of this.failing) if (SERVER_REASONS.has(reason)) this.failing.delete(object);
          for (const reason of SERVER_REASONS) started.delete(reason);
        }
        for (const [reason, g] of started) {
          if (g.count === 1) log.warn({ object: g.examples[0], reason, err: g.error }, 'object failed: left out of this poll, the other objects stay');
          else log.warn({ objects: g.count, examples: g.examples, reason, err: g.error }, `${g.count} objects failed: left out of this poll, the other objects stay`);
        }
        const heldBackBefore = this.heldBackBefore;
        this.heldBackBefore = heldBack.length > 0;
        if (heldBack.length > 0 && !heldBackBefore && !serverDown) {
          log.info(
            { objects: heldBack.length, examples: heldBack.slice(0, EXAMPLES), reason: HELD_BACK, err: heldBackError },
            `${heldBack.length === 1 ? '1 object' : `${heldBack.length} objects`} not read in this poll: the exporter's own limits held the request back past the poll's deadline (counted in wowza_exporter_object_errors_total; said again after a poll that held none back)`,
          );
        }
        if (recovered.length === 1) log.info({ object: recovered[0] }, 'object answers again');
        else if (recovered.length > 1) log.info({ objects: recovered.length, examples: recovered.slice(0, EXAMPLES) }, `${recovered.length} objects answer again`);
      },
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
    say: () => undefined,
  };
}
