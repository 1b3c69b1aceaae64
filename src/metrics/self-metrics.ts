import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from './prom-client-core.js';
import { BUILD } from '../build-info.js';

/** The exporter's own metrics (prom-client), kept apart from the per-poll Wowza sets. */
export interface SelfMetrics {
  registry: Registry;
  up: Gauge<'server'>;
  collectorSuccess: Gauge<'server' | 'collector'>;
  collectorDuration: Gauge<'server' | 'collector'>;
  collectorInterval: Gauge<'server' | 'collector'>;
  lastPoll: Gauge<'server' | 'collector'>;
  apiRequests: Counter<'server' | 'endpoint' | 'code'>;
  vanishedObjects: Counter<'server' | 'collector'>;
  objectErrors: Counter<'server' | 'collector' | 'reason'>;
  authChallenges: Counter<'server' | 'reason'>;
  droppedValues: Counter<'server' | 'collector' | 'field' | 'reason'>;
  unknownValues: Counter<'server' | 'collector' | 'field'>;
  listItemsDropped: Counter<'server' | 'endpoint'>;
  serversOverLimit: Gauge;
  seriesDropped: Gauge<'server'>;
  videoUnknownValues: Counter<'field'>;
  concurrencyLimit: Gauge<'server'>;
  requestDuration: Histogram<'server' | 'endpoint'>;
  reloadSuccessful: Gauge;
  reloadSuccessTime: Gauge;
  serversFileErrors: Counter<'file'>;
  servers: Gauge;
  /** Counts one API request (retries and challenges included) and its latency. */
  observeRequest(server: string, endpoint: string, code: string, seconds: number): void;
}

export function createSelfMetrics(options: { processMetrics?: boolean } = {}): SelfMetrics {
  const registry = new Registry();
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
  const apiRequests = new Counter({
    name: 'wowza_exporter_api_requests_total',
    help: 'REST API requests sent, by endpoint template and HTTP status code (or error kind).',
    labelNames: ['server', 'endpoint', 'code'],
    registers: [registry],
  });
  const requestDuration = new Histogram({
    name: 'wowza_exporter_api_request_duration_seconds',
    help: 'Latency of API requests (REST and connectioncounts), headers and body, by endpoint template.',
    labelNames: ['server', 'endpoint'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const concurrencyLimit = new Gauge({
    name: 'wowza_exporter_concurrency_limit',
    help: 'API requests the limiter lets be in flight to the server now (poll.concurrency: auto adapts it).',
    labelNames: ['server'],
    registers: [registry],
  });
  return {
    registry,
    up: new Gauge({ name: 'wowza_up', help: '1 when the last poll of the server reached it and it answered as the WSE REST API (the expected JSON, Wowza\'s error envelope, or accepted credentials), else 0.', labelNames: ['server'], registers: [registry] }),
    collectorSuccess: new Gauge({
      name: 'wowza_exporter_collector_success',
      help: '1 when the collector\'s last poll succeeded, else 0 (its series are then absent).',
      labelNames: ['server', 'collector'],
      registers: [registry],
    }),
    collectorDuration: new Gauge({
      name: 'wowza_exporter_collector_duration_seconds',
      help: 'Duration of the collector\'s last poll.',
      labelNames: ['server', 'collector'],
      registers: [registry],
    }),
    collectorInterval: new Gauge({
      name: 'wowza_exporter_collector_interval_seconds',
      help: 'The interval the collector polls at now: the configured one, or longer when poll.max_requests_per_second stretches it (stream).',
      labelNames: ['server', 'collector'],
      registers: [registry],
    }),
    lastPoll: new Gauge({
      name: 'wowza_exporter_last_poll_timestamp_seconds',
      help: 'End of the collector\'s last successful poll, as a Unix timestamp.',
      labelNames: ['server', 'collector'],
      registers: [registry],
    }),
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
    servers: new Gauge({ name: 'wowza_exporter_servers', help: 'Wowza servers this exporter (this shard) polls.', registers: [registry] }),
    serversOverLimit: new Gauge({ name: 'wowza_exporter_servers_over_limit', help: 'Servers of this shard not polled because there are more than max_servers: split them over more replicas with --shard.', registers: [registry] }),
    vanishedObjects: new Counter({
      name: 'wowza_exporter_vanished_objects_total',
      help: 'Objects (streams, vhosts, applications) discovery listed that were gone (HTTP 404) when their statistics were read; left out of that poll.',
      labelNames: ['server', 'collector'],
      registers: [registry],
    }),
    authChallenges: new Counter({
      name: 'wowza_exporter_auth_challenges_total',
      help: 'HTTP 401 answers of a server, by reason: initial (a digest session\'s first request), stale (its nonce was retired; retried in that session), rejected (credentials refused).',
      labelNames: ['server', 'reason'],
      registers: [registry],
    }),
    objectErrors: new Counter({
      name: 'wowza_exporter_object_errors_total',
      help: 'Objects (streams, vhosts, applications, Wowza Video schedules) whose own request failed; each is left out of that poll while the others stay. reason as in wowza_exporter_collector_errors.',
      labelNames: ['server', 'collector', 'reason'],
      registers: [registry],
    }),
    droppedValues: new Counter({
      name: 'wowza_exporter_dropped_values_total',
      help: 'Values the exporter left out instead of exporting them: missing (a required field absent), unreadable (a format it cannot read), negative, out_of_range (NaN, Inf, a ratio outside 0-1), too_long (a label value over 256 bytes: the object or series is left out). field is the API field, or the label for too_long.',
      labelNames: ['server', 'collector', 'field', 'reason'],
      registers: [registry],
    }),
    unknownValues: new Counter({
      name: 'wowza_exporter_unknown_values_total',
      help: 'Distinct values the exporter does not know (a recorder state, stream target status or protocol Wowza added), each counted once. States and statuses are exported as they came, at most 20 per field and server, the rest as other; protocols outside the documented set are summed as protocol="other" (field connectionCount or sessions). field is the API field.',
      labelNames: ['server', 'collector', 'field'],
      registers: [registry],
    }),
    listItemsDropped: new Counter({
      name: 'wowza_exporter_list_items_dropped_total',
      help: 'Items left out of list answers longer than max_list_items (100,000 by default): the first items of the list are read, the rest are not. endpoint is the API endpoint template.',
      labelNames: ['server', 'endpoint'],
      registers: [registry],
    }),
    seriesDropped: new Gauge({
      name: 'wowza_exporter_series_dropped',
      help: 'Series of the server left out of its last polls by the per-server series cap (discovery.max_series_per_server), over all its collectors.',
      labelNames: ['server'],
      registers: [registry],
    }),
    videoUnknownValues: new Counter({
      name: 'wowza_video_unknown_values_total',
      help: 'Wowza Video schedule values the API reference does not list (a new state or action_type, an unreadable time), each counted once per schedule; the schedule is kept.',
      labelNames: ['field'],
      registers: [registry],
    }),
  };
}

/** Removes every series labelled `server="<name>"` from the registry: the server is no longer polled. */
export async function forgetServer(registry: Registry, name: string): Promise<void> {
  for (const object of registry.getMetricsAsArray()) {
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
