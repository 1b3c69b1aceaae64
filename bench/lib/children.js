import { fork, spawn } from 'node:child_process';
import { constants } from 'node:os';

/**
 * Every process the bench starts, so none outlives it: killed on normal exit, on Ctrl-C / SIGTERM and on
 * a crash. Workers also exit on their own when their IPC channel closes (see rpc-worker.js).
 */
const live = new Set();
let hooked = false;

function killAll() {
  for (const child of live) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  live.clear();
}

function hookProcessExit() {
  if (hooked) return;
  hooked = true;
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping child processes\n`);
      killAll();
      process.exit(128 + (constants.signals[signal] ?? 0));
    });
  }
}

function track(child) {
  hookProcessExit();
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Kills every child now (the global deadline and fatal errors use this). */
export function killAllChildren() {
  killAll();
}

/**
 * Resolves when `child` has exited. A worker is asked first by closing its IPC channel (it exits on its
 * own, writing a `--cpu-prof` profile when asked for one); then SIGTERM, then SIGKILL, `graceMs` apart.
 */
export function stopChild(child, graceMs = 5000) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const term = setTimeout(() => child.kill('SIGTERM'), child.connected ? graceMs : 0);
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs * 2);
    child.once('exit', () => {
      clearTimeout(term);
      clearTimeout(kill);
      resolve();
    });
    if (child.connected) child.disconnect();
  });
}

/**
 * Forks a bench worker (a module that calls serveRpc) and returns a handle to call its methods.
 * `call` rejects when the worker throws, exits, or does not answer within `timeoutMs`.
 */
export async function startWorker(name, moduleUrl, { execArgv = [], env = process.env, readyTimeoutMs = 30_000 } = {}) {
  const child = track(fork(new URL(moduleUrl), [], { execArgv, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  const pending = new Map();
  const listeners = new Map();
  let nextId = 1;
  let exited;

  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} worker did not start within ${readyTimeoutMs} ms`)), readyTimeoutMs);
    child.on('message', (m) => {
      if (m.ready) {
        clearTimeout(timer);
        resolve();
      } else if (m.id !== undefined) {
        const p = pending.get(m.id);
        if (!p) return;
        pending.delete(m.id);
        clearTimeout(p.timer);
        if (m.error !== undefined) p.reject(new Error(`${name}.${p.method}: ${m.error}`));
        else p.resolve(m.result);
      } else if (m.event !== undefined) {
        for (const fn of listeners.get(m.event) ?? []) fn(m.data);
      }
    });
    child.once('exit', (code, signal) => {
      exited = `${name} worker exited (${signal ?? `code ${code}`})`;
      clearTimeout(timer);
      reject(new Error(exited));
      for (const p of pending.values()) {
        clearTimeout(p.timer);
        p.reject(new Error(`${exited} during ${p.method}`));
      }
      pending.clear();
    });
  });
  await ready;

  return {
    name,
    pid: child.pid,
    call(method, params = {}, timeoutMs = 120_000) {
      if (exited) return Promise.reject(new Error(`${exited}; cannot call ${method}`));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${name}.${method} did not answer within ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, { method, resolve, reject, timer });
        child.send({ id, method, params });
      });
    },
    on(event, fn) {
      listeners.set(event, [...(listeners.get(event) ?? []), fn]);
    },
    close: () => stopChild(child),
  };
}

/**
 * Starts a plain process (the exporter CLI) with piped output; the caller reads its stdout/stderr.
 * stdin stays a pipe so the process can notice the bench going away (see exporter-preload.js).
 */
export function startProcess(command, args, { env = process.env, cwd } = {}) {
  return track(spawn(command, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] }));
}
