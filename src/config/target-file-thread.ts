import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { checkTargetText, type TargetFileCheck } from './servers-files.js';

const WORKER = new URL('./target-file-worker.js', import.meta.url);

/**
 * Checks a target file's text on a thread started for it (a big file changes seldom: no thread is kept for it), so the
 * event loop keeps answering /metrics and the health checks while thousands of targets are parsed. Run from TypeScript
 * sources (unit tests) there is no compiled thread, and the file is checked inline.
 */
export function checkTargetTextOnThread(path: string, text: string, modules: ReadonlySet<string>): Promise<TargetFileCheck> {
  if (!existsSync(fileURLToPath(WORKER))) return Promise.resolve(checkTargetText(path, text, modules));
  return new Promise((resolve) => {
    const worker = new Worker(WORKER, { workerData: { path, text, modules: [...modules] } });
    let answered = false;
    worker.once('message', (check: TargetFileCheck) => {
      answered = true;
      resolve(check);
      void worker.terminate();
    });
    worker.once('error', (err) => {
      answered = true;
      resolve({ groups: [], problems: [`${path}: could not be checked: ${err.message}`] });
    });
    worker.once('exit', (code) => {
      if (!answered) resolve({ groups: [], problems: [`${path}: could not be checked (its thread exited with code ${code})`] });
    });
  });
}
