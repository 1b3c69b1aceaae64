/** What a server's discovery found: the sizes the request cost of a cycle depends on. */
export interface ServerSize {
  vhosts: number;
  apps: number;
  streams: number;
  /** Applications with `streamTargetsEnabled` (one mapentries request each); 0 when unknown. */
  targetApps?: number;
  /** Instances whose list item has no `recorders` (one streamrecorders request each); 0 when unknown. */
  recorderLists?: number;
}

export interface StretchedInterval {
  intervalMs: number;
  /** Why it is longer than configured; undefined when it is not. */
  reason?: string;
}

/** How every request of one server is paced (request-pacer.ts): a token bucket. */
export interface PacedRate {
  /** Tokens added a second. */
  perSecond: number;
  /** Tokens the bucket holds at most (and at the start). */
  burst: number;
}

/**
 * The bucket for a budget: a burst of a twenty-fifth of a second's budget (at least one request: 2 at 50 a second),
 * refilled at the budget less what that burst adds to any 10 s: then no 10 s window holds more than budget x 10 requests
 * (burst + 10 x rate), whenever it falls. The burst is small so requests leave spread in time: with a fifth (10 at 50 a
 * second), a server serving 2 requests at once (20 ms each) saw its requests queue for it at p95 22-31 ms, p99 60-70 ms,
 * though half idle; with 2, p95 under 0.01 ms and the longest wait 5-11 ms (bench/RESULTS.md).
 */
export function pacedRate(budgetPerSecond: number): PacedRate {
  const burst = Math.max(1, budgetPerSecond / 25);
  return { burst, perSecond: Math.max(budgetPerSecond - burst / 10, budgetPerSecond / 2) };
}

/** The walk is planned as this name beside the collectors (its requests pass the pacer as this lane). */
export const DISCOVERY = 'discovery';

/** The log follower's page reads pass the pacer as this lane (log-host.ts). */
export const LOGS = 'logs';

/** The part of the paced rate the log follower is weighted with at least, however much the collectors need. */
export const LOG_SHARE_FLOOR = 0.2;

/**
 * The weight of the log follower's lane beside the collectors' shares: whatever of the paced rate they do not need,
 * and at least LOG_SHARE_FLOOR of it. The pacer serves lanes in proportion to their weights while several wait and
 * gives a lane alone all the rate, so a log backlog drains at what the collectors leave (all of it between their
 * cycles) and never takes what they were planned; a big server's polling leaves the logs a fifth or so.
 */
export function logShare(budgetPerSecond: number, shares: ReadonlyMap<string, number>, sized = true): number {
  if (!(budgetPerSecond > 0)) return 0;
  const rate = pacedRate(budgetPerSecond).perSecond;
  // Before the first walk the collectors' needs are unknown (planned for an empty server): the floor, so the walk and
  // the first cycle are not starved by a backlog waiting since the start.
  if (!sized) return LOG_SHARE_FLOOR * rate;
  let planned = 0;
  for (const [name, share] of shares) if (name !== LOGS) planned += share;
  return Math.max(rate - planned, LOG_SHARE_FLOOR * rate);
}

/**
 * A paced cycle gets its share of the budget for at most this part of its interval, so it ends before the poll deadline
 * (90 %, poll-deadline.ts) with room for slow answers.
 */
export const PACED_SHARE_OF_INTERVAL = 0.8;

/**
 * Who gives way first when the configured intervals ask more than the budget: the streams (what grows with a server),
 * then the per-object levels and the discovery walk together (the same stretch for all), then the one-request
 * collectors. Each group keeps at least its floor share of the budget, so none starves.
 */
const GROUPS: ReadonlyArray<{ members: readonly string[]; floor: number }> = [
  { members: ['machine', 'status', 'connectioncounts'], floor: 0.1 },
  { members: [DISCOVERY, 'vhost', 'application', 'stream_target', 'recorder'], floor: 0.2 },
  { members: ['stream'], floor: 0.1 },
];

/** Requests one cycle of each costs, from the sizes discovery found (instance reads only the walk: none). */
function cycleCost(name: string, size: ServerSize): number {
  switch (name) {
    case 'machine':
    case 'status':
    case 'connectioncounts':
      return 1;
    case 'vhost':
      return size.vhosts;
    case 'application':
      return size.apps;
    case 'stream':
      return size.streams;
    case 'stream_target':
      return size.targetApps ?? 0;
    case 'recorder':
      return size.recorderLists ?? 0;
    case DISCOVERY:
      return 1 + size.vhosts + size.apps;
    default:
      return 0;
  }
}

const NOUNS: Record<string, string> = {
  vhost: 'vhosts',
  application: 'applications',
  stream: 'streams',
  stream_target: 'stream-target lists',
  recorder: 'recorder lists',
  [DISCOVERY]: 'discovery lists (1 + vhosts + applications)',
};

export interface BudgetPlan {
  /** Every collector's interval in force, and the discovery walk's age (under DISCOVERY). */
  intervals: Map<string, StretchedInterval>;
  /** Each one's share of the budget, requests a second: the pacer's weights. */
  shares: Map<string, number>;
}

const round1 = (n: number) => Math.round(n * 10) / 10;
const seconds = (ms: number) => `${round1(ms / 1000)} s`;

/**
 * Every collector's interval, and the discovery walk's, under a request budget. Every request passes a pacer at
 * `pacedRate(budget)` (request-pacer.ts), so no 10 s window holds more than the budget whatever this says; this plan
 * makes the polls fit that pace. A cycle of n requests paced at a share s of the budget lasts n / s, so each
 * collector needs n / (0.8 x interval) a second to end its cycle within 80 % of its interval. When the collectors at
 * their configured intervals need more than the pace gives, they give way in groups (GROUPS): the streams first, then
 * the per-object levels and the walk (one stretch for all), then the one-request collectors; each stretched one gets
 * the interval at which its share ends its cycle in time. The shares are the pacer's weights, so a stretched
 * collector's cycle gets its share even while another's runs.
 */
export function budgetPlan(budgetPerSecond: number, size: ServerSize, configured: ReadonlyMap<string, number>, discoveryAgeMs: number): BudgetPlan {
  const intervals = new Map<string, StretchedInterval>();
  const shares = new Map<string, number>();
  const all = new Map(configured);
  // The walk happens only for collectors that read it.
  if ([...configured.keys()].some((c) => c !== 'machine' && c !== 'status')) all.set(DISCOVERY, discoveryAgeMs);
  for (const [name, ms] of all) intervals.set(name, { intervalMs: ms });
  if (!(budgetPerSecond > 0)) return { intervals, shares };

  const rate = pacedRate(budgetPerSecond).perSecond;
  const items = [...all].map(([name, ms]) => {
    const n = cycleCost(name, size);
    return { name, ms, n, asks: n / (ms / 1000), needs: n / (PACED_SHARE_OF_INTERVAL * (ms / 1000)) };
  });
  const asked = items.reduce((a, i) => a + i.asks, 0);
  const needed = items.reduce((a, i) => a + i.needs, 0);
  for (const i of items) shares.set(i.name, i.needs);
  if (needed <= rate) return { intervals, shares };

  const groups = GROUPS.map((g) => ({ floor: g.floor * rate, items: items.filter((i) => g.members.includes(i.name) && i.n > 0) })).filter((g) => g.items.length > 0);
  let remaining = rate;
  groups.forEach((g, k) => {
    const below = groups.slice(k + 1).reduce((a, h) => a + h.floor, 0);
    const available = Math.max(remaining - below, g.floor);
    const need = g.items.reduce((a, i) => a + i.needs, 0);
    if (need <= available) {
      remaining -= need;
      return;
    }
    remaining -= available;
    const factor = available / need;
    for (const i of g.items) {
      const share = i.needs * factor;
      const intervalMs = Math.max(i.ms, Math.ceil((i.n / (PACED_SHARE_OF_INTERVAL * share)) * 1000));
      shares.set(i.name, share);
      if (intervalMs === i.ms) continue;
      const what = NOUNS[i.name] ? `${i.n} ${NOUNS[i.name]}` : `1 request`;
      const verdict =
        asked > budgetPerSecond
          ? `over poll.max_requests_per_second ${budgetPerSecond}`
          : `within poll.max_requests_per_second ${budgetPerSecond}, but paced cycles ending within ${PACED_SHARE_OF_INTERVAL * 100} % of their intervals need ${round1(needed)}/s`;
      intervals.set(i.name, {
        intervalMs,
        reason:
          `${what} every ${seconds(i.ms)} ask ${round1(i.asks)} requests/s; with the rest (${round1(asked - i.asks)}/s) this server would be asked ` +
          `${round1(asked)} requests/s at the configured intervals, ${verdict}: these get ${round1(share)} requests/s and are polled every ${seconds(intervalMs)}`,
      });
    }
  });
  return { intervals, shares };
}

/** The `stream` collector's interval under a request budget (budgetPlan; doctor shows it). */
export function streamIntervalWithin(
  budgetPerSecond: number,
  size: ServerSize,
  intervals: ReadonlyMap<string, number>,
  discoveryAgeMs: number,
): StretchedInterval {
  if (!intervals.has('stream')) throw new Error('no stream collector');
  return budgetPlan(budgetPerSecond, size, intervals, discoveryAgeMs).intervals.get('stream')!;
}
