import { parseMetrics, samples } from './exporter-process.js';

/** What the fault suite reads off a running exporter: per-collector series and success, its log lines. */

export type WseCollector = 'machine' | 'status' | 'vhost' | 'application' | 'instance' | 'stream' | 'recorder' | 'stream_target';
export const WSE_COLLECTOR_NAMES: readonly WseCollector[] = ['machine', 'status', 'vhost', 'application', 'instance', 'stream', 'recorder', 'stream_target'];

/** The metric families each collector writes (see docs/metrics.md), to tell whose series are left. */
const FAMILIES: Record<WseCollector, RegExp> = {
  machine: /^wowza_machine_/,
  status: /^wowza_server_/,
  vhost: /^wowza_vhost_/,
  application: /^wowza_application_/,
  instance: /^(?:wowza_instance_|wowza_stream_(?:connected|recording|info)$|wowza_exporter_streams_dropped$)/,
  stream: /^wowza_stream_(?!(?:connected|recording|info)$|recorder_|target_|expected$)/,
  recorder: /^wowza_stream_recorder_/,
  stream_target: /^wowza_stream_target_/,
};

/** The exporter's own series about a server: they stay while its collectors fail, and say why. */
const SELF = /^wowza_(?:up|exporter_(?:collector_success|collector_duration_seconds|last_poll_timestamp_seconds|api_requests_total|api_request_duration_seconds_(?:bucket|sum|count)|concurrency_limit|vanished_objects_total|object_errors_total|dropped_values_total|unknown_values_total|auth_challenges_total|collector_interval_seconds|series_dropped))$/;

/** `name{labels}` of every series of `server` whose metric name passes `keep`, sorted. */
function seriesOfServer(text: string, server: string, keep: (name: string) => boolean): string[] {
  const own = new RegExp(`[{,]server="${server.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"[,}]`);
  const keys: string[] = [];
  for (const key of parseMetrics(text).keys()) {
    const brace = key.indexOf('{');
    const name = brace === -1 ? key : key.slice(0, brace);
    if (keep(name) && own.test(key)) keys.push(key);
  }
  return keys.sort();
}

/** `name{labels}` of every series `collector` produced for `server`, sorted. */
export function collectorSeries(text: string, server: string, collector: WseCollector): string[] {
  return seriesOfServer(text, server, (name) => FAMILIES[collector].test(name));
}

/**
 * Series of `server` that neither a collector's families above nor the exporter's own metrics account
 * for: a new family the map misses would make "no stale series" checks blind to it.
 */
export function unclaimedSeries(text: string, server: string): string[] {
  return seriesOfServer(text, server, (name) => !SELF.test(name) && !WSE_COLLECTOR_NAMES.some((c) => FAMILIES[c].test(name)));
}

/** The value of the one sample of `name` with these labels, or undefined. */
export function valueOf(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  return samples(text, name, labels)[0]?.value;
}

export function collectorSuccess(text: string, server: string, collector: string): number | undefined {
  return valueOf(text, 'wowza_exporter_collector_success', { server, collector });
}

/** `wowza_up` and collector success of every server, in one line, for failure messages. */
export function describeHealth(text: string): string {
  if (text === '') return '(no scrape)';
  const up = samples(text, 'wowza_up').map((s) => `up{${s.labels.server}}=${s.value}`);
  const ok = samples(text, 'wowza_exporter_collector_success').map((s) => `${s.labels.server}/${s.labels.collector}=${s.value}`);
  return [...up, ...ok].join(' ');
}

export interface PollFailure {
  server: string;
  collector: string;
  reason: string;
  err: string;
}

/** The `poll failed` warnings among the exporter's JSON log lines (partial or non-JSON lines are skipped). */
export function pollFailures(output: string): PollFailure[] {
  const out: PollFailure[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (rec.msg !== 'poll failed') continue;
    out.push({ server: String(rec.server), collector: String(rec.collector), reason: String(rec.reason), err: String(rec.err) });
  }
  return out;
}
