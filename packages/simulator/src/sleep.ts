/**
 * Resolves after `ms`, or as soon as `signal` aborts (it resolves then too, never rejects). With `unref`, the wait
 * does not keep the process alive.
 */
export function sleep(ms: number, signal?: AbortSignal, opts: { unref?: boolean } = {}): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', finish);
      resolve();
    };
    const timer = setTimeout(finish, ms);
    if (opts.unref) timer.unref();
    signal?.addEventListener('abort', finish, { once: true });
  });
}
