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
