import { describe, expect, it } from 'vitest';
import { Histogram, Registry } from '../../../src/metrics/prom-client-core.js';
import { renderSet } from '../../../src/metrics/exposition.js';
import { ServerMetrics } from '../../../src/metrics/server-metrics.js';

const text = (m: ServerMetrics, server: string) =>
  [...renderSet(m.setOf(server)).values()].map((f) => Buffer.from(f.lines).toString()).join('');

describe('ServerMetrics', () => {
  it('keeps each server apart, and says which servers changed since it was last asked', () => {
    const m = new ServerMetrics();
    const up = m.gauge({ name: 'x_up', type: 'gauge', help: 'h' }, ['server'] as const);
    const req = m.counter({ name: 'x_requests_total', type: 'counter', help: 'h' }, ['server', 'code'] as const);
    up.set({ server: 'a' }, 1);
    req.inc({ server: 'a', code: '200' });
    req.inc({ server: 'a', code: '200' }, 2);
    up.set({ server: 'b' }, 0);
    expect(m.takeChanged().sort()).toEqual(['a', 'b']);
    expect(m.takeChanged()).toEqual([]);
    expect(text(m, 'a')).toBe('x_up{server="a"} 1\nx_requests_total{server="a",code="200"} 3\n');
    req.remove({ server: 'a', code: '200' });
    expect(m.takeChanged()).toEqual(['a']);
    expect(text(m, 'a')).toBe('x_up{server="a"} 1\n');
    m.removeServer('b');
    expect(m.setOf('b').size).toBe(0);
    // A request of the removed server that ends after it writes nowhere, until the server is polled again.
    up.set({ server: 'b' }, 1);
    expect(m.takeChanged()).toEqual([]);
    expect(m.setOf('b').size).toBe(0);
    m.revive('b');
    up.set({ server: 'b' }, 1);
    expect(m.setOf('b').size).toBe(1);
  });

  it('renders a histogram as prom-client does: cumulative buckets, +Inf, sum and count', async () => {
    const buckets = [0.01, 0.1, 1];
    const m = new ServerMetrics();
    const ours = m.histogram({ name: 'x_seconds', type: 'histogram', help: 'h' }, ['server', 'endpoint'] as const, buckets);
    const registry = new Registry();
    const theirs = new Histogram({ name: 'x_seconds', help: 'h', labelNames: ['server', 'endpoint'], buckets, registers: [registry] });
    for (const v of [0.005, 0.05, 0.5, 5, 0.1]) {
      ours.observe({ server: 'a', endpoint: '/e' }, v);
      theirs.observe({ server: 'a', endpoint: '/e' }, v);
    }
    const lines = (t: string) =>
      t
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        // prom-client writes `le` first; the order of labels carries no meaning.
        .map((l) => l.replace(/\{le="([^"]+)",(.*)\}/, '{$2,le="$1"}'))
        .sort();
    expect(lines(text(m, 'a'))).toEqual(lines(await registry.metrics()));
  });
});
