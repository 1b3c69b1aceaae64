/**
 * `recordingStartTime` of a stream recorder. A real 4.7 server writes `2019-06-07-18.15.28.934-+08:00`: Wowza's
 * `StreamRecorderFileVersionDelegate` format `yyyy-MM-dd-HH.mm.ss.SSS-zzz` (wowza-api.md), whose zone part is what
 * Java's `z` prints for the server's zone: an offset (`+08:00`, `GMT+08:00`), `GMT`/`UTC`, or a short name (`PST`).
 * Short names that mean one zone are read; ambiguous ones (`CST`, `IST`, `BST`) are not guessed at. ISO 8601 and RFC
 * 2822 dates, which other versions may send, are read too.
 */

/** Offsets in minutes of the short zone names that name one zone only. */
const ZONES: Readonly<Record<string, number>> = {
  GMT: 0, UTC: 0, UT: 0, Z: 0, WET: 0, WEST: 60, CET: 60, CEST: 120, MET: 60, MEST: 120, EET: 120, EEST: 180, MSK: 180,
  EST: -300, EDT: -240, MST: -420, MDT: -360, PST: -480, PDT: -420, AKST: -540, AKDT: -480, HST: -600,
  JST: 540, KST: 540, HKT: 480, SGT: 480, AWST: 480, ACST: 570, ACDT: 630, AEST: 600, AEDT: 660, NZST: 720, NZDT: 780,
};

const WOWZA = /^(\d{4})-(\d{2})-(\d{2})-(\d{2})\.(\d{2})\.(\d{2})\.(\d{1,3})-(.+)$/;

/** Minutes east of UTC for a Java `z` zone text, or undefined when it does not name one offset. */
function zoneOffset(zone: string): number | undefined {
  const z = zone.trim().toUpperCase();
  const offset = /^(?:GMT|UTC)?([+-])(\d{1,2}):?(\d{2})?$/.exec(z);
  if (offset) {
    const minutes = Number(offset[2]) * 60 + Number(offset[3] ?? 0);
    return minutes > 18 * 60 ? undefined : offset[1] === '-' ? -minutes : minutes;
  }
  return ZONES[z];
}

/** Unix seconds, or undefined when the text is not a time this knows how to read. */
export function recorderStartSeconds(text: string): number | undefined {
  const m = WOWZA.exec(text.trim());
  if (m) {
    const offset = zoneOffset(m[8]!);
    if (offset === undefined) return undefined;
    const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return undefined;
    const ms = Number(m[7]!.padEnd(3, '0'));
    return (Date.UTC(y, mo - 1, d, h, mi, s, ms) - offset * 60_000) / 1000;
  }
  // Date.parse reads ISO 8601 and RFC 2822; a date-only or zone-less text would be local time here: not guessed.
  if (!/(?:Z|[+-]\d{2}:?\d{2}|GMT|UTC)\s*$/i.test(text.trim())) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms / 1000 : undefined;
}
