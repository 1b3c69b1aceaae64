import { PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * V8 settings that keep `serve` small, set from inside the process because `npx wowza-exporter` passes node no
 * flags (issue 27; bench/RESULTS.md has what each measured). Both are read by V8 when it needs them, not when the
 * heap is created, so setting them here, before any module the command loads, works on the main thread: no second
 * isolate (the worker thread `serve` used to run in cost 12 MB) and no re-exec (`process.execve` needs Node 22.15).
 *
 * - `--liftoff-only`: undici parses HTTP with llhttp compiled to WebAssembly. V8 compiles it with Liftoff and then
 *   again with TurboFan, whose compile of that one large state machine took 35 MB for about a second at the first
 *   request: the start-up peak of 120 MB that a one-stream server showed. Liftoff's code parses the exporter's
 *   answers (a few KB each) at no cost that the bench could tell from noise.
 * - The young generation stops growing at two 2 MB semi-spaces (what `--max-semi-space-size=2` gives). V8 doubles
 *   it after a burst of allocation (loading modules, a poll) up to 2 × 16 MB and keeps it; its maximum is fixed when
 *   the heap is created, but the growth factor is read at each growth, so while it is at 4 MB in all the factor
 *   is 1 (`--semi-space-growth-factor=1`). Stopping at 2 × 1 MB costs scrapes at 20,000 series about
 *   10 ms at p99 (more frequent scavenges); 2 × 2 MB measured the same as before.
 * - `--heap-growing-percent=60`: after a full collection the old generation may grow by 60 % before the next one.
 *   V8 picks that factor from the heap's limit, which node sizes from the machine's memory: at 2 GB and more it
 *   allows up to 4x (`MaxGrowingFactor` in V8's heap-controller.cc), so a poll at 20,000 series took the process
 *   to 106 MB where a 1 GB limit (1.6x) kept it at 95. The limit itself cannot change in a running process; the
 *   factor can, and this is the one a 1 GB limit gives.
 * - `--interrupt-budget=1000000` (V8's default is 132 KB of bytecode): a function is optimised by TurboFan after
 *   about 7 times as much work. Start-up code that runs a few times is then never optimised, which took 6 MB of
 *   compiler memory and code that stayed; what runs every poll or scrape is optimised a little later.
 * - `--no-sparkplug --no-turbofan` until there is work for them (`optimiseJavaScript`): V8's baseline compiler
 *   turns every function that has run a little into machine code kept beside its bytecode, and the first function
 *   TurboFan compiles brings that compiler's own code into memory: 3.5 MB together for a one-stream server, whose
 *   exporter runs each function a few times a poll (interpreted, microseconds). The exporter turns both on for
 *   good when its polls hold 1,000 series or more, when it ends 30 polls within 10 s (several servers, or short
 *   intervals), when a probe answers 1,000 series, when it ships logs, or when its event loop is busy half the time
 *   for a few seconds (a poll of few series but heavy answers: interpreted, a server's first such poll took twice as
 *   long, 9 s against a 9 s deadline), before the hot paths get hot (a scrape of 20,000 series, a log backlog);
 *   from then on V8 tiers up as it always does.
 *
 * A setting of the user's own, in NODE_OPTIONS or on node's command line, wins: a flag named the same is left to
 * it, and `--max-semi-space-size` (a young generation of the user's size) leaves the growth to V8.
 */
export function footprintFlags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = givenFlagNames(execArgv, nodeOptions);
  const has = (name: string) => given.includes(name);
  const flags: string[] = [];
  if (!has('liftoff-only') && !has('liftoff') && !has('wasm-tier-up')) flags.push('--liftoff-only');
  if (!has('interrupt-budget')) flags.push('--interrupt-budget=1000000');
  if (!has('heap-growing-percent')) flags.push('--heap-growing-percent=60');
  if (!has('sparkplug') && !has('jitless')) flags.push('--no-sparkplug');
  if (!['turbofan', 'opt', 'max-opt', 'jitless'].some(has)) flags.push('--no-turbofan');
  return flags;
}

/** Series at which the exporter's work is worth compiled code (see `--no-turbofan` above). */
export const OPTIMISE_FROM_SERIES = 1_000;
/**
 * The event loop's busy share (smoothed over about three seconds, polling/loop-load.ts) at which it is too: a
 * one-stream server's exporter is busy a few per cent of the time, start-up included.
 */
export const OPTIMISE_FROM_LOOP_BUSY = 0.5;
/**
 * Polls (of any collector, failed ones too) in a window at which it is too: 3 a second. One server at the default
 * intervals ends 9 polls in 15 s; five servers, or one polled every second, pass it.
 */
export const OPTIMISE_FROM_POLLS = { polls: 30, windowMs: 10_000 } as const;

/** The compilers `serve` holds off until there is work for them (`--sparkplug`, `--turbofan`). */
let held: string[] = [];

/**
 * Turns on for good the compilers `serve` started without; true the one time it does. V8 reads these flags at
 * each tier-up decision, so functions that get warm or hot from now on are compiled as usual.
 */
export function optimiseJavaScript(): boolean {
  if (held.length === 0) return false;
  for (const flag of held) setFlagsFromString(flag);
  held = [];
  return true;
}

/** The names of the flags the user gave node (NODE_OPTIONS and its own arguments), dashed, without `no-`. */
function givenFlagNames(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  return [...(nodeOptions ?? '').split(/\s+/), ...execArgv]
    .filter((a) => a.startsWith('--'))
    .map((a) => a.slice(2).split('=')[0]!.replace(/_/g, '-').replace(/^no-/, ''));
}

/** Whether the young generation is left to the user: they sized it or set how it grows. */
export function userSizesYoungGeneration(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  const given = givenFlagNames(execArgv, nodeOptions);
  return ['max-semi-space-size', 'min-semi-space-size', 'semi-space-growth-factor'].some((name) => given.includes(name));
}

/** The young generation's size in all (both semi-spaces) at which it stops growing. */
export const YOUNG_GENERATION_CAP_BYTES = 4 * 1024 * 1024;

/**
 * Polls (of any collector) in a window at which the young generation is let grow as V8 grows it (to 2 x 16 MB): 20 a
 * second, about 35 servers at the default intervals. At 1,000 servers a poll's short-lived objects filled 4 MB many
 * times a second and scavenges took 22 % of the event loop, 17 % without the cap, with every server up 15 s sooner
 * (bench/RESULTS.md); a fleet's exporter holds hundreds of MB, where 28 MB more is small.
 */
export const FLEET_FROM_POLLS = { polls: 200, windowMs: 10_000 } as const;

/** Watches scavenges while the young generation is capped; undefined once the cap is lifted (or never set). */
let youngCap: PerformanceObserver | undefined;

/**
 * Keeps the young generation from growing past the cap: after each scavenge, the growth factor is 1 while it is at
 * the cap and V8's own 2 below it (V8 shrinks it again when allocation slows, and it may then grow back to the cap).
 */
function capYoungGeneration(): void {
  let capped = false;
  const check = () => {
    const atCap = (getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0) >= YOUNG_GENERATION_CAP_BYTES;
    if (atCap === capped) return;
    capped = atCap;
    setFlagsFromString(atCap ? '--semi-space-growth-factor=1' : '--semi-space-growth-factor=2');
  };
  check();
  youngCap = new PerformanceObserver((list) => {
    if (list.getEntries().some((e) => (e as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR)) check();
  });
  youngCap.observe({ entryTypes: ['gc'] });
}

/** Lets the young generation grow as V8 grows it from now on (a fleet's rate of polls); true the one time it does. */
export function liftYoungGenerationCap(): boolean {
  if (!youngCap) return false;
  youngCap.disconnect();
  youngCap = undefined;
  setFlagsFromString('--semi-space-growth-factor=2');
  return true;
}

/** Whether `argv` runs `serve` (the default command), the long-running process these flags are for. */
export function runsServe(argv: readonly string[]): boolean {
  if (argv.some((a) => a === '--help' || a === '-h' || a === '--version')) return false;
  const first = argv[0];
  return first === undefined || first === 'serve' || first.startsWith('-');
}

/** Sets the flags for `serve`; the other commands run with V8's own settings. */
export function applyFootprintFlags(argv: readonly string[]): void {
  if (!runsServe(argv)) return;
  const flags = footprintFlags(process.execArgv, process.env.NODE_OPTIONS);
  for (const flag of flags) setFlagsFromString(flag);
  held = flags.filter((f) => f === '--no-sparkplug' || f === '--no-turbofan').map((f) => `--${f.slice('--no-'.length)}`);
  if (!userSizesYoungGeneration(process.execArgv, process.env.NODE_OPTIONS)) capYoungGeneration();
}
