import { describe, expect, it } from 'vitest';
import { M } from '../../../src/metrics/definitions.js';
import { MetricSet } from '../../../src/metrics/metric-set.js';
import { fairShare, lineBytes, SeriesCap, shortenLabels } from '../../../src/metrics/series-cap.js';
import { shortenLabelValue } from '../../../src/metrics/label-bounds.js';
import { SnapshotStore } from '../../../src/metrics/snapshot-store.js';
import { parseMetrics } from '../../helpers/exporter-process.js';

/** A set of `n` stream series, added in the order given (readEach adds them as answers come). */
function streams(n: number, order: (i: number) => number = (i) => i, server = 's'): MetricSet {
  const out = new MetricSet();
  for (let i = 0; i < n; i++) out.add(M.streamConnected, { server, stream: `cam${String(order(i)).padStart(5, '0')}` }, 1);
  return out;
}

function machine(): MetricSet {
  const out = new MetricSet();
  for (const mode of ['idle', 'user', 'system']) out.add(M.machineCpu, { server: 's', mode }, 0.1);
  return out;
}

const seriesOf = (store: SnapshotStore) => [...parseMetrics(store.render()).keys()];

describe('per-server series cap', () => {
  it('shares room smallest set first', () => {
    expect(fairShare(100, [3, 500], 3)).toBe(3);
    expect(fairShare(100, [3, 500], 500)).toBe(97);
    expect(fairShare(100, [60, 60], 60)).toBe(50);
    expect(fairShare(100, [10, 20], 20)).toBe(20);
  });

  it('covers every collector of a server together: the few server series stay, the streams give way, and it is counted', async () => {
    const dropped = new Map<string, number>();
    const store = new SnapshotStore(new SeriesCap({ max: () => 100, onDropped: (server, n) => dropped.set(server, n) }));
    await store.put('s', 'machine', machine());
    await store.put('s', 'instance', streams(500));
    await store.put('other', 'instance', streams(50, undefined, 'other'));
    expect(seriesOf(store).filter((k) => k.includes('server="s"'))).toHaveLength(100);
    expect(seriesOf(store).filter((k) => k.includes('server="other"'))).toHaveLength(50);
    expect(seriesOf(store).filter((k) => k.startsWith('wowza_machine_cpu_ratio'))).toHaveLength(3);
    expect(dropped.get('s')).toBe(403);
    expect(dropped.get('other')).toBe(0);
    // The machine set polled again after the streams: it still fits whole, and the total stays at the cap.
    await store.put('s', 'machine', machine());
    expect(seriesOf(store).filter((k) => k.includes('server="s"'))).toHaveLength(100);
  });

  it('keeps the same series from one poll to the next, whatever order the answers came in', async () => {
    const store = new SnapshotStore(new SeriesCap({ max: () => 10 }));
    await store.put('s', 'instance', streams(40));
    const first = seriesOf(store);
    await store.put('s', 'instance', streams(40, (i) => 39 - i));
    expect(seriesOf(store)).toEqual(first);
    expect(first).toHaveLength(10);
  });

  it('a failed poll frees its room, and the count returns to 0 under the cap', async () => {
    const dropped: number[] = [];
    const store = new SnapshotStore(new SeriesCap({ max: () => 10, onDropped: (_s, n) => dropped.push(n) }));
    await store.put('s', 'instance', streams(8));
    await store.put('s', 'stream', streams(8));
    expect(dropped.at(-1)).toBe(6);
    // The stream set stored still holds 2 of its 8 until it polls again.
    store.delete('s', 'instance');
    expect(dropped.at(-1)).toBe(6);
    await store.put('s', 'stream', streams(8));
    expect(seriesOf(store)).toHaveLength(8);
    expect(dropped.at(-1)).toBe(0);
  });
});

/** A logger that keeps its warn and info lines' messages. */
function lines(): { said: string[]; log: never } {
  const said: string[] = [];
  const log = { warn: (_o: unknown, m: string) => said.push(m), info: (_o: unknown, m: string) => said.push(m) };
  return { said, log: log as never };
}

describe('label values over the length cap', () => {
  it('are shortened in every series, counted per label once per poll, and said once per server, collector and label', async () => {
    const { said, log } = lines();
    const told: [string, string, string, number][] = [];
    const store = new SnapshotStore(new SeriesCap({ max: () => 1000, log, onShortened: (...a) => told.push(a) }));
    const long = (i: number) => `${'n'.repeat(200)}${i}`;
    const set = () => {
      const out = new MetricSet();
      for (let i = 0; i < 3; i++) {
        out.add(M.streamConnected, { server: 's', application: 'a'.repeat(120), stream: long(i) }, 1);
        out.add(M.streamRecording, { server: 's', application: 'a'.repeat(120), stream: long(i) }, 0);
      }
      out.add(M.streamConnected, { server: 's', application: 'live', stream: 'cam1' }, 1);
      return out;
    };
    await store.put('s', 'instance', set());
    await store.put('s', 'instance', set());
    const keys = seriesOf(store);
    expect(keys).toHaveLength(7);
    expect(keys).toContain(`wowza_stream_connected{server="s",application="${shortenLabelValue('a'.repeat(120))}",stream="${shortenLabelValue(long(2))}"}`);
    expect(keys).toContain('wowza_stream_connected{server="s",application="live",stream="cam1"}');
    expect(told).toEqual([['s', 'instance', 'application', 1], ['s', 'instance', 'stream', 3], ['s', 'instance', 'application', 1], ['s', 'instance', 'stream', 3]]);
    expect(said.filter((m) => m.includes('shortened'))).toHaveLength(2);
  });

  it('a set with no long value is given back as it is', () => {
    const set = streams(10);
    expect(shortenLabels(set).set).toBe(set);
  });

  it('a server naming an object like another one shortened: the first met keeps the value, the other is left out and counted', async () => {
    const long = 'q'.repeat(150);
    const out = new MetricSet();
    out.add(M.streamConnected, { server: 's', stream: long }, 1);
    out.add(M.streamConnected, { server: 's', stream: shortenLabelValue(long) }, 0);
    out.add(M.streamConnected, { server: 's', stream: 'cam1' }, 1);
    const dropped: number[] = [];
    const store = new SnapshotStore(new SeriesCap({ max: () => 1000, onDropped: (_s, n) => dropped.push(n) }));
    await store.put('s', 'instance', out);
    const metrics = parseMetrics(store.render());
    expect(metrics.get(`wowza_stream_connected{server="s",stream="${shortenLabelValue(long)}"}`)).toBe(1);
    expect(metrics.size).toBe(2);
    expect(dropped.at(-1)).toBe(1);
  });
});

describe('per-server byte cap', () => {
  const bytesOf = (store: SnapshotStore, server: string) =>
    store
      .render()
      .split('\n')
      .filter((l) => l.includes(`server="${server}"`))
      .reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);

  it('estimates a sample line within a few bytes', () => {
    const line = 'wowza_stream_connected{server="s",stream="cam1"} 1\n';
    const estimate = lineBytes('wowza_stream_connected', { labels: { server: 's', stream: 'cam1' }, value: 1 });
    expect(estimate - Buffer.byteLength(line)).toBeGreaterThanOrEqual(0);
    expect(estimate - Buffer.byteLength(line)).toBeLessThanOrEqual(2);
  });

  it('bounds the bytes of a server over all its sets, keeps a stable subset, counts what is left out and says it once', async () => {
    const { said, log } = lines();
    const dropped = new Map<string, number>();
    let maxBytes = 5000;
    const store = new SnapshotStore(new SeriesCap({ max: () => 100_000, maxBytes: () => maxBytes, log, onDropped: (server, n) => dropped.set(server, n) }));
    await store.put('s', 'machine', machine());
    await store.put('s', 'instance', streams(500));
    await store.put('other', 'instance', streams(50, undefined, 'other'));
    expect(bytesOf(store, 's')).toBeLessThanOrEqual(5000);
    expect(bytesOf(store, 's')).toBeGreaterThan(4000);
    expect(seriesOf(store).filter((k) => k.startsWith('wowza_machine_cpu_ratio'))).toHaveLength(3);
    expect(seriesOf(store).filter((k) => k.includes('server="other"'))).toHaveLength(50);
    const kept = seriesOf(store).filter((k) => k.includes('server="s"')).length;
    expect(dropped.get('s')).toBe(503 - kept);
    expect(dropped.get('other')).toBe(0);
    const first = seriesOf(store);
    await store.put('s', 'instance', streams(500, (i) => 499 - i));
    expect(seriesOf(store)).toEqual(first);
    expect(said.filter((m) => m.startsWith('byte cap reached'))).toHaveLength(1);
    expect(said.filter((m) => m.startsWith('series cap reached'))).toHaveLength(0);
    // Raised (a reload): everything fits, and it is said once.
    maxBytes = 1 << 20;
    await store.put('s', 'instance', streams(500));
    expect(dropped.get('s')).toBe(0);
    expect(said.filter((m) => m.includes('back under the byte cap'))).toHaveLength(1);
  });

  it('without maxBytes, 8 MiB: 5,000 streams of 250-byte names stay whole and distinct, under it', async () => {
    const store = new SnapshotStore(new SeriesCap({ max: () => 100_000 }));
    const out = new MetricSet();
    const name = (i: number) => `${'s'.repeat(245)}${String(i).padStart(5, '0')}`;
    for (let i = 0; i < 5000; i++) out.add(M.streamConnected, { server: 's', vhost: '_defaultVHost_', application: 'live', app_instance: '_definst_', stream: name(i) }, 1);
    await store.put('s', 'instance', out);
    const keys = seriesOf(store);
    expect(keys).toHaveLength(5000);
    expect(Math.max(...keys.map((k) => Buffer.byteLength(k)))).toBeLessThan(250);
    expect(Buffer.byteLength(store.render())).toBeLessThan(2 << 20);
  });
});
