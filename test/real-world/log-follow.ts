import { expect } from 'vitest';
import { LogFollower, type FollowedLine, type FollowerChunk } from '../../src/logs/source/follower.js';
import type { LogPage, LogQuery, LogSource } from '../../src/logs/source/source.js';
import type { LogRecord } from '../../src/logs/transform/w3c-parser.js';

/**
 * The real-world log tests' reading of a file: served as the REST API serves a log (lines by byte offset, as the server
 * holds them, a Windows server's CRLF included), followed from its beginning, and each line's fields read
 * independently of the product to compare with what the parser made of it.
 */

/** A log source over one file's bytes, as `GET {S}/logs/{logType}` pages it. */
export function fileSource(content: Buffer, timeZone?: string): LogSource {
  const lines: Array<{ text: string; start: number; end: number }> = [];
  let start = 0;
  while (start < content.length) {
    const nl = content.indexOf(0x0a, start);
    const end = nl < 0 ? content.length : nl + 1;
    lines.push({ text: content.subarray(start, nl < 0 ? content.length : nl).toString('utf8'), start, end });
    start = end;
  }
  const header = lines.find((l) => l.text.startsWith('#Start-Date:'))?.text.replace(/^#Start-Date:\s*/, '').trim();
  const page = (q: LogQuery): LogPage => {
    const from = q.startOffset ?? 0;
    const count = q.lineCount ?? 100;
    const first = lines.findIndex((l) => l.start >= from);
    const picked = first < 0 ? [] : count >= 0 ? lines.slice(first, first + count) : lines.slice(Math.max(0, first + count), first);
    return {
      lines: picked.map((l) => l.text),
      startOffset: picked[0]?.start ?? from,
      endOffset: picked.at(-1)?.end ?? from,
      fileLength: content.length,
      ...(header ? { logStartDate: header } : {}),
    };
  };
  return {
    server: 'real',
    ...(timeZone ? { timeZone } : {}),
    listLogTypes: async () => ['wowzastreamingengine_access'],
    readLog: async (_t, q) => page(q),
    listLogFiles: async () => [],
    readLogFile: async (_n, q) => page(q),
  };
}

/** Every line the follower hands on for the whole file, read from its beginning. */
export async function follow(content: Buffer, opts: { timeZone?: string; deferRecords?: boolean } = {}): Promise<FollowedLine[]> {
  const out: FollowedLine[] = [];
  const follower = new LogFollower({
    source: fileSource(content, opts.timeZone),
    logType: 'wowzastreamingengine_access',
    startAt: 'beginning',
    lineCount: 50,
    ...(opts.deferRecords ? { deferRecords: true } : {}),
    deliver: async (chunk: FollowerChunk) => {
      out.push(...chunk.lines);
    },
  });
  await follower.run(AbortSignal.timeout(60_000), false);
  return out;
}

/** Minutes east of UTC of the zones these servers wrote (Java's names: IST is India, +05:30). */
export const ZONES: Record<string, number> = { IST: 330, CEST: 120, UTC: 0 };

/** What the line says, read independently of the product: each column by the `#Fields` in force, and its instant. */
export function expected(fields: string[], text: string, headerZone: string | undefined): { values: Record<string, string>; ms: number } {
  const cols = text.replace(/\r$/, '').split('\t');
  const values = Object.fromEntries(fields.map((f, i) => [f, cols[i]!]));
  const zone = values.tz && values.tz !== '-' ? values.tz : headerZone!;
  const [y, mo, d] = values.date!.split('-').map(Number) as [number, number, number];
  const [h, mi, s] = values.time!.split(':').map(Number) as [number, number, number];
  return { values, ms: Date.UTC(y, mo - 1, d, h, mi, s) - ZONES[zone]! * 60_000 };
}

export function checkRecord(record: LogRecord, exp: { values: Record<string, string>; ms: number }, where: string): void {
  expect(record.parse_error, where).toBeUndefined();
  expect(record.timestamp, where).toBe(new Date(exp.ms).toISOString());
  for (const [field, value] of Object.entries(exp.values)) {
    if (field === 'date' || field === 'time' || field === 'tz') continue;
    const got = record[field];
    if (value === '-') expect(got, `${where} ${field}`).toBeNull();
    else if (typeof got === 'number') expect(got, `${where} ${field}`).toBe(Number(value));
    else expect(got, `${where} ${field}`).toBe(value);
  }
}
