import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { startProcess, stopChild } from './children.js';
import { cpuTimeMs, resetPeak, residentMemory } from './proc-stats.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const PRELOAD = new URL('../workers/exporter-preload.js', import.meta.url).href;

let configSeq = 0;

/**
 * Runs `wowza-exporter serve` (the built CLI, as users run it) in a process of its own, with `config`
 * (JSON is YAML) written to `dir`. Its RSS is its own: the simulator and the bench live elsewhere.
 */
export async function startExporterProcess({ config, password, dir, env = {}, startTimeoutMs = 30_000 }) {
  const file = join(dir, `exporter-${++configSeq}.yaml`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  // BENCH_CPU_PROF=<dir>: write a V8 CPU profile of each exporter there (written when it exits).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  // `env.BENCH_NODE_ARGS`: node options for one case that NODE_OPTIONS does not accept (V8 flags), space-separated.
  const nodeArgs = (env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = startProcess(process.execPath, [...profile, ...nodeArgs, '--expose-gc', '--import', PRELOAD, CLI, 'serve', '--config', file], {
    env: { ...process.env, ...env, WOWZA_PASSWORD: password },
  });
  // configFile: rewrite it and send SIGHUP to reload.
  return { ...(await watch(child, startTimeoutMs)), configFile: file };
}

/**
 * Runs the built CLI with `args` and only `env`, exactly as a user's command line would: no config file written
 * for it, no preload (so `memory()` never answers; `resident()` does), no environment but what is given.
 */
export async function startCliProcess({ args, env, startTimeoutMs = 30_000 }) {
  return watch(startProcess(process.execPath, [CLI, ...args], { env }), startTimeoutMs);
}

/** Follows a started exporter's log until it listens, and returns the handle the bench drives it with. */
async function watch(child, startTimeoutMs) {
  const warnings = [];
  const stderrTail = [];
  const memoryWaiters = [];
  let resolveUrl;
  const listening = new Promise((resolve) => (resolveUrl = resolve));

  // pino writes JSON lines (to stderr); the preload's memory reports are JSON lines too.
  const onLine = (line) => {
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      stderrTail.push(line);
      if (stderrTail.length > 20) stderrTail.shift();
      return;
    }
    if (entry.benchMemory) {
      memoryWaiters.shift()?.(entry.benchMemory);
      return;
    }
    if (entry.msg === 'exporter listening') resolveUrl(entry.url);
    // pino levels: 40 warn, 50 error
    if (entry.level >= 40 && warnings.length < 200) warnings.push(`${entry.msg}${entry.err ? `: ${entry.err}` : ''}${entry.reason ? ` (${entry.reason})` : ''}`);
    if (entry.level >= 50) {
      stderrTail.push(line);
      if (stderrTail.length > 20) stderrTail.shift();
    }
  };
  createInterface({ input: child.stdout }).on('line', onLine);
  createInterface({ input: child.stderr }).on('line', onLine);

  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? `code ${code}`)));
  const url = await Promise.race([
    listening,
    exited.then((how) => {
      throw new Error(`exporter exited (${how}) before listening: ${stderrTail.join(' | ')}`);
    }),
    delay(startTimeoutMs).then(() => {
      throw new Error(`exporter did not listen within ${startTimeoutMs} ms: ${stderrTail.join(' | ')}`);
    }),
  ]);

  return {
    pid: child.pid,
    url,
    /** Warnings and errors the exporter logged (up to 200), e.g. failed polls. */
    warnings,
    clearWarnings: () => {
      warnings.length = 0;
    },

    /** Waits until /-/ready answers 200 (every collector finished its first poll). */
    async ready(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const res = await request(`${url}/-/ready`).catch(() => undefined);
        const status = res?.statusCode;
        await res?.body.dump();
        if (status === 200) return;
        await delay(100);
      }
      throw new Error(`exporter not ready within ${timeoutMs} ms`);
    },

    /** Heap after a full GC (from the process itself) and RSS now and at peak (from /proc). */
    async memory(timeoutMs = 10_000) {
      const usage = new Promise((resolve) => memoryWaiters.push(resolve));
      child.kill('SIGUSR2');
      const heap = await Promise.race([
        usage,
        delay(timeoutMs).then(() => {
          throw new Error('exporter did not report its memory');
        }),
      ]);
      return { heapUsed: heap.heapUsed, heapTotal: heap.heapTotal, external: heap.external, handles: heap.handles, spaces: heap.spaces, ...residentMemory(child.pid) };
    },

    /** RSS now and its peak so far (from /proc, no GC). */
    resident: () => residentMemory(child.pid),

    /** Starts peak RSS over from the current RSS (start-up transients are then excluded). */
    resetPeak: () => resetPeak(child.pid),

    /** CPU time the exporter has used so far (ms). */
    cpuMs: () => cpuTimeMs(child.pid),

    close: () => stopChild(child),
  };
}
