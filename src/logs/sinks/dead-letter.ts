import { entryDocumentJson, type LogEntry } from '../transform/entry.js';
import { RotatingFile } from './rotating-file.js';
import { scrubSecrets } from '../../base/secret-scrubber.js';

/** Size cap of the dead-letter file and rotated copies kept: it must not fill the disk on a bad day. */
const MAX_BYTES = 64 * 1024 * 1024;
const MAX_FILES = 2;

/**
 * Lines a sink refused for good (a 4xx other than 429, or retries given up), one JSON object per line
 * with why, so they can be inspected and replayed. Writes from several sinks are serialized.
 */
export class DeadLetterFile {
  private readonly file: RotatingFile;
  private queue: Promise<void> = Promise.resolve();

  constructor(readonly path: string) {
    this.file = new RotatingFile({ path, maxBytes: MAX_BYTES, maxFiles: MAX_FILES });
  }

  write(sink: string, reason: string, entries: readonly LogEntry[], status?: number): Promise<void> {
    const time = new Date().toISOString();
    // The reason quotes what the receiver answered: once more scrubbed of every configured secret, whoever wrote it.
    const head = JSON.stringify({ time, sink, reason: scrubSecrets(reason), ...(status !== undefined ? { status } : {}) }).slice(0, -1);
    let text = '';
    for (const e of entries) {
      // `entry` is spliced in as the document's JSON text: same output as an object there, without parsing it back.
      text += `${head},"entry":${entryDocumentJson(e)},"line":${JSON.stringify(e.line)}}\n`;
    }
    const run = this.queue.then(() => this.file.append(text));
    this.queue = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    await this.queue;
    await this.file.close();
  }
}
