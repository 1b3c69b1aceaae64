import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { BUILD } from '../build-info.js';

/** The exporter's own metrics (prom-client), kept apart from the per-poll Wowza sets. */
export interface SelfMetrics {
  registry: Registry;
  up: Gauge<'server'>;
  collectorSuccess: Gauge<'server' | 'collector'>;
  collectorDuration: Gauge<'server' | 'collector'>;
  lastPoll: Gauge<'server' | 'collector'>;
  apiRequests: Counter<'server' | 'endpoint' | 'code'>;
  vanishedObjects: Counter<'server' | 'collector'>;
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
  return {
    registry,
    up: new Gauge({ name: 'wowza_up', help: '1 when the last poll of the server reached the REST API and authenticated, else 0.', labelNames: ['server'], registers: [registry] }),
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
    lastPoll: new Gauge({
      name: 'wowza_exporter_last_poll_timestamp_seconds',
      help: 'End of the collector\'s last successful poll, as a Unix timestamp.',
      labelNames: ['server', 'collector'],
      registers: [registry],
    }),
    apiRequests: new Counter({
      name: 'wowza_exporter_api_requests_total',
      help: 'REST API requests sent, by endpoint template and HTTP status code (or error kind).',
      labelNames: ['server', 'endpoint', 'code'],
      registers: [registry],
    }),
    vanishedObjects: new Counter({
      name: 'wowza_exporter_vanished_objects_total',
      help: 'Objects (streams, vhosts, applications) discovery listed that were gone (HTTP 404) when their statistics were read; left out of that poll.',
      labelNames: ['server', 'collector'],
      registers: [registry],
    }),
  };
}
