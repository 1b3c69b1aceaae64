import { Counter, Gauge, Registry, collectDefaultMetrics } from './prom-client-core.js';
import { BUILD } from '../base/build-info.js';
import { ServerMetrics, type ServerCounter, type ServerGauge, type ServerHistogram } from './server-metrics.js';

/**
 * The exporter's own metrics, kept apart from the per-poll Wowza sets: those of a server in `perServer` (rendered with
 * that server's sets, server-metrics.ts), the others in a prom-client registry.
 */
export interface SelfMetrics {
  registry: Registry;
  perServer: ServerMetrics;
  up: ServerGauge<'server'>;
  collectorSuccess: ServerGauge<'server' | 'collector'>;
  collectorDuration: ServerGauge<'server' | 'collector'>;
  collectorInterval: ServerGauge<'server' | 'collector'>;
  lastPoll: ServerGauge<'server' | 'collector'>;
  apiRequests: ServerCounter<'server' | 'endpoint' | 'code'>;
  vanishedObjects: ServerCounter<'server' | 'collector'>;
  objectErrors: ServerCounter<'server' | 'collector' | 'reason'>;
  authChallenges: ServerCounter<'server' | 'reason'>;
  droppedValues: ServerCounter<'server' | 'collector' | 'field' | 'reason'>;
  unknownValues: ServerCounter<'server' | 'collector' | 'field'>;
  listItemsDropped: ServerCounter<'server' | 'endpoint'>;
  serversOverLimit: Gauge;
  seriesDropped: ServerGauge<'server'>;
  labelValuesShortened: ServerGauge<'server' | 'collector' | 'label'>;
  videoUnknownValues: Counter<'field'>;
  concurrencyLimit: ServerGauge<'server'>;
  requestDuration: ServerHistogram<'server' | 'endpoint'>;
  reloadSuccessful: Gauge;
  reloadSuccessTime: Gauge;
  serversFileErrors: Counter<'file'>;
  probes: Counter<'module'>;
  probeFailures: Counter<'module' | 'reason'>;
  servers: Gauge;
  /** Counts one API request (retries and challenges included) and its latency. */
  observeRequest(server: string, endpoint: string, code: string, seconds: number): void;
}

export function createSelfMetrics(options: { processMetrics?: boolean } = {}): SelfMetrics {
  const registry = new Registry();
  const perServer = new ServerMetrics();
  if (options.processMetrics !== false) {
    collectDefaultMetrics({ register: registry });
    // Gauges named like counters fail `promtool check metrics`; the rest of the default set stays.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name);
  }
  new Gauge({
    name: 'wowza_exporter_build_info',
    help: 'Exporter version, git revision and Node.js version (value 1).',
    labelNames: ['version', 'revision', 'nodejs_version'],
    registers: [registry],
  }).set({ version: BUILD.version, revision: BUILD.revision, nodejs_version: process.version }, 1);
  const apiRequests = perServer.counter({ name: 'wowza_exporter_api_requests_total', type: 'counter', help: 'REST API requests sent, by endpoint template and HTTP status code (or error kind).' }, ['server', 'endpoint', 'code'] as const);
  const requestDuration = perServer.histogram({ name: 'wowza_exporter_api_request_duration_seconds', type: 'histogram', help: 'Latency of API requests (REST and connectioncounts), headers and body, by endpoint template.' }, ['server', 'endpoint'] as const, [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);
  const concurrencyLimit = perServer.gauge({ name: 'wowza_exporter_concurrency_limit', type: 'gauge', help: 'API requests the limiter lets be in flight to the server now (poll.concurrency: auto adapts it).' }, ['server'] as const);
  return {
    registry,
    perServer,
    up: perServer.gauge({ name: 'wowza_up', type: 'gauge', help: '1 when the last poll of the server reached it and it answered as the WSE REST API (the expected JSON, Wowza\'s error envelope, or accepted credentials), else 0.' }, ['server'] as const),
    collectorSuccess: perServer.gauge({ name: 'wowza_exporter_collector_success', type: 'gauge', help: '1 when the collector\'s last poll succeeded, else 0 (its series are then absent).' }, ['server', 'collector'] as const),
    collectorDuration: perServer.gauge({ name: 'wowza_exporter_collector_duration_seconds', type: 'gauge', help: 'Duration of the collector\'s last poll.' }, ['server', 'collector'] as const),
    collectorInterval: perServer.gauge({ name: 'wowza_exporter_collector_interval_seconds', type: 'gauge', help: 'The interval the collector polls at now: the configured one, or longer when poll.max_requests_per_second stretches it (stream), or while the exporter\'s own event loop is saturated.' }, ['server', 'collector'] as const),
    lastPoll: perServer.gauge({ name: 'wowza_exporter_last_poll_timestamp_seconds', type: 'gauge', help: 'End of the collector\'s last successful poll, as a Unix timestamp.' }, ['server', 'collector'] as const),
    apiRequests,
    concurrencyLimit,
    requestDuration,
    observeRequest(server, endpoint, code, seconds) {
      apiRequests.inc({ server, endpoint, code });
      requestDuration.observe({ server, endpoint }, seconds);
    },
    reloadSuccessful: new Gauge({
      name: 'wowza_exporter_config_last_reload_successful',
      help: '1 when the last configuration reload (SIGHUP, POST /-/reload) succeeded, 0 when it was refused.',
      registers: [registry],
    }),
    reloadSuccessTime: new Gauge({
      name: 'wowza_exporter_config_last_reload_success_timestamp_seconds',
      help: 'When the configuration was last loaded successfully (at start or by a reload).',
      registers: [registry],
    }),
    serversFileErrors: new Counter({
      name: 'wowza_exporter_servers_file_errors_total',
      help: 'Reads of a target file (servers_files) that failed; its last good content stays in use.',
      labelNames: ['file'],
      registers: [registry],
    }),
    // By module only (names from the config): a series per probed target would grow with whatever callers name.
    probes: new Counter({ name: 'wowza_exporter_probes_total', help: 'Probes (/probe) run, by module.', labelNames: ['module'], registers: [registry] }),
    probeFailures: new Counter({
      name: 'wowza_exporter_probe_failures_total',
      help: 'Probes in which a collector failed (wowza_up 0, or a collector_success 0 in the answer), by module and the reason of the first failure, as in wowza_exporter_object_errors_total.',
      labelNames: ['module', 'reason'],
      registers: [registry],
    }),
    servers: new Gauge({ name: 'wowza_exporter_servers', help: 'Wowza servers this exporter (this shard) polls.', registers: [registry] }),
    serversOverLimit: new Gauge({ name: 'wowza_exporter_servers_over_limit', help: 'Servers of this shard not polled because there are more than max_servers: split them over more replicas with --shard.', registers: [registry] }),
    vanishedObjects: perServer.counter({ name: 'wowza_exporter_vanished_objects_total', type: 'counter', help: 'Objects (streams, vhosts, applications) discovery listed that were gone (HTTP 404) when their statistics were read; left out of that poll.' }, ['server', 'collector'] as const),
    authChallenges: perServer.counter({ name: 'wowza_exporter_auth_challenges_total', type: 'counter', help: 'HTTP 401 answers of a server, by reason: initial (a digest session\'s first request), stale (its nonce was retired; retried in that session), rejected (credentials refused).' }, ['server', 'reason'] as const),
    objectErrors: perServer.counter({ name: 'wowza_exporter_object_errors_total', type: 'counter', help: 'Objects (streams, vhosts, applications, Wowza Video schedules) whose own request failed; each is left out of that poll while the others stay. reason as in wowza_exporter_collector_errors.' }, ['server', 'collector', 'reason'] as const),
    droppedValues: perServer.counter({ name: 'wowza_exporter_dropped_values_total', type: 'counter', help: 'Values the exporter left out instead of exporting them: missing (a required field absent), unreadable (a format it cannot read), negative, out_of_range (NaN, Inf, a ratio outside 0-1), too_long (a label value over 256 bytes: the object or series is left out; one of 97 to 256 bytes is shortened instead, see wowza_exporter_label_values_shortened). field is the API field, or the label for too_long.' }, ['server', 'collector', 'field', 'reason'] as const),
    unknownValues: perServer.counter({ name: 'wowza_exporter_unknown_values_total', type: 'counter', help: 'Distinct values the exporter does not know (a recorder state, stream target status or protocol Wowza added), each counted once. States and statuses are exported as they came, at most 20 per field and server, the rest as other; protocols outside the documented set are summed as protocol="other" (field connectionCount or sessions). field is the API field.' }, ['server', 'collector', 'field'] as const),
    listItemsDropped: perServer.counter({ name: 'wowza_exporter_list_items_dropped_total', type: 'counter', help: 'Items left out of list answers longer than max_list_items (100,000 by default): the first items of the list are read, the rest are not. endpoint is the API endpoint template.' }, ['server', 'endpoint'] as const),
    labelValuesShortened: perServer.gauge(
      { name: 'wowza_exporter_label_values_shortened', type: 'gauge', help: 'Label values from the server of 97 to 256 bytes, in the last poll of the collector, shortened to 96 bytes (a prefix, ~ and 16 hex digits of the SHA-256 of the whole value; unique and stable).' },
      ['server', 'collector', 'label'] as const,
    ),
    seriesDropped: perServer.gauge({ name: 'wowza_exporter_series_dropped', type: 'gauge', help: 'Series of the server left out of its last polls, over all its collectors: by the per-server caps (discovery.max_series_per_server, discovery.max_bytes_per_server), or because a shortened label value would have merged them with another series.' }, ['server'] as const),
    videoUnknownValues: new Counter({
      name: 'wowza_video_unknown_values_total',
      help: 'Wowza Video schedule values the API reference does not list (a new state or action_type, an unreadable time), each counted once per schedule; the schedule is kept.',
      labelNames: ['field'],
      registers: [registry],
    }),
  };
}

/**
 * Removes every series of a server that is no longer polled: its own (perServer), and those other parts of the exporter
 * keep in the registry with a `server` label (log shipping, webhooks).
 */
export async function forgetServer(self: SelfMetrics, name: string): Promise<void> {
  self.perServer.removeServer(name);
  for (const object of self.registry.getMetricsAsArray()) {
    const metric = object as unknown as {
      labelNames?: string[];
      get(): Promise<{ values: Array<{ labels: Record<string, string | number> }> }>;
      remove(labels: Record<string, string | number | undefined>): void;
    };
    const labelNames = metric.labelNames ?? [];
    if (!labelNames.includes('server')) continue;
    const seen = new Set<string>();
    for (const v of (await metric.get()).values) {
      if (v.labels.server !== name) continue;
      // Histogram buckets carry `le`: the series to remove is named by the metric's own labels only.
      const labels = Object.fromEntries(labelNames.map((l) => [l, v.labels[l]]));
      const key = JSON.stringify(labels);
      if (seen.has(key)) continue;
      seen.add(key);
      metric.remove(labels);
    }
  }
}
