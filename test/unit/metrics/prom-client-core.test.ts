import * as promClient from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from '../../../src/metrics/prom-client-core.js';

describe('prom-client-core: the parts of prom-client the exporter uses, without its Pushgateway', () => {
  it('holds the very classes prom-client exports (a pinned prom-client that moved them fails here)', () => {
    expect(Registry).toBe(promClient.Registry);
    expect(Counter).toBe(promClient.Counter);
    expect(Gauge).toBe(promClient.Gauge);
    expect(Histogram).toBe(promClient.Histogram);
    expect(collectDefaultMetrics).toBe(promClient.collectDefaultMetrics);
  });

  it('renders metrics and the default process set as prom-client does', async () => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    new Counter({ name: 'x_total', help: 'x', labelNames: ['a'], registers: [registry] }).inc({ a: '1' }, 2);
    new Gauge({ name: 'g', help: 'g', registers: [registry] }).set(1.5);
    new Histogram({ name: 'h_seconds', help: 'h', buckets: [1], registers: [registry] }).observe(0.5);
    const text = await registry.metrics();
    expect(text).toContain('x_total{a="1"} 2');
    expect(text).toContain('g 1.5');
    expect(text).toContain('h_seconds_bucket{le="1"} 1');
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds /m);
  });
});
