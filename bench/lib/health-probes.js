import { setTimeout as delay } from 'node:timers/promises';

/**
 * `/-/healthy` asked as a Kubernetes liveness probe asks it (every 250 ms, 3 s timeout), from the exporter's first
 * answer on (before it, a startup probe's job, a refused connection only says the process is still starting), until
 * `stop()`, which says how many failed, why, and how long the answered ones took.
 */
export function startHealthProbes(url) {
  const probes = [];
  let probing = true;
  const ask = () =>
    fetch(`${url}/-/healthy`, { signal: AbortSignal.timeout(3000) }).then(
      async (r) => (await r.arrayBuffer(), r.status === 200 ? { ok: true } : { ok: false, why: `HTTP ${r.status}` }),
      (err) => ({ ok: false, why: err?.cause?.code ?? err?.name ?? String(err) }),
    );
  void (async () => {
    const startedBy = performance.now() + 60_000;
    while (probing && performance.now() < startedBy && !(await ask()).ok) await delay(100);
    while (probing) {
      const t = performance.now();
      probes.push(ask().then((r) => ({ ...r, ms: performance.now() - t })));
      await delay(250);
    }
  })();
  return {
    async stop() {
      probing = false;
      const results = await Promise.all(probes);
      const lat = results.filter((r) => r.ok).map((r) => r.ms).sort((a, b) => a - b);
      const failures = results.filter((r) => !r.ok);
      const why = [...new Set(failures.map((f) => f.why))].join(', ');
      return {
        failed: failures.length,
        total: probes.length,
        text: `health: ${failures.length} of ${probes.length} failed${why ? ` (${why})` : ''}, p99 ${lat[Math.floor(lat.length * 0.99)]?.toFixed(0)} ms, slowest ${lat.at(-1)?.toFixed(0)} ms`,
      };
    },
  };
}
