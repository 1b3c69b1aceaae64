/**
 * The W3C-like format of WSE log files: header lines, then one tab-separated line per event with `-` for
 * empty fields. The access log and the error/stats logs use different field orders.
 */

export const LOG_TYPES = ['wowzastreamingengine_access', 'wowzastreamingengine_error', 'wowzastreamingengine_stats'] as const;
export type LogType = (typeof LOG_TYPES)[number];

export const ACCESS_FIELDS = [
  'date', 'time', 'tz', 'x-event', 'x-category', 'x-severity', 'x-status', 'x-ctx', 'x-comment', 'x-vhost', 'x-app', 'x-appinst',
  'x-duration', 's-ip', 's-port', 's-uri', 'c-ip', 'c-proto', 'c-referrer', 'c-user-agent', 'c-client-id', 'cs-bytes', 'sc-bytes',
  'x-stream-id', 'x-spos', 'cs-stream-bytes', 'sc-stream-bytes', 'x-sname', 'x-sname-query', 'x-file-name', 'x-file-ext',
  'x-file-size', 'x-file-length', 'x-suri', 'x-suri-stem', 'x-suri-query', 'cs-uri-stem', 'cs-uri-query',
] as const;

/** The error and stats logs' order: severity first, no time zone column. */
export const ERROR_FIELDS = [
  'x-severity', 'x-category', 'x-event', 'date', 'time', 'c-client-id', 'c-ip', 'c-port', 'cs-bytes', 'sc-bytes', 'x-duration',
  'x-sname', 'x-stream-id', 'x-spos', 'sc-stream-bytes', 'cs-stream-bytes', 'x-file-size', 'x-file-length', 'x-ctx', 'x-comment',
] as const;

export function isLogType(name: string): name is LogType {
  return (LOG_TYPES as readonly string[]).includes(name);
}

export function fieldsOf(type: LogType): readonly string[] {
  return type === 'wowzastreamingengine_access' ? ACCESS_FIELDS : ERROR_FIELDS;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/**
 * The simulated server's local zone. Real servers log in the machine's local time: the access log names the zone in
 * its `tz` column, the error and stats logs have none and their `#Start-Date` header names it (a real 4.7.1 server:
 * `#Start-Date: 2017-11-20 14:29:17 IST`, India, +05:30). The simulator does the same, so a client that reads those
 * lines as UTC is five and a half hours off in every test.
 */
export const SERVER_ZONE = { name: 'IST', offsetMinutes: 330 } as const;

const local = (ms: number) => new Date(ms + SERVER_ZONE.offsetMinutes * 60_000);

/** `2025-01-14`, the server's local date. */
export function logDate(ms: number): string {
  const d = local(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/** `12:45:22`, the server's local time. */
export function logTime(ms: number): string {
  const d = local(ms);
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** The instant of a local `date` and `time` the server wrote, or NaN. */
export function logInstant(date: string, time: string): number {
  return Date.parse(`${date}T${time}Z`) - SERVER_ZONE.offsetMinutes * 60_000;
}

/** What a file's header says about it. */
export interface LogHeader {
  version: string;
  /** `2025-01-14 18:15:22 IST` (local time and zone) */
  startDate: string;
  software: string;
  /** `2025-01-14` */
  date: string;
  /** The field names, tab-separated as in the `#Fields` line. */
  fields: string;
}

export function makeHeader(startMs: number, software: string, fields: readonly string[]): LogHeader {
  return { version: '1.0', startDate: `${logDate(startMs)} ${logTime(startMs)} ${SERVER_ZONE.name}`, software, date: logDate(startMs), fields: fields.join('\t') };
}

export function headerLines(h: LogHeader): string[] {
  return [`#Version: ${h.version}`, `#Start-Date: ${h.startDate}`, `#Software: ${h.software}`, `#Date: ${h.date}`, `#Fields: ${h.fields}`];
}

export type LogRecord = Record<string, string | number | boolean | null | undefined>;

/**
 * One line from a record keyed by field name; missing or empty fields become `-`, `date`/`time`/`tz`
 * default to `whenMs`. Tabs and line breaks inside values become spaces: they would split the line.
 */
export function formatRecord(fields: readonly string[], record: LogRecord, whenMs: number): string {
  const defaults: LogRecord = { date: logDate(whenMs), time: logTime(whenMs), tz: SERVER_ZONE.name };
  return fields
    .map((f) => {
      const v = record[f] ?? defaults[f];
      if (v === undefined || v === null || v === '') return '-';
      return String(v).replace(/[\t\r\n]+/g, ' ');
    })
    .join('\t');
}
