/** A cycle on a Digest server spreads over at most this share of its interval... */
const SHARE_OF_INTERVAL = 0.25;
/** ...and never needs to take longer than this to use few sessions. */
const LONGEST_CYCLE_MS = 10_000;
/** The fastest answer is the unloaded one; answers at the chosen concurrency run a little slower. */
const LATENCY_MARGIN = 1.25;

/** What the server's answers took lately. */
export interface AnswerTimes {
  /** The fastest answer seen lately (ms). */
  fastestMs: number | undefined;
  /** A moving average of the answers (ms): what a busy server or a loaded exporter really takes. */
  typicalMs: number | undefined;
}

/** The last paced cycle: the concurrency it had and how long it took. */
export interface PacedCycle {
  concurrency: number;
  ms: number;
}

/** How long a cycle on a Digest server may take: a quarter of its interval, at most 10 s. */
export function pacedCycleMs(intervalMs: number): number {
  return Math.min(intervalMs * SHARE_OF_INTERVAL, LONGEST_CYCLE_MS);
}

/**
 * The concurrency `auto` may use against a Digest server for a cycle of `requests`. Each request in flight holds a
 * digest session of its own (src/wowza/auth.ts), and every session pays one `401` per nonce: when the nonce has been
 * used as often as the server allows, or when it ages out (wowza-api.md, "Auth"; RFC 7616 lets a server retire a
 * nonce at will and answer `stale=true`). A burst at the limiter's full concurrency (tens) makes tens of sessions
 * whose nonces age out between cycles after a few uses each: measured at 3-4 % of all requests answered `401`, and
 * 14-20 % on small servers. Fewer sessions, each used until its nonce is spent, leave only the retirements by count
 * (1 in `uses + 1`). So the cycle gets the concurrency that finishes it within a quarter of its interval (at most
 * 10 s) at what answers take (the slower of the fastest answer with a margin and the moving average): a fast
 * server gets 2-6, a slow or large one what it needs, up to the configured maximum. A cycle that still took longer
 * than that (a server or an exporter under load) gives the next one proportionally more, so pacing never pushes a
 * cycle towards its deadline. Basic-auth servers are not paced: their requests cost no challenge.
 */
export function digestConcurrency(requests: number, answers: AnswerTimes, intervalMs: number, last?: PacedCycle): number {
  if (answers.fastestMs === undefined || !(requests > 0) || !(intervalMs > 0)) return Infinity;
  const targetMs = pacedCycleMs(intervalMs);
  const latencyMs = Math.max(answers.fastestMs * LATENCY_MARGIN, answers.typicalMs ?? 0);
  const planned = Math.max(2, Math.ceil((requests * latencyMs) / targetMs));
  if (!last || !Number.isFinite(last.concurrency) || last.ms <= targetMs) return planned;
  return Math.max(planned, Math.ceil((last.concurrency * last.ms) / targetMs));
}
