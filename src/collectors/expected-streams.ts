import type { ExpectedStream } from '../wowza/expected-stream.js';
import { M } from '../metrics/definitions.js';
import { MetricSet } from '../metrics/metric-set.js';

/** The store key of a server's expected streams: from the configuration, not from a poll. */
export const EXPECTED_SET = 'expected_streams';

/**
 * `wowza_stream_expected` for each stream the configuration says must be live. It comes from the configuration alone,
 * so it is there when the stream is gone or was never seen: an alert compares it with `wowza_stream_connected`
 * (deploy/prometheus/rules). No `vhost`: a name in `expected_streams` does not say one, and the alert joins on the rest.
 */
export function expectedStreamsSet(server: string, streams: readonly ExpectedStream[]): MetricSet {
  const set = new MetricSet();
  for (const s of streams) set.add(M.streamExpected, { server, application: s.application, app_instance: s.appInstance, stream: s.stream }, 1);
  return set;
}
