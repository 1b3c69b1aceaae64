import type { CollectorName } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { Limit } from './concurrency-limiter.js';
import type { MetricSet } from '../metrics/metric-set.js';
import type { WowzaClient } from '../wowza/client.js';
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
}

/** One source of metrics: a WSE endpoint family. Fills `out` or throws; never returns partial old data. */
export interface Collector {
  readonly name: CollectorName;
  /** One line for docs and `--help`. */
  readonly description: string;
  poll(ctx: PollContext, out: MetricSet): Promise<void>;
}
