/**
 * How many of `samples` one-second samples of `${url}/-/healthy` answered 200 within a second: the hostile-input
 * suites' measure of whether anything held the thread that serves health and metrics.
 */
export async function healthyWithinASecond(url: string, samples: number): Promise<number> {
  let fast = 0;
  for (let i = 0; i < samples; i++) {
    const started = Date.now();
    const ok = await fetch(`${url}/-/healthy`, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok && Date.now() - started <= 1000) fast++;
    await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - started))));
  }
  return fast;
}

/**
 * Health probes as a liveness probe sends them: one every `everyMs` for `durationMs`, each on its own with a
 * `timeoutMs` deadline, whether the one before has answered or not. Failures are probes without a 200 in time.
 */
export async function probeHealth(url: string, o: { everyMs: number; durationMs: number; timeoutMs: number; path?: string }): Promise<{ sent: number; failed: number; slowestMs: number; latencies: number[] }> {
  const probes: Array<Promise<number | undefined>> = [];
  const end = Date.now() + o.durationMs;
  while (Date.now() < end) {
    const started = performance.now();
    probes.push(
      fetch(`${url}${o.path ?? '/-/healthy'}`, { signal: AbortSignal.timeout(o.timeoutMs) }).then(
        async (r) => {
          await r.arrayBuffer();
          return r.status === 200 ? performance.now() - started : undefined;
        },
        () => undefined,
      ),
    );
    await new Promise((r) => setTimeout(r, o.everyMs));
  }
  const results = await Promise.all(probes);
  const latencies = results.filter((r): r is number => r !== undefined);
  return { sent: results.length, failed: results.length - latencies.length, slowestMs: Math.max(0, ...latencies), latencies };
}
