import { silentLogger, type Logger } from '../logger.js';
import { LogFollower, type FollowerChunk, type ServerFilter } from './follower.js';
import type { LogSource } from './log-source.js';

export interface TailOptions {
  source: LogSource;
  logType: string;
  /** Keep polling for new lines until `signal` aborts; otherwise stop once caught up. */
  follow?: boolean;
  /** `end` (default): start near the end, after showing `lines` lines; `beginning`: the whole current file. */
  startAt?: 'end' | 'beginning';
  /** With `startAt: 'end'`, how many lines before the end are shown first (default 10, like tail). */
  lines?: number;
  serverFilter?: ServerFilter;
  /** `json` (default): one parsed record per line; `raw`: the lines exactly as the server holds them, headers included. */
  format?: 'json' | 'raw';
  out: NodeJS.WritableStream;
  signal?: AbortSignal;
  lineCount?: number;
  followIntervalMs?: number;
  timeZone?: string;
  logger?: Logger;
}

/** Renders a chunk for the terminal: raw lines, or NDJSON of the records. */
function render(chunk: FollowerChunk, format: 'json' | 'raw'): string {
  let text = '';
  for (const { text: line, parsed } of chunk.lines) {
    if (format === 'raw') text += line + '\n';
    else if (parsed.kind === 'record') text += JSON.stringify({ server: chunk.server, log_type: chunk.logType, ...parsed.record }) + '\n';
  }
  return text;
}

/**
 * `logs tail`: prints one log of one server, optionally following it (rotation included). Resolves when
 * caught up (without `follow`) or when `signal` aborts; rejects when the server cannot be read without
 * `follow`, or when `out` fails (a closed pipe ends the tail quietly).
 */
export async function tailLog(options: TailOptions): Promise<void> {
  const format = options.format ?? 'json';
  const stop = new AbortController();
  const outer = options.signal;
  const onOuterAbort = () => stop.abort();
  if (outer?.aborted) return;
  outer?.addEventListener('abort', onOuterAbort, { once: true });
  let writeError: NodeJS.ErrnoException | undefined;

  const write = (text: string) =>
    new Promise<void>((resolve) => {
      if (text === '') return resolve();
      options.out.write(text, (err) => {
        if (err && !writeError) {
          writeError = err;
          stop.abort();
        }
        resolve();
      });
    });

  const follower = new LogFollower({
    source: options.source,
    logType: options.logType,
    startAt: options.startAt ?? 'end',
    tailLines: options.startAt === 'beginning' ? 0 : (options.lines ?? 10),
    ...(options.lineCount !== undefined ? { lineCount: options.lineCount } : {}),
    ...(options.followIntervalMs !== undefined ? { followIntervalMs: options.followIntervalMs } : {}),
    ...(options.serverFilter ? { serverFilter: options.serverFilter } : {}),
    ...(options.timeZone ? { timeZone: options.timeZone } : {}),
    logger: options.logger ?? silentLogger(),
    deliver: (chunk) => write(render(chunk, format)),
  });
  try {
    await follower.run(stop.signal, options.follow ?? false);
  } finally {
    outer?.removeEventListener('abort', onOuterAbort);
  }
  if (writeError && writeError.code !== 'EPIPE') throw writeError;
}
