/**
 * Loaded with `--import` into the exporter CLI under measurement; bench only, never shipped. `serve` runs on the
 * main thread (issue 27); the worker branch below is for a build that ran it in a worker thread.
 * - SIGUSR2 (main thread): two full garbage collections (needs --expose-gc) in the thread that runs the
 *   exporter, then one line on stderr with process.memoryUsage() (heap figures of that thread's heap, RSS of
 *   the process), so heap figures are live objects only, not garbage not yet collected.
 * - stdin closing (the bench finished, crashed or was killed): exit, so no exporter is left behind.
 */
import { BroadcastChannel, isMainThread } from 'node:worker_threads';

const channel = new BroadcastChannel('wowza-exporter-bench');
channel.unref();

function report() {
  globalThis.gc?.();
  globalThis.gc?.();
  // Active handles (sockets, timers, servers, watchers) of the thread that runs the exporter: what a leak grows.
  const handles = typeof process._getActiveHandles === 'function' ? process._getActiveHandles().length : undefined;
  process.stderr.write(`${JSON.stringify({ benchMemory: { ...process.memoryUsage(), handles }, gc: typeof globalThis.gc === 'function', thread: isMainThread ? 'main' : 'worker' })}\n`);
}

if (isMainThread) {
  // A worker announces itself; until one has, the exporter runs here.
  let worker = false;
  channel.onmessage = (e) => {
    if (e.data === 'worker') worker = true;
  };
  process.on('SIGUSR2', () => (worker ? channel.postMessage('report') : report()));
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
} else {
  channel.onmessage = (e) => {
    if (e.data === 'report') report();
  };
  channel.postMessage('worker');
}
