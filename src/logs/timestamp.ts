/**
 * Turns the `date`, `time` and `tz` columns of a Wowza log line into an ISO-8601 UTC timestamp.
 * Wowza writes local time with the zone as Java prints it: `UTC`, an abbreviation (`CEST`, `PST`), an
 * offset (`+0200`, `GMT+02:00`) or a region id (`Europe/Berlin`). Lines without a `tz` column (error and
 * stats logs) use the configured default zone.
 */

/**
 * Java's short zone names that appear in Wowza logs, in minutes east of UTC. Where a name is ambiguous
 * Java's own choice wins (`IST` = India, `CST` = US Central).
 */
const ABBREVIATIONS: Readonly<Record<string, number>> = {
  UTC: 0, UT: 0, GMT: 0, Z: 0, WET: 0, WEST: 60, BST: 60, IST: 330, CET: 60, CEST: 120, MET: 60, MEST: 120,
  EET: 120, EEST: 180, MSK: 180, EAT: 180, CAT: 120, SAST: 120, WAT: 60, GST: 240, PKT: 300, ICT: 420,
  SGT: 480, HKT: 480, AWST: 480, JST: 540, KST: 540, ACST: 570, ACDT: 630, AEST: 600, AEDT: 660,
  NZST: 720, NZDT: 780, HST: -600, AKST: -540, AKDT: -480, PST: -480, PDT: -420, MST: -420, MDT: -360,
  CST: -360, CDT: -300, EST: -300, EDT: -240, AST: -240, ADT: -180, NST: -210, NDT: -150, BRT: -180, ART: -180,
};

const OFFSET = /^(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?$/i;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?$/;

const regionFormats = new Map<string, Intl.DateTimeFormat | null>();

function regionFormat(zone: string): Intl.DateTimeFormat | null {
  let f = regionFormats.get(zone);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
      });
    } catch {
      f = null; // not a zone the runtime knows
    }
    if (regionFormats.size < 1000) regionFormats.set(zone, f);
  }
  return f;
}

/** Offset (minutes east of UTC) of a region zone at the UTC instant `utcMs`. */
function regionOffsetAt(format: Intl.DateTimeFormat, utcMs: number): number {
  const parts: Record<string, number> = {};
  for (const p of format.formatToParts(new Date(utcMs))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const asUtc = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return Math.round((asUtc - Math.floor(utcMs / 1000) * 1000) / 60_000);
}

/**
 * Minutes east of UTC for `zone` at the wall-clock time `localMs` (a local time read as if it were UTC),
 * or undefined when the zone is unknown.
 */
/**
 * Minutes east of UTC of a zone whose offset never changes (an abbreviation or an offset), `undefined` for an
 * invalid offset, `'region'` for anything else (a region id, whose offset depends on the date).
 */
function fixedOffsetMinutes(z: string): number | undefined | 'region' {
  const abbreviation = ABBREVIATIONS[z.toUpperCase()];
  if (abbreviation !== undefined) return abbreviation;
  const m = OFFSET.exec(z);
  if (!m) return 'region';
  const minutes = Number(m[2]) * 60 + Number(m[3] ?? 0);
  if (Number(m[2]) > 18 || Number(m[3] ?? 0) > 59) return undefined;
  return m[1] === '-' ? -minutes : minutes;
}

export function zoneOffsetMinutes(zone: string, localMs: number): number | undefined {
  const z = zone.trim();
  const fixed = fixedOffsetMinutes(z);
  if (fixed !== 'region') return fixed;
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(z)) return undefined;
  const format = regionFormat(z);
  if (!format) return undefined;
  // A wall-clock time maps to an instant through the offset in force then; two rounds settle DST edges.
  let offset = regionOffsetAt(format, localMs);
  offset = regionOffsetAt(format, localMs - offset * 60_000);
  return offset;
}

/** True when `zone` is a zone name this module can convert from. */
export function isKnownZone(zone: string): boolean {
  return zoneOffsetMinutes(zone, Date.UTC(2024, 0, 1)) !== undefined;
}

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
