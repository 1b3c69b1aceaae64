#!/usr/bin/env node
import { receiveSignals, runInWorker, servesInWorker } from './serve-thread.js';

/**
 * The entry point. `serve` (the default command) goes to a worker thread with a bounded heap (serve-thread.ts);
 * this thread then only waits for it, so it loads nothing else: the argument parser and everything the command
 * needs are loaded where the command runs.
 */
const args = process.argv.slice(2);
if (servesInWorker(args)) {
  await runInWorker(new URL(import.meta.url), args);
} else {
  receiveSignals();
  await (await import('./cli-main.js')).run();
}
