import type { Collector, PollBase } from '../collectors/collector.js';
import { untrackedObjects, type ObjectOutcomes, type ObjectSummary } from '../collectors/object-errors.js';
import { MetricSet } from '../metrics/metric-set.js';
import { answeredAsRest, WowzaError } from '../wowza/errors.js';

/** Errors that mean the API was not reached or did not accept us: `wowza_up` 0. */
const UNREACHABLE = new Set(['auth', 'network', 'tls', 'timeout']);

export interface PollResult {
  collector: string;
  ok: boolean;
  seconds: number;
  set: MetricSet;
  error?: Error;
  /** For collectors of one request per object: how many there were and how many failed. */
  objects?: ObjectSummary;
  /** Logs the objects' changes in this poll once the server's state is known (ObjectOutcomes.say). */
  sayObjects?: (serverDown: boolean) => void;
  /** false when the failure says the server was not reached or rejected the credentials. */
  reached: boolean;
  /**
   * Whether the server answered as the WSE REST API while this poll ran (a success, or any answer of the API's shape):
   * a server that never does is not Wowza (`wowza_up` 0). Undefined for sources outside the REST API.
   */
  rest?: boolean;
  /** Whether a request of this poll got an answer of the REST API's shape (a poll read from the discovery walk alone makes none). */
  answered?: boolean;
}

/** Times one poll that produces a fresh set; never throws. */
export async function timedPoll(collector: string, produce: () => Promise<MetricSet>): Promise<PollResult> {
  const started = performance.now();
  try {
    const set = await produce();
    return { collector, ok: true, seconds: (performance.now() - started) / 1000, set, reached: true };
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    const reached = !(error instanceof WowzaError && UNREACHABLE.has(error.kind));
    return { collector, ok: false, seconds: (performance.now() - started) / 1000, set: new MetricSet(), error, reached };
  }
}

/** Runs one collector against one server into a fresh set; never throws. */
export async function runCollector(collector: Collector, base: PollBase, objects: ObjectOutcomes = untrackedObjects()): Promise<PollResult> {
  const before = base.client.restAnswers;
  const polled = await timedPoll(collector.name, async () => {
    const set = new MetricSet();
    await collector.poll({ ...base, objects }, set);
    return set;
  });
  // A success built on the discovery walk alone made no request of its own, and the walk had the API's shape. A poll
  // that meets the walk's failure (walked before it, in its prepare step or by another poll) heard what the walk heard.
  const answered = base.client.restAnswers > before || answeredAsRest(polled.error);
  const result = { ...polled, rest: polled.ok || answered, answered };
  const summary = objects.summary();
  const say = (serverDown: boolean) => objects.say(serverDown);
  return summary ? { ...result, objects: summary, sayObjects: say } : { ...result, sayObjects: say };
}


