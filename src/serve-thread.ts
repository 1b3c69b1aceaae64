import { getHeapStatistics } from 'node:v8';
import { SHARE_ENV, Worker, isMainThread, parentPort } from 'node:worker_threads';

/**
 * `serve` runs in a worker thread whose V8 young generation is bounded, so that `npx wowza-exporter` gets the
 * memory behaviour the image, the systemd unit and the Kubernetes manifest used to ask for with
 * `NODE_OPTIONS=--max-semi-space-size=4` (now 2) without anyone setting anything. V8 sizes a heap when it is created,
 * so this cannot be changed from inside a running one; a worker's heap is created with `resourceLimits`, which
 * Node documents (a re-exec would need `process.execve`, which Node 20 lacks, or a second process).
 *
 * The old generation is limited too (1 GB), which is what keeps V8 from growing the heap 4x between collections.
 * What V8 would otherwise take from the command line is carried over: `--max-semi-space-size` and
 * `--max-old-space-size` given in NODE_OPTIONS or to node itself become the worker's limits, so a user's own
 * settings keep working. Signals are handed to the worker, which shuts down as it would on the main thread; its
 * exit code becomes the process's.
 */

/**
 * The young generation V8 gets from `--max-semi-space-size=2`: three semi-spaces' worth. Against 4 (12 MB), the
 * peak of a poll at 20,000 series is 2-3 MB lower and scavenges, more frequent, stay around a millisecond
 * (bench/RESULTS.md); node's own default would be up to 48 MB.
 */
const DEFAULT_YOUNG_GENERATION_MB = 6;
/**
 * The old generation's limit when the user sets none: 1 GB, or V8's own default when that is lower (a small
 * machine or container). At 2 GB and above V8 lets the heap grow up to 4x between full collections, below it at
 * most 1.3-1.9x (src/heap/heap-controller.cc, MaxGrowingFactor): at 20,000 series the peak of a poll is ~7 MB
 * lower (bench/RESULTS.md). 1 GB is 25 times the live heap at 100,000 series, and a user's
 * `--max-old-space-size` replaces it.
 */
const DEFAULT_OLD_GENERATION_MB = 1024;
const FORWARDED_SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** The V8 heap flags the user gave, from node's own arguments and NODE_OPTIONS (later ones win, as in node). */
export function heapFlags(execArgv: readonly string[], nodeOptions: string | undefined): { semiSpaceMb?: number; oldSpaceMb?: number } {
  const out: { semiSpaceMb?: number; oldSpaceMb?: number } = {};
  for (const arg of [...(nodeOptions ?? '').split(/\s+/), ...execArgv]) {
    const m = /^--(max[-_]semi[-_]space[-_]size|max[-_]old[-_]space[-_]size)=(\d+)$/.exec(arg);
    if (!m) continue;
    if (m[1]!.replace(/_/g, '-') === 'max-semi-space-size') out.semiSpaceMb = Number(m[2]);
    else out.oldSpaceMb = Number(m[2]);
  }
  return out;
}

/** The worker's heap limits: the user's flags, else the defaults above (never above V8's own limit). */
export function workerLimits(flags: { semiSpaceMb?: number; oldSpaceMb?: number }, heapSizeLimitBytes: number): { maxYoungGenerationSizeMb: number; maxOldGenerationSizeMb: number } {
  return {
    maxYoungGenerationSizeMb: flags.semiSpaceMb !== undefined ? flags.semiSpaceMb * 3 : DEFAULT_YOUNG_GENERATION_MB,
    maxOldGenerationSizeMb: flags.oldSpaceMb ?? Math.min(DEFAULT_OLD_GENERATION_MB, Math.floor(heapSizeLimitBytes / 2 ** 20)),
  };
}

/** Whether this invocation is a `serve` (the default command) that should get the worker. */
export function servesInWorker(argv: readonly string[]): boolean {
  if (!isMainThread) return false;
  if (argv.some((a) => a === '--help' || a === '-h' || a === '--version')) return false;
  const first = argv[0];
  return first === undefined || first === 'serve' || first.startsWith('-');
}

/** Runs this CLI again in a worker thread with bounded heap limits; resolves when it has exited. */
export function runInWorker(script: URL, argv: readonly string[]): Promise<void> {
  const flags = heapFlags(process.execArgv, process.env.NODE_OPTIONS);
  const worker = new Worker(script, {
    argv: [...argv],
    env: SHARE_ENV,
    resourceLimits: workerLimits(flags, getHeapStatistics().heap_size_limit),
  });
  // The worker's log lines pass through here; a reader that went away (`serve 2>&1 | head`) must not take the
  // process down: the worker's own writes see the same pipe and report it.
  process.stdout.on('error', () => {});
  process.stderr.on('error', () => {});
  const forward = (signal: NodeJS.Signals) => worker.postMessage({ signal });
  for (const s of FORWARDED_SIGNALS) process.on(s, forward);
  return new Promise((resolve) => {
    worker.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') {
        const limit = workerLimits(flags, getHeapStatistics().heap_size_limit).maxOldGenerationSizeMb;
        process.stderr.write(
          `wowza-exporter: serve ran out of its ${limit} MB JavaScript heap; give it more with NODE_OPTIONS=--max-old-space-size=${limit * 2} (and check discovery.max_streams_per_server)\n`,
        );
      } else process.stderr.write(`wowza-exporter: ${err.stack ?? err.message}\n`);
      process.exitCode = 1;
    });
    worker.on('exit', (code) => {
      for (const s of FORWARDED_SIGNALS) process.off(s, forward);
      if (code !== 0 || process.exitCode === undefined) process.exitCode = code;
      resolve();
    });
  });
}

/** In the worker: signals the main thread received arrive as messages and reach the usual handlers. */
export function receiveSignals(): void {
  if (isMainThread || !parentPort) return;
  parentPort.on('message', (m: { signal?: NodeJS.Signals }) => {
    if (m.signal) process.emit(m.signal, m.signal);
  });
  // The port must not keep the worker alive once the command is done.
  parentPort.unref();
}
