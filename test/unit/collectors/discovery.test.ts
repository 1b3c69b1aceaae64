import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { Discovery } from '../../../src/collectors/discovery.js';
import { parseConfig } from '../../../src/config/load.js';
import { silentLogger } from '../../../src/base/logger.js';
import type { WowzaClient } from '../../../src/wowza/client.js';

/**
 * A webhook's invalidate() used to start a walk beside the running one; under a request budget a walk of a large
 * server takes long, and with events every second the walks queued behind each other and none ever became current
 * (every topology collector then failed). Now one walk runs at a time and the next get() after it walks again.
 */
const config = parseConfig({}).discovery;

function slowServer(apps: number, ms: number, fail = () => false) {
  const calls = { vhosts: 0, instances: 0 };
  const later = <T>(v: T) => new Promise<T>((resolve, reject) => setTimeout(() => (fail() ? reject(new Error('HTTP 503')) : resolve(v)), ms));
  const client = {
    vhosts: () => {
      calls.vhosts++;
      return later({ vhosts: [{ id: '_defaultVHost_' }] });
    },
    applications: () => later({ applications: Array.from({ length: apps }, (_, i) => ({ id: `app${i}` })) }),
    instances: () => {
      calls.instances++;
      return later({ instanceList: [{ name: '_definst_', incomingStreams: [{ name: 's' }] }] });
    },
  } as unknown as WowzaClient;
  return { client, calls };
}

describe('discovery walks', () => {
  it('events during a walk do not start walks beside it: the walk ends, is used, and the next get walks again', async () => {
    const { client, calls } = slowServer(20, 20);
    const d = new Discovery(client, pLimit(4), config, 60_000, silentLogger());
    const signal = new AbortController().signal;
    const first = d.get(signal);
    for (let i = 0; i < 5; i++) {
      d.invalidate();
      void d.get(signal);
    }
    const t = await first;
    expect(calls.vhosts).toBe(1);
    expect(t.apps).toHaveLength(20);
    expect(d.known).toBe(t);
    // Invalidated while it ran: the next get walks again, once.
    await Promise.all([d.get(signal), d.get(signal)]);
    expect(calls.vhosts).toBe(2);
    // Fresh now: no walk.
    await d.get(signal);
    expect(calls.vhosts).toBe(2);
  });

  it('a walk that failed is met again by the next caller instead of a second walk, and the last topology stays known', async () => {
    let failing = false;
    const { client, calls } = slowServer(2, 5, () => failing);
    const d = new Discovery(client, pLimit(4), config, 0, silentLogger());
    const signal = new AbortController().signal;
    const good = await d.get(signal);
    failing = true;
    // Age 0: every get walks; this one fails, and the last good topology stays known.
    await expect(d.get(signal)).rejects.toThrow(/503/);
    expect(d.known).toBe(good);
    const d2 = new Discovery(client, pLimit(4), config, 60_000, silentLogger());
    await expect(d2.get(signal)).rejects.toThrow(/503/);
    const before = calls.vhosts;
    await expect(d2.get(signal)).rejects.toThrow(/503/);
    expect(calls.vhosts).toBe(before);
    // An event makes it due again.
    d2.invalidate();
    await expect(d2.get(signal)).rejects.toThrow(/503/);
    expect(calls.vhosts).toBe(before + 1);
  });
});
