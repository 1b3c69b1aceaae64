/**
 * Turns the `date`, `time` and `tz` columns of a Wowza log line into an ISO-8601 UTC timestamp.
 * Wowza writes local time with the zone as Java prints it: `UTC`, an abbreviation (`CEST`, `PST`), an
 * offset (`+0200`, `GMT+02:00`) or a region id (`Europe/Berlin`). Lines without a `tz` column (error and
 * stats logs) use the configured default zone.
 */

import { fixedOffsetMinutes, zoneOffsetMinutes } from '../../base/time-zones.js';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?$/;

export type TimestampResult = { ok: true; iso: string; ms: number } | { ok: false; error: string };

const DAY_MS = 86_400_000;
/** 10000-01-01T00:00:00Z: from here on toISOString() writes a six-digit year with a sign. */
const YEAR_10000_MS = 253_402_300_800_000;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

// Date#toISOString costs about half a microsecond, as much as the rest of a line's conversion: lines of one
// day share the date part, so only the time of day is formatted per line.
let isoDay = Number.NaN;
let isoDayText = '';

/** `new Date(ms).toISOString()`, for the instants log lines hold, without the cost of Date formatting. */
export function isoUtc(ms: number): string {
  if (!(ms >= 0 && ms < YEAR_10000_MS)) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  if (day !== isoDay) {
    isoDay = day;
    isoDayText = new Date(day * DAY_MS).toISOString().slice(0, 11);
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${isoDayText}${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(rest - seconds * 1000)}Z`;
}

/** `2024-01-15` + `10:23:45` + `CET` -> `2024-01-15T09:23:45.000Z`. */
export function toUtcTimestamp(date: string, time: string, zone: string): TimestampResult {
  const d = DATE.exec(date);
  const t = TIME.exec(time);
  if (!d) return { ok: false, error: `invalid date "${date.slice(0, 40)}"` };
  if (!t) return { ok: false, error: `invalid time "${time.slice(0, 40)}"` };
  const year = Number(d[1]);
  const month = Number(d[2]);
  const day = Number(d[3]);
  const hour = Number(t[1]);
  const minute = Number(t[2]);
  const second = Number(t[3]);
  // Impossible dates (2024-02-31) and times are refused rather than rolled over into the next month.
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 60) {
    return { ok: false, error: `invalid date/time "${date} ${time}"` };
  }
  const millis = t[4] ? Math.floor(Number(`0.${t[4]}`) * 1000) : 0;
  const localMs = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  const offset = zoneOffsetMinutes(zone, localMs);
  if (offset === undefined) return { ok: false, error: `unknown time zone "${zone.slice(0, 40)}"` };
  const ms = localMs - offset * 60_000;
  return { ok: true, iso: isoUtc(ms), ms };
}

/**
 * toUtcTimestamp for a stream of lines: lines of one day and zone share the date's parsing and the zone's
 * offset, and `HH:MM:SS` is read digit by digit. Region zones (whose offset changes with DST) and any other
 * time format take the full path; the result is the same either way.
 */
export class TimestampConverter {
  private date = '';
  private zone = '';
  /** UTC ms of the cached date at 00:00 local, minus the zone's fixed offset; NaN when not cacheable. */
  private base = Number.NaN;

  convert(date: string, time: string, zone: string): TimestampResult {
    if (time.length === 8 && time.charCodeAt(2) === 58 && time.charCodeAt(5) === 58) {
      if (date !== this.date || zone !== this.zone) this.cache(date, zone);
      if (!Number.isNaN(this.base)) {
        const hour = twoDigits(time, 0);
        const minute = twoDigits(time, 3);
        const second = twoDigits(time, 6);
        if (hour <= 23 && minute <= 59 && second <= 60) {
          const ms = this.base + ((hour * 60 + minute) * 60 + second) * 1000;
          return { ok: true, iso: isoUtc(ms), ms };
        }
      }
    }
    return toUtcTimestamp(date, time, zone);
  }

  private cache(date: string, zone: string): void {
    this.date = date;
    this.zone = zone;
    this.base = Number.NaN;
    if (typeof fixedOffsetMinutes(zone.trim()) !== 'number') return; // region zones change offset with DST
    const midnight = toUtcTimestamp(date, '00:00:00', zone);
    if (midnight.ok) this.base = midnight.ms;
  }
}

/** The number of two ASCII digits at `at`, or 99 when they are not digits. */
function twoDigits(text: string, at: number): number {
  const a = text.charCodeAt(at) - 48;
  const b = text.charCodeAt(at + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : 99;
}
