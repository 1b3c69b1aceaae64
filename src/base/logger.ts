import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';
import { escapeControlCharacters, escapeJsonControlCharacters } from './control-characters.js';

export type { Logger } from 'pino';

export type LogFormat = 'json' | 'logfmt';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * Paths pino blanks before a line is written. Secrets must never be logged in the first place; this is
 * the safety net for objects that carry them by accident (request options, config dumps, headers).
 */
export const REDACT_PATHS = [
  'password',
  '*.password',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'authorization',
  'Authorization',
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  'headers.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
  'config.servers[*].password',
];

/** Renders one pino JSON line as logfmt (`level=info msg="..." key=value`). */
export function jsonLineToLogfmt(line: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const parts: string[] = [];
  const push = (k: string, v: unknown) => {
    if (v === undefined) return;
    let s = typeof v === 'string' ? v : JSON.stringify(v);
    if (s === undefined) return;
    // Quoted as JSON when it holds anything but plain printable text: a server's control characters (which the
    // JSON line held escaped, and parsing brought back) are never written to the terminal as they are.
    // eslint-disable-next-line no-control-regex
    if (s === '' || /[\s"=\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(s)) s = escapeJsonControlCharacters(JSON.stringify(s));
    parts.push(`${escapeControlCharacters(k)}=${s}`);
  };
  push('ts', typeof rec.time === 'number' ? new Date(rec.time).toISOString() : rec.time);
  push('level', rec.level);
  push('msg', rec.msg);
  for (const [k, v] of Object.entries(rec)) {
    if (k === 'time' || k === 'level' || k === 'msg') continue;
    push(k, v);
  }
  return parts.join(' ') + '\n';
}

/**
 * pino's JSON escapes C0 controls but writes DEL, C1 controls and bidi overrides as they are: a log line holding a
 * server's text must not reach a terminal (journalctl -f, kubectl logs) with them.
 */
function jsonDestination(out: NodeJS.WritableStream): DestinationStream {
  return {
    write(chunk: string) {
      out.write(escapeJsonControlCharacters(chunk));
    },
  };
}

function logfmtDestination(out: NodeJS.WritableStream): DestinationStream {
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n')) if (line) out.write(jsonLineToLogfmt(line));
    },
  };
}

const quieted = new WeakSet<NodeJS.WritableStream>();

/**
 * A reader of the log that goes away (a closed pipe: EPIPE) makes the stream emit 'error'; without a
 * listener that kills the process. Losing log lines is better than losing the exporter, and there is
 * nowhere left to report it.
 */
function keepWritingErrorsQuiet(out: NodeJS.WritableStream): void {
  if (quieted.has(out)) return;
  quieted.add(out);
  out.on('error', () => undefined);
}

export interface LoggerSettings {
  level?: LogLevel;
  format?: LogFormat;
  /** Where lines go; stderr by default so stdout stays free for NDJSON sinks and CLI output. */
  destination?: NodeJS.WritableStream;
}

/** One logger per process; components take `logger.child({ component: ... })`. */
export function createLogger(settings: LoggerSettings = {}): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    base: undefined,
    formatters: { level: (label) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.epochTime,
  };
  const out = settings.destination ?? process.stderr;
  keepWritingErrorsQuiet(out);
  if (settings.format === 'logfmt') return pino(options, logfmtDestination(out));
  return pino(options, jsonDestination(out));
}

/** A logger that drops everything, for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
