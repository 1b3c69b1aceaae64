/**
 * Time zones as Wowza writes them (log headers and `tz` columns, recorder times): Java's short names, offsets
 * (`+0200`, `GMT+02:00`) and region ids (`Europe/Berlin`), turned into offsets. Shared by the log parser, the
 * recorder collector and the configuration's zone checks.
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
 * Minutes east of UTC of a zone whose offset never changes (an abbreviation or an offset), `undefined` for an
 * invalid offset, `'region'` for anything else (a region id, whose offset depends on the date).
 */
export function fixedOffsetMinutes(z: string): number | undefined | 'region' {
  const abbreviation = ABBREVIATIONS[z.toUpperCase()];
  if (abbreviation !== undefined) return abbreviation;
  const m = OFFSET.exec(z);
  if (!m) return 'region';
  const minutes = Number(m[2]) * 60 + Number(m[3] ?? 0);
  if (Number(m[2]) > 18 || Number(m[3] ?? 0) > 59) return undefined;
  return m[1] === '-' ? -minutes : minutes;
}

/**
 * Minutes east of UTC for `zone` at the wall-clock time `localMs` (a local time read as if it were UTC),
 * or undefined when the zone is unknown.
 */
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
