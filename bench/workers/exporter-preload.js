/**
 * Loaded with `--import` into the exporter CLI under measurement; bench only, never shipped.
 * - SIGUSR2: two full garbage collections (needs --expose-gc), then one line on stderr with
 *   process.memoryUsage(), so heap figures are live objects only, not garbage not yet collected.
 * - stdin closing (the bench finished, crashed or was killed): exit, so no exporter is left behind.
 */
process.on('SIGUSR2', () => {
  globalThis.gc?.();
  globalThis.gc?.();
  process.stderr.write(`${JSON.stringify({ benchMemory: process.memoryUsage(), gc: typeof globalThis.gc === 'function' })}\n`);
});

process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
