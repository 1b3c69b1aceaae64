import type { CollectorName } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { Limit } from './concurrency-limiter.js';
import type { MetricSet } from '../metrics/metric-set.js';
import type { WowzaClient, WowzaTarget } from '../wowza/client.js';
import type { Discovery } from './discovery.js';

/** Everything a collector may use during one poll of one server. */
export interface PollContext {
  readonly client: WowzaClient;
  /** The `server` label. */
  readonly server: string;
  /** Bounds parallel API requests to this server (shared by all its collectors). */
  readonly limit: Limit;
  /** Aborted when the poll's deadline passes. */
  readonly signal: AbortSignal;
  readonly discovery: Discovery;
  readonly log: Logger;
  /** Counts an object discovery listed that answered 404 by the time its statistics were read. */
  readonly vanished: () => void;
  /** Per-stream viewers come from the connectioncounts collector, not the REST stream statistics. */
  readonly viewersFromConnectionCounts?: boolean;
}

/** One source of metrics: a WSE endpoint family. Fills `out` or throws; never returns partial old data. */
export interface Collector {
  readonly name: CollectorName;
  /** One line for docs and `--help`. */
  readonly description: string;
  /** Servers it polls; all by default. */
  appliesTo?(target: WowzaTarget): boolean;
  poll(ctx: PollContext, out: MetricSet): Promise<void>;
}
