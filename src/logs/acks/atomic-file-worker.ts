import { parentPort } from 'node:worker_threads';
import { keepCopySync, replaceFileSync } from './atomic-file.js';
import type { AtomicFileRequest, AtomicFileResponse } from './atomic-file-thread.js';

/** The thread of AtomicFileThread: does the file operations it is sent, one after the other, in the order they come. */

parentPort!.on('message', (r: AtomicFileRequest) => {
  let response: AtomicFileResponse;
  try {
    if (r.op === 'replace') response = { id: r.id, written: replaceFileSync(r.path, r.text, r.options) };
    else {
      keepCopySync(r.source, r.previous, r.share);
      response = { id: r.id };
    }
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    response = { id: r.id, error: { message: e.message ?? String(err), ...(e.code ? { code: e.code } : {}) } };
  }
  parentPort!.postMessage(response);
});
