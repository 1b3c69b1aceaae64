import type * as PromClient from 'prom-client';
import CounterModule from 'prom-client/lib/counter.js';
import collectDefaultMetricsModule from 'prom-client/lib/defaultMetrics.js';
import GaugeModule from 'prom-client/lib/gauge.js';
import HistogramModule from 'prom-client/lib/histogram.js';
import RegistryModule from 'prom-client/lib/registry.js';

/**
 * The parts of prom-client the exporter uses, loaded without the rest: `import 'prom-client'` also evaluates its
 * Pushgateway (node:https, and with it node:tls), its cluster aggregator and Summary (tdigest, bintrees), none of
 * which `serve` runs (issue 27: every built-in module loaded is resident code and source). These are the modules
 * prom-client's own index re-exports, the same classes: a Registry from here and one from 'prom-client' are one
 * class. The version is pinned by package-lock.json; test/unit/metrics/prom-client-core.test.ts fails if a new
 * prom-client moves them. Types are prom-client's published ones.
 */
export const Registry: typeof PromClient.Registry = RegistryModule;
export type Registry = PromClient.Registry;
export const Counter: typeof PromClient.Counter = CounterModule;
export type Counter<T extends string = string> = PromClient.Counter<T>;
export const Gauge: typeof PromClient.Gauge = GaugeModule;
export type Gauge<T extends string = string> = PromClient.Gauge<T>;
export const Histogram: typeof PromClient.Histogram = HistogramModule;
export type Histogram<T extends string = string> = PromClient.Histogram<T>;
export const collectDefaultMetrics: typeof PromClient.collectDefaultMetrics = collectDefaultMetricsModule;
