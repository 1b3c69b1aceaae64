/**
 * Waits `ms`, or less when `signal` aborts first (then it resolves, it does not throw). With `unref`, the
 * timer does not keep the process alive.
 */
export function sleep(ms: number, signal?: AbortSignal, opts: { unref?: boolean } = {}): Promise<void> {
  if (signal?.aborted || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (opts.unref) timer.unref();
    signal?.addEventListener('abort', done, { once: true });
  });
}
