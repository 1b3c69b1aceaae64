import { parentPort, workerData } from 'node:worker_threads';
import { checkTargetText } from './servers-files.js';

/** A thread of its own for one big target file: parses and checks it, answers, and ends. */
const { path, text, modules } = workerData as { path: string; text: string; modules: string[] };
parentPort!.postMessage(checkTargetText(path, text, new Set(modules)));
