import type { CollectorName } from '../config/schema.js';
import type { Logger } from '../base/logger.js';
import type { MetricSet } from '../metrics/metric-set.js';
import type { WowzaClient, WowzaTarget } from '../wowza/client.js';
import type { Discovery } from './discovery.js';
import type { LabelVocabulary } from './label-vocabulary.js';
import type { Notices } from './notices.js';
import type { ObjectOutcomes } from './object-errors.js';

/** Runs `fn` when a slot is free; shared by every collector of one server (the poller's limiter gives it). */
export type Limit = <T>(fn: () => Promise<T>) => Promise<T>;

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
  /** What each object (stream, vhost, application) of this poll did: failures are counted and logged there. */
  readonly objects: ObjectOutcomes;
  /** Per-stream viewers come from the connectioncounts collector, not the REST stream statistics. */
  readonly viewersFromConnectionCounts?: boolean;
  /** The bounded label values of a server-sent string field (kept for the server's lifetime; label-vocabulary.ts). */
  readonly vocabulary: (field: string, known: readonly string[]) => LabelVocabulary;
  /** Conditions objects report about themselves, said when they change (kept for the server's lifetime). */
  readonly notices?: Notices;
}

/** A poll's context before it is given to one collector (which gets its own `objects`). */
export type PollBase = Omit<PollContext, 'objects'>;

/**
 * One source of metrics: a WSE endpoint family. Fills `out` or throws; never returns partial old data. A collector of
 * one request per object leaves out the objects that fail (readEach) and throws only when none answered.
 */
export interface Collector {
  readonly name: CollectorName;
  /** One line for docs and `--help`. */
  readonly description: string;
  /** Servers it polls; all by default. */
  appliesTo?(target: WowzaTarget): boolean;
  /**
   * It reads another port than the REST API (the connectioncounts provider): its failures are its own and say
   * nothing of `wowza_up`, which means the REST API answered.
   */
  readonly outsideRest?: boolean;
  poll(ctx: PollContext, out: MetricSet): Promise<void>;
}
