/** A cycle on a Digest server spreads over at most this share of its interval... */
const SHARE_OF_INTERVAL = 0.25;
/** ...and never needs to take longer than this to use few sessions. */
const LONGEST_CYCLE_MS = 10_000;
/** The fastest answer is the unloaded one; answers at the chosen concurrency run a little slower. */
const LATENCY_MARGIN = 1.25;

/**
 * The concurrency `auto` may use against a Digest server for a cycle of `requests`. Each request in flight holds a
 * digest session of its own (src/wowza/auth.ts), and every session pays one `401` per nonce: when the nonce has been
 * used as often as the server allows, or when it ages out (wowza-api.md, "Auth"; RFC 7616 lets a server retire a
 * nonce at will and answer `stale=true`). A burst at the limiter's full concurrency (tens) makes tens of sessions
 * whose nonces age out between cycles after a few uses each: measured at 3-4 % of all requests answered `401`, and
 * 14-20 % on small servers. Fewer sessions, each used until its nonce is spent, leave only the retirements by count
 * (1 in `uses + 1`). So the cycle gets the concurrency that finishes it within a quarter of its interval (at most
 * 10 s) at the server's unloaded speed: a fast server gets 2-6, a slow or large one what it needs, up to the
 * configured maximum. Basic-auth servers are not paced: their requests cost no challenge.
 */
export function digestConcurrency(requests: number, fastestMs: number | undefined, intervalMs: number): number {
  if (fastestMs === undefined || !(requests > 0) || !(intervalMs > 0)) return Infinity;
  const cycleMs = Math.min(intervalMs * SHARE_OF_INTERVAL, LONGEST_CYCLE_MS);
  return Math.max(2, Math.ceil((requests * fastestMs * LATENCY_MARGIN) / cycleMs));
}
