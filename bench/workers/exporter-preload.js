/**
 * Loaded with `--import` into the exporter CLI under measurement; bench only, never shipped. `serve` runs on the
 * main thread (issue 27), which answers here; worker threads (the log pipeline's encoders load this file too, as
 * every worker inherits `--import`) do nothing.
 * - SIGUSR2: two full garbage collections (needs --expose-gc), then one line on stderr with process.memoryUsage()
 *   (the main thread's heap, the process's RSS) and the heap's committed size by space, so heap figures are live
 *   objects only, not garbage not yet collected.
 * - stdin closing (the bench finished, crashed or was killed): exit, so no exporter is left behind.
 */
import { getHeapSpaceStatistics } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

function report() {
  globalThis.gc?.();
  globalThis.gc?.();
  // Active handles (sockets, timers, servers, watchers) of the thread that runs the exporter: what a leak grows.
  const handles = typeof process._getActiveHandles === 'function' ? process._getActiveHandles().length : undefined;
  // The heap's committed size by space: which one a heapTotal grew in (the young generation grows with the allocation rate).
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]));
  process.stderr.write(`${JSON.stringify({ benchMemory: { ...process.memoryUsage(), handles, spaces }, gc: typeof globalThis.gc === 'function' })}\n`);
}

if (isMainThread) {
  process.on('SIGUSR2', report);
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
}
