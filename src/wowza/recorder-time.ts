import { zoneOffsetMinutes } from '../base/time-zones.js';

/**
 * `recordingStartTime` of a stream recorder. A real 4.7 server writes `2019-06-07-18.15.28.934-+08:00`: Wowza's
 * `StreamRecorderFileVersionDelegate` format `yyyy-MM-dd-HH.mm.ss.SSS-zzz` (wowza-api.md), whose zone part is what
 * Java's `z` prints for the server's zone: an offset (`+08:00`, `GMT+08:00`), `GMT`/`UTC`, or a short name (`PST`).
 * The zone is read as the log timestamps read theirs (logs/transform/timestamp.ts), except the short names that Java prints for
 * more than one zone (`CST` China or US Central, `IST` India or Israel, `BST`): a log line has a configured zone to
 * fall back on, a recorder answer has none, so no instant is guessed from them. ISO 8601 and RFC 2822 dates, which
 * other versions may send, are read too.
 */

const AMBIGUOUS = new Set(['CST', 'IST', 'BST']);

const WOWZA = /^(\d{4})-(\d{2})-(\d{2})-(\d{2})\.(\d{2})\.(\d{2})\.(\d{1,3})-(.+)$/;

/** Unix seconds, or undefined when the text is not a time this knows how to read. */
export function recorderStartSeconds(text: string): number | undefined {
  const m = WOWZA.exec(text.trim());
  if (m) {
    const zone = m[8]!.trim();
    if (AMBIGUOUS.has(zone.toUpperCase())) return undefined;
    const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return undefined;
    const local = Date.UTC(y, mo - 1, d, h, mi, s, Number(m[7]!.padEnd(3, '0')));
    const offset = zoneOffsetMinutes(zone, local);
    return offset === undefined ? undefined : (local - offset * 60_000) / 1000;
  }
  // Date.parse reads ISO 8601 and RFC 2822; a date-only or zone-less text would be local time here: not guessed.
  if (!/(?:Z|[+-]\d{2}:?\d{2}|GMT|UTC)\s*$/i.test(text.trim())) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms / 1000 : undefined;
}
