import { describe, expect, it } from 'vitest';
import { M } from '../../../src/metrics/definitions.js';
import { MetricSet } from '../../../src/metrics/metric-set.js';
import { fairShare, SeriesCap } from '../../../src/metrics/series-cap.js';
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
