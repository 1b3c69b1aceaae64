/**
 * Times as the Wowza Video API writes them. Requests take UTC `YYYY-MM-DD HH:MM:SS` and dates as
 * `YYYY-MM-DD`; responses carry ISO 8601 with `Z` (dates too, as midnight UTC). Both are read here, and
 * a time without a zone is only accepted in the request format, whose zone the API defines as UTC.
 */

const REQUEST_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const ISO_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

export const DAY_MS = 86_400_000;

/** Epoch ms of the given UTC fields, or undefined when they do not name a real moment (Feb 30, 24:00). */
function utc(y: number, mo: number, d: number, h = 0, mi = 0, s = 0): number | undefined {
  const t = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(t);
  const same =
    back.getUTCFullYear() === y &&
    back.getUTCMonth() === mo - 1 &&
    back.getUTCDate() === d &&
    back.getUTCHours() === h &&
    back.getUTCMinutes() === mi &&
    back.getUTCSeconds() === s;
  return same ? t : undefined;
}

function offsetMs(zone: string): number | undefined {
  if (zone.toUpperCase() === 'Z') return 0;
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(zone);
  if (!m) return undefined;
  const hours = Number(m[2]);
  const minutes = Number(m[3]);
  if (hours > 23 || minutes > 59) return undefined;
  return (m[1] === '-' ? -1 : 1) * (hours * 60 + minutes) * 60_000;
}

/** A point in time in either the request (`YYYY-MM-DD HH:MM:SS`, UTC) or the ISO response format. */
export function parseVideoTimestamp(text: string): Date | undefined {
  const req = REQUEST_TIMESTAMP.exec(text);
  if (req) {
    const t = utc(Number(req[1]), Number(req[2]), Number(req[3]), Number(req[4]), Number(req[5]), Number(req[6]));
    return t === undefined ? undefined : new Date(t);
  }
  const iso = ISO_TIMESTAMP.exec(text);
  if (!iso) return undefined;
  const t = utc(Number(iso[1]), Number(iso[2]), Number(iso[3]), Number(iso[4]), Number(iso[5]), Number(iso[6] ?? 0));
  const offset = offsetMs(iso[8]!);
  if (t === undefined || offset === undefined) return undefined;
  const fraction = iso[7] ? Math.floor(Number(iso[7]) * 1000) : 0;
  return new Date(t + fraction - offset);
}

/**
 * A calendar day as epoch ms of its 00:00 UTC. Accepts `YYYY-MM-DD` and, because responses send dates as
 * midnight timestamps, a timestamp (its UTC day).
 */
export function parseVideoDate(text: string): number | undefined {
  const m = DATE_ONLY.exec(text);
  if (m) return utc(Number(m[1]), Number(m[2]), Number(m[3]));
  const t = parseVideoTimestamp(text);
  return t === undefined ? undefined : startOfUtcDay(t.getTime());
}

/** Only `YYYY-MM-DD`: what a request may carry. */
export function isRequestDate(text: string): boolean {
  const m = DATE_ONLY.exec(text);
  return m !== null && utc(Number(m[1]), Number(m[2]), Number(m[3])) !== undefined;
}

export function startOfUtcDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DD HH:MM:SS` in UTC, the format PATCH bodies use. Sub-second parts are dropped. */
export function formatRequestTimestamp(d: Date): string {
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  );
}
