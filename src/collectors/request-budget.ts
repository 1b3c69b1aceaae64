/** What a server's discovery found: the sizes the request cost of a cycle depends on. */
export interface ServerSize {
  vhosts: number;
  apps: number;
  streams: number;
}

export interface StretchedInterval {
  intervalMs: number;
  /** Why it is longer than configured; undefined when it is not. */
  reason?: string;
}

/** At least this share of the budget is left to the streams, however much the server-level collectors take. */
const STREAM_SHARE_FLOOR = 0.1;

/**
 * The `stream` collector's interval under a request budget. Requests a second at the configured intervals: the
 * server-level collectors (`intervals` of machine, status, vhost, application, connectioncounts; one discovery walk
 * of 1 + vhosts + apps lists per `discoveryAgeMs`) and one request per stream per stream interval. When that passes
 * `budgetPerSecond`, the stream interval grows until the streams fit in what the others leave; the others keep
 * theirs. A cycle, once started, still runs at full speed (the budget limits how often, not how fast), so the budget
 * holds over any minute, not only on average: as many whole stream cycles as fit in a minute's budget, spaced so that
 * no minute sees one more even when `jitter` brings two starts closer. A single cycle larger than a minute's budget
 * gets the interval that keeps the average.
 */
export function streamIntervalWithin(
  budgetPerSecond: number,
  size: ServerSize,
  intervals: ReadonlyMap<string, number>,
  discoveryAgeMs: number,
  jitter = 0.1,
): StretchedInterval {
  const configured = intervals.get('stream');
  if (configured === undefined) throw new Error('no stream collector');
  if (!(budgetPerSecond > 0) || size.streams === 0) return { intervalMs: configured };
  const perSecond = (requests: number, ms: number | undefined) => (ms === undefined ? 0 : requests / (ms / 1000));
  const fixed =
    perSecond(1, intervals.get('machine')) +
    perSecond(1, intervals.get('status')) +
    perSecond(1, intervals.get('connectioncounts')) +
    perSecond(size.vhosts, intervals.get('vhost')) +
    perSecond(size.apps, intervals.get('application')) +
    perSecond(1 + size.vhosts + size.apps, discoveryAgeMs);
  const left = Math.max(budgetPerSecond - fixed, budgetPerSecond * STREAM_SHARE_FLOOR);
  // Whole stream cycles a minute's budget holds; k starts in any minute need k gaps of at least 60 s / k.
  const cyclesPerMinute = Math.floor((left * 60) / size.streams);
  const fits = cyclesPerMinute >= 1 ? Math.ceil(60_000 / (cyclesPerMinute * (1 - jitter))) : Math.ceil((size.streams / left) * 1000);
  // Within the budget at the configured interval, in every minute: nothing to stretch.
  const startsAtConfigured = Math.floor(60_000 / (configured * (1 - jitter))) + 1;
  if (startsAtConfigured * size.streams <= left * 60 || fits <= configured) return { intervalMs: configured };
  const asked = fixed + perSecond(size.streams, configured);
  return {
    intervalMs: fits,
    reason: `${size.streams} streams every ${configured / 1000} s would ask ${Math.round(asked)} requests/s of this server, over poll.max_requests_per_second ${budgetPerSecond}: streams are polled every ${Math.round(fits / 100) / 10} s`,
  };
}
