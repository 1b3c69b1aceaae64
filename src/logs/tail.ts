import { escapeControlCharacters, stringifyJsonSafely } from '../base/control-characters.js';
import { silentLogger, type Logger } from '../base/logger.js';
import { redactSecrets } from '../base/redact.js';
import { LogFollower, type FollowerChunk, type ServerFilter } from './source/follower.js';
import type { LogSource } from './source/source.js';
import type { LogRecord } from './transform/w3c-parser.js';

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
  /**
   * `json` (default): one parsed record per line; `raw`: the lines as the server holds them, headers included:
   * byte-exact into a pipe or file, with control characters escaped on a terminal (see `terminal`).
   */
  format?: 'json' | 'raw';
  out: NodeJS.WritableStream;
  /** `out` is a terminal: raw lines are shown with their control characters escaped, never acted on. */
  terminal?: boolean;
  /**
   * Blank credentials in URLs and token-like query values in JSON records, as the sinks do (`logs.redact_secrets`,
   * default true). Raw lines stay as the server holds them.
   */
  redactSecrets?: boolean;
  signal?: AbortSignal;
  lineCount?: number;
  followIntervalMs?: number;
  timeZone?: string;
  logger?: Logger;
}

/** A raw line for a terminal: a hostile line must not write the clipboard, retitle the window or clear the screen. */
function forTerminal(line: string): string {
  // The CR of a CRLF line does nothing visible before the newline; escaped, it would mark every line of such a log.
  return escapeControlCharacters(line.endsWith('\r') ? line.slice(0, -1) : line);
}

/** Each text field redacted: the same as parsing the redacted line (no pattern crosses a tab), which the sinks do. */
function redactRecord(record: LogRecord): LogRecord {
  const out: LogRecord = {};
  for (const [k, v] of Object.entries(record)) out[k] = typeof v === 'string' ? redactSecrets(v) : v;
  return out;
}

/** Renders a chunk: raw lines, or NDJSON of the records (C1 and bidi escaped too, which JSON.stringify leaves). */
function render(chunk: FollowerChunk, format: 'json' | 'raw', terminal: boolean, redact: boolean): string {
  let text = '';
  for (const { text: line, parsed } of chunk.lines) {
    if (format === 'raw') text += (terminal ? forTerminal(line) : line) + '\n';
    else if (parsed.kind === 'record') {
      const record = redact ? redactRecord(parsed.record) : parsed.record;
      text += stringifyJsonSafely({ server: chunk.server, log_type: chunk.logType, ...record }) + '\n';
    }
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
  // A reader that goes away (`| head`) makes `out` emit 'error' as well as fail the write: without a listener
  // that is an uncaught exception and a stack trace.
  const onOutError = (err: NodeJS.ErrnoException) => {
    writeError ??= err;
    stop.abort();
  };
  options.out.on('error', onOutError);

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
    deliver: (chunk) => write(render(chunk, format, options.terminal === true, options.redactSecrets !== false)),
  });
  try {
    await follower.run(stop.signal, options.follow ?? false);
  } finally {
    outer?.removeEventListener('abort', onOuterAbort);
    options.out.removeListener('error', onOutError);
  }
  if (writeError && writeError.code !== 'EPIPE') throw writeError;
}
