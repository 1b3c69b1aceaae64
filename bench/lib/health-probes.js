import { setTimeout as delay } from 'node:timers/promises';

/**
 * `/-/healthy` asked as a Kubernetes liveness probe asks it (every 250 ms, 3 s timeout) from half a second on, until
 * `stop()`, which says how many failed and how long the answered ones took.
 */
export function startHealthProbes(url) {
  const probes = [];
  let probing = true;
  void (async () => {
    await delay(500);
    while (probing) {
      const t = performance.now();
      probes.push(fetch(`${url}/-/healthy`, { signal: AbortSignal.timeout(3000) }).then(async (r) => (await r.arrayBuffer(), r.status === 200 ? performance.now() - t : undefined), () => undefined));
      await delay(250);
    }
  })();
  return {
    async stop() {
      probing = false;
      const lat = (await Promise.all(probes)).filter((x) => x !== undefined).sort((a, b) => a - b);
      const failed = probes.length - lat.length;
      return { failed, total: probes.length, text: `health: ${failed} of ${probes.length} failed, p99 ${lat[Math.floor(lat.length * 0.99)]?.toFixed(0)} ms, slowest ${lat.at(-1)?.toFixed(0)} ms` };
    },
  };
}
