import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCESS_FIELDS, ERROR_FIELDS, startSimulator, type Simulator } from '../src/index.js';
import { LogStore } from '../src/logs/log-store.js';

const S = '/v2/servers/_defaultServer_';
const ACCESS = 'wowzastreamingengine_access';
const ERROR = 'wowzastreamingengine_error';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ auth: 'none', seed: 9 });
});
afterAll(() => sim.close());

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are checked by value, field by field
async function get(path: string): Promise<{ status: number; body: any }> {
  const res = await request(sim.url + path, { headers: { accept: 'application/json' } });
  return { status: res.statusCode, body: JSON.parse(await res.body.text()) };
}
const page = async (type: string, query: string) => {
  const r = await get(`${S}/logs/${type}?${query}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
const dataLines = (buf: Buffer) =>
  buf
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'));

/** A fresh simulator for tests that rotate or rely on exact file contents. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are checked by value, field by field
async function withSim(fn: (s: Simulator, read: (path: string) => Promise<{ status: number; body: any }>) => Promise<void>, opts = {}) {
  const s = await startSimulator({ auth: 'none', ...opts });
  const read = async (path: string) => {
    const res = await request(s.url + path, { headers: { accept: 'application/json' } });
    return { status: res.statusCode, body: JSON.parse(await res.body.text()) };
  };
  try {
    await fn(s, read);
  } finally {
    await s.close();
  }
}

describe('simulator log listings', () => {
  it('lists the log types', async () => {
    expect((await get(`${S}/logs`)).body.serverLogType).toEqual([ACCESS, ERROR, 'wowzastreamingengine_stats']);
  });

  it('lists log files newest or oldest first, rolled ones included', async () => {
    await withSim(async (s, read) => {
      s.logs.rotate(ACCESS);
      const newest = (await read(`${S}/logfiles?order=newestFirst`)).body.serverLogFiles;
      expect(newest).toHaveLength(4);
      for (const f of newest) {
        expect(f).toEqual({ id: expect.any(String), href: `${S}/logfiles/${encodeURIComponent(f.id)}`, fileSize: expect.any(Number), startDateMS: expect.any(Number) });
        expect(f.fileSize).toBe(s.logs.bytes(f.id).length);
      }
      // The file started by the rotation is the newest; the rolled one is among the oldest.
      expect(newest[0].id).toBe(`${ACCESS}.log`);
      const stamps = newest.map((f: { startDateMS: number }) => f.startDateMS);
      expect([...stamps].sort((a, b) => b - a)).toEqual(stamps);
      const rolled = newest.find((f: { id: string }) => f.id.startsWith(`${ACCESS}.log.`));
      expect(rolled.id).toMatch(new RegExp(`^${ACCESS}\\.log\\.\\d{4}-\\d{2}-\\d{2}$`));
      const oldest = (await read(`${S}/logfiles?order=oldestFirst`)).body.serverLogFiles;
      expect(oldest).toEqual([...newest].reverse());
      expect(oldest[0].id).toBe(rolled.id);
      expect((await read(`${S}/logfiles?order=sideways`)).status).toBe(400);
    });
  });
});

describe('simulator log files', () => {
  it('carry W3C headers and the access and error field orders', () => {
    const access = sim.logs.bytes(ACCESS).toString('utf8').split('\n');
    expect(access[0]).toBe('#Version: 1.0');
    expect(access[1]).toMatch(/^#Start-Date: \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} IST$/);
    expect(access[2]).toBe('#Software: Wowza Streaming Engine 4.9.4 build20250114124522');
    expect(access[3]).toMatch(/^#Date: \d{4}-\d{2}-\d{2}$/);
    expect(access[4]).toBe('#Fields: ' + ACCESS_FIELDS.join('\t'));
    expect(ACCESS_FIELDS.slice(0, 6)).toEqual(['date', 'time', 'tz', 'x-event', 'x-category', 'x-severity']);
    expect(ACCESS_FIELDS.at(-1)).toBe('cs-uri-query');
    expect(ACCESS_FIELDS).toHaveLength(38);
    const error = sim.logs.bytes(ERROR).toString('utf8').split('\n');
    expect(error[4]).toBe('#Fields: ' + ERROR_FIELDS.join('\t'));
    expect(ERROR_FIELDS.slice(0, 5)).toEqual(['x-severity', 'x-category', 'x-event', 'date', 'time']);
    for (const [type, fields] of [[ACCESS, ACCESS_FIELDS], [ERROR, ERROR_FIELDS]] as const) {
      for (const line of dataLines(sim.logs.bytes(type))) {
        const values = line.split('\t');
        expect(values).toHaveLength(fields.length);
        expect(values).not.toContain('');
      }
    }
  });

  it('hold realistic lines: every severity, several events, multi-byte comments', () => {
    sim.logs.generate(ACCESS, 400);
    const lines = dataLines(sim.logs.bytes(ACCESS)).map((l) => l.split('\t'));
    const col = (name: string) => ACCESS_FIELDS.indexOf(name as (typeof ACCESS_FIELDS)[number]);
    expect(new Set(lines.map((v) => v[col('x-severity')]))).toEqual(new Set(['INFO', 'WARN', 'ERROR', 'DEBUG']));
    const events = new Set(lines.map((v) => v[col('x-event')]));
    for (const e of ['connect', 'play', 'stop', 'publish', 'disconnect', 'comment', 'server-start', 'app-start']) expect(events).toContain(e);
    expect(lines.some((v) => /[\u0080-\u{10ffff}]/u.test(v[col('x-comment')]!))).toBe(true);
    expect(lines.every((v) => /^\d{4}-\d{2}-\d{2}$/.test(v[0]!) && /^\d{2}:\d{2}:\d{2}$/.test(v[1]!) && v[2] === 'IST')).toBe(true);
  });

  it('append records by field name (missing fields are -) and raw lines', async () => {
    await withSim(async (s) => {
      s.logs.append(ERROR, { 'x-severity': 'WARN', 'x-category': 'server', 'x-event': 'comment', 'x-comment': 'tab\there\nand newline' });
      s.logs.append(ERROR, 'INFO\tserver\tcomment\traw');
      const lines = s.logs.bytes(ERROR).toString('utf8').split('\n');
      const rec = lines.at(-3)!.split('\t');
      expect(rec.slice(0, 3)).toEqual(['WARN', 'server', 'comment']);
      expect(rec.at(-1)).toBe('tab here and newline');
      expect(rec.filter((v) => v === '-')).toHaveLength(ERROR_FIELDS.length - 6);
      expect(lines.at(-2)).toBe('INFO\tserver\tcomment\traw');
      expect(() => s.logs.append('nope', 'x')).toThrow(/unknown log type "nope": use wowzastreamingengine_access/);
    });
  });
});

describe('simulator log reads', () => {
  it('return exactly the documented fields', async () => {
    const body = await page(ACCESS, 'lineCount=3');
    expect(Object.keys(body).sort()).toEqual(
      ['serverName', 'version', 'logLines', 'retLineCount', 'startOffset', 'endOffset', 'fileLength', 'logFields', 'logVersion', 'logSoftware', 'logStartDate', 'logDate', 'startDate', 'endDate', 'filterStr', 'searchStr', 'regexSearch'].sort(),
    );
    expect(body).toMatchObject({
      retLineCount: 3,
      startOffset: 0,
      logFields: ACCESS_FIELDS.join('\t'),
      logVersion: '1.0',
      logSoftware: 'Wowza Streaming Engine 4.9.4 build20250114124522',
      logStartDate: expect.stringMatching(/ IST$/),
      logDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      filterStr: '',
      searchStr: '',
      regexSearch: false,
    });
    expect(body.logLines[0]).toBe('#Version: 1.0');
  });

  it('count offsets in UTF-8 bytes', async () => {
    await withSim(async (s, read) => {
      s.logs.append(ACCESS, [{ 'x-event': 'comment', 'x-severity': 'WARN', 'x-comment': 'héllo 東京 ✓ 📉' }, { 'x-event': 'play', 'x-severity': 'INFO' }]);
      const buf = s.logs.bytes(ACCESS);
      const { body } = await read(`${S}/logs/${ACCESS}?lineCount=100000`);
      expect(body.endOffset).toBe(buf.length);
      expect(body.fileLength).toBe(buf.length);
      const { body: last } = await read(`${S}/logs/${ACCESS}?lineCount=-2`);
      expect(last.logLines[0]).toContain('héllo 東京 ✓ 📉');
      expect(buf.subarray(last.startOffset, last.endOffset).toString('utf8')).toBe(last.logLines.join('\n') + '\n');
      const { body: from } = await read(`${S}/logs/${ACCESS}?startOffset=${last.startOffset}&lineCount=1`);
      expect(from.logLines).toEqual([last.logLines[0]]);
      expect(from.endOffset).toBe(last.startOffset + Buffer.byteLength(last.logLines[0] + '\n'));
    });
  });

  it('read backwards with a negative lineCount, and honour head and tail', async () => {
    const all = await page(ACCESS, 'lineCount=100000');
    const lines: string[] = all.logLines;
    const mid = await page(ACCESS, 'lineCount=10');
    const before = await page(ACCESS, `lineCount=-3&startOffset=${mid.endOffset}`);
    expect(before.logLines).toEqual(lines.slice(7, 10));
    expect(before.endOffset).toBe(mid.endOffset);
    expect(before.retLineCount).toBe(3);
    const tail = await page(ACCESS, 'tail=true&lineCount=4');
    expect(tail.logLines).toEqual(lines.slice(-4));
    expect((await page(ACCESS, 'tail=2')).logLines).toEqual(lines.slice(-2));
    expect((await page(ACCESS, 'lineCount=-2')).logLines).toEqual(lines.slice(-2));
    expect((await page(ACCESS, 'head=2&startOffset=500')).logLines).toEqual(lines.slice(0, 2));
    expect((await page(ACCESS, '')).retLineCount).toBe(Math.min(100, lines.length));
  });

  it('can be followed by startOffset = endOffset without repeating or skipping, through filters and partial lines', async () => {
    await withSim(async (s, read) => {
      const seen: string[] = [];
      let offset = 0;
      for (let round = 0; round < 12; round++) {
        if (round % 4 === 2) s.logs.appendRaw(ACCESS, ' line, finished later\n');
        s.logs.generate(ACCESS, 9);
        if (round % 4 === 1) s.logs.appendRaw(ACCESS, '2025-01-14\t12:00:00\tUTC\tcomment\tserver\tWARN\t200\t-\thalf a');
        const { body } = await read(`${S}/logs/${ACCESS}?startOffset=${offset}&lineCount=7&filter=noDebug|noHeader|noColumnHeadings`);
        expect(body.startOffset).toBe(offset);
        expect(body.endOffset).toBeGreaterThanOrEqual(offset);
        seen.push(...body.logLines);
        offset = body.endOffset;
      }
      for (;;) {
        const { body } = await read(`${S}/logs/${ACCESS}?startOffset=${offset}&lineCount=7&filter=noDebug|noHeader|noColumnHeadings`);
        if (body.endOffset === offset) break;
        seen.push(...body.logLines);
        offset = body.endOffset;
      }
      const col = ACCESS_FIELDS.indexOf('x-severity');
      const expected = dataLines(s.logs.bytes(ACCESS)).filter((l) => l.split('\t')[col] !== 'DEBUG');
      expect(seen).toEqual(expected);
      expect(seen.filter((l) => l.includes('half a line, finished later'))).toHaveLength(3);
    });
  });

  it('never return an incomplete last line', async () => {
    await withSim(async (s, read) => {
      const { body: start } = await read(`${S}/logs/${ERROR}?tail=1`);
      s.logs.appendRaw(ERROR, 'WARN\tserver\tcomment\t2025-01-14\t12:00:00\tpart');
      const { body: partial } = await read(`${S}/logs/${ERROR}?startOffset=${start.endOffset}`);
      expect(partial.logLines).toEqual([]);
      expect(partial.endOffset).toBe(start.endOffset);
      expect(partial.fileLength).toBeGreaterThan(start.endOffset);
      expect((await read(`${S}/logs/${ERROR}?tail=1`)).body.logLines).toEqual(start.logLines);
      s.logs.appendRaw(ERROR, 'ial\n');
      const { body: done } = await read(`${S}/logs/${ERROR}?startOffset=${start.endOffset}`);
      expect(done.logLines).toEqual(['WARN\tserver\tcomment\t2025-01-14\t12:00:00\tpartial']);
      expect(done.endOffset).toBe(done.fileLength);
    });
  });

  it('filter by severity, headers and column headings', async () => {
    const severities = (lines: string[]) => new Set(lines.filter((l) => !l.startsWith('#')).map((l) => l.split('\t')[5]));
    const noInfo = await page(ACCESS, 'lineCount=100000&filter=noInfo');
    expect(severities(noInfo.logLines).has('INFO')).toBe(false);
    expect(noInfo.filterStr).toBe('noInfo');
    const quiet = await page(ACCESS, 'lineCount=100000&filter=noInfo|noDebug|noWarn');
    expect([...severities(quiet.logLines)]).toEqual(['ERROR']);
    const noHeader = await page(ACCESS, 'lineCount=3&filter=noHeader');
    expect(noHeader.logLines[0]).toMatch(/^#Fields: /);
    expect(noHeader.logLines[1]).not.toMatch(/^#/);
    const none = await page(ACCESS, 'lineCount=1&filter=noHeader|noColumnHeadings');
    expect(none.logLines[0]).not.toMatch(/^#/);
  });

  it('search by substring or regular expression', async () => {
    const plain = await page(ACCESS, 'lineCount=100000&search=' + encodeURIComponent('\tplay\t'));
    expect(plain.logLines.length).toBeGreaterThan(0);
    expect(plain.logLines.every((l: string) => l.includes('\tplay\t'))).toBe(true);
    expect(plain).toMatchObject({ searchStr: '\tplay\t', regexSearch: false });
    const re = await page(ACCESS, 'lineCount=100000&regexSearch=true&search=' + encodeURIComponent('\t(WARN|ERROR)\t'));
    expect(re.logLines.length).toBeGreaterThan(0);
    expect(re.logLines.every((l: string) => /\t(WARN|ERROR)\t/.test(l))).toBe(true);
    expect(re.regexSearch).toBe(true);
    const bad = await get(`${S}/logs/${ACCESS}?regexSearch=true&search=${encodeURIComponent('(unclosed')}`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/regexSearch: invalid regular expression/);
  });

  it('limit /logs/{logType} to a date range', async () => {
    await withSim(async (s, read) => {
      s.logs.append(ACCESS, [
        { date: '2020-01-01', time: '00:00:00', 'x-event': 'play', 'x-severity': 'INFO', 'x-comment': 'old' },
        { date: '2020-01-02', time: '12:00:00', 'x-event': 'play', 'x-severity': 'INFO', 'x-comment': 'inside' },
        { date: '2020-01-03', time: '00:00:01', 'x-event': 'play', 'x-severity': 'INFO', 'x-comment': 'late' },
      ]);
      // The lines' dates and times are the server's local time, IST (+05:30).
      const start = Date.UTC(2020, 0, 1, 0, 0, 1) - 330 * 60_000;
      const end = Date.UTC(2020, 0, 3, 0, 0, 0) - 330 * 60_000;
      const { body } = await read(`${S}/logs/${ACCESS}?lineCount=100000&filter=noHeader|noColumnHeadings&startDate=${start}&endDate=${end}`);
      expect(body.logLines.map((l: string) => l.split('\t')[8])).toEqual(['inside']);
      // The reference types the bounds as strings.
      expect(body).toMatchObject({ startDate: String(start), endDate: String(end) });
      const file = await read(`${S}/logfiles/${ACCESS}.log?lineCount=100000&startDate=${start}`);
      expect(file.body.startDate).toBe('');
      expect(file.body.logLines.some((l: string) => l.includes('\told\t'))).toBe(true);
    });
  });

  it('refuse malformed parameters and unknown logs with clear errors', async () => {
    const cases: Array<[string, RegExp]> = [
      [`${S}/logs/${ACCESS}?lineCount=ten`, /lineCount must be an integer/],
      [`${S}/logs/${ACCESS}?startOffset=-5`, /startOffset must not be negative/],
      [`${S}/logs/${ACCESS}?filter=noFoo`, /unknown filter "noFoo"/],
      [`${S}/logs/${ACCESS}?head=true&tail=true`, /head or tail, not both/],
      [`${S}/logs/${ACCESS}?startDate=yesterday`, /startDate must be an integer/],
    ];
    for (const [path, message] of cases) {
      const r = await get(path);
      expect(r.status).toBe(400);
      expect(r.body.message).toMatch(message);
    }
    expect((await get(`${S}/logs/nope`)).body).toMatchObject({ code: '404', message: 'Log type (nope) not found.' });
    expect((await get(`${S}/logfiles/nope.log`)).status).toBe(404);
  });
});

describe('simulator log rotation', () => {
  it('starts a shorter file with its own Start-Date; the rolled file keeps the lines and is listed', async () => {
    await withSim(async (s, read) => {
      s.logs.generate(ACCESS, 50);
      const before = (await read(`${S}/logs/${ACCESS}?tail=1`)).body;
      s.logs.generate(ACCESS, 3); // written after our last read, before the rotation
      const [rolled] = s.logs.rotate(ACCESS);
      expect(rolled).toMatch(/^wowzastreamingengine_access\.log\.\d{4}-\d{2}-\d{2}$/);
      const after = (await read(`${S}/logs/${ACCESS}?startOffset=${before.endOffset}`)).body;
      expect(after.fileLength).toBeLessThan(before.endOffset);
      // One-second resolution, as on a real server: within the second of the last rotation it is the same date.
      expect(after.logStartDate).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} IST$/);
      expect(after.logLines).toEqual([]);
      const missed = (await read(`${S}/logfiles/${rolled}?startOffset=${before.endOffset}`)).body;
      expect(missed.logLines).toHaveLength(3);
      expect(missed.logStartDate).toBe(before.logStartDate);
      const ids = (await read(`${S}/logfiles`)).body.serverLogFiles.map((f: { id: string }) => f.id);
      expect(ids).toContain(rolled);
      expect(s.logs.rotate(ACCESS)[0]).toBe(`${rolled}.1`);
      expect(s.logs.files().filter((f) => f.logType === ACCESS && !f.current)).toHaveLength(2);
    });
  });

  it('does not bend dates: two rotations within one second give files with the same Start-Date', () => {
    const now = Date.UTC(2025, 0, 14, 10, 0, 0, 100);
    const store = new LogStore({ software: 'WSE', now: () => now });
    store.write(ACCESS, 'a\n');
    store.rotate(ACCESS);
    store.write(ACCESS, 'b\n');
    store.rotate(ACCESS);
    const dates = store.files().filter((f) => f.logType === ACCESS).map((f) => f.startDateMS);
    expect(dates).toEqual([now, now, now]);
    // The server's local time, as a real server writes it: IST, +05:30.
    expect(store.currentFile(ACCESS).header.startDate).toBe('2025-01-14 15:30:00 IST');
  });

  it('rolls at a new local day and by size, keeping a bounded number of rolled files', () => {
    // Local midnight in IST (+05:30) is 18:30 UTC.
    let now = Date.UTC(2025, 0, 14, 18, 29, 0);
    const store = new LogStore({ software: 'WSE', now: () => now, keepRolled: 2, maxFileBytes: 2048 });
    store.write(ACCESS, 'a line\n');
    now = Date.UTC(2025, 0, 14, 18, 30, 5);
    store.write(ACCESS, 'next day\n');
    expect(store.files().map((f) => f.name)).toContain(`${ACCESS}.log.2025-01-14`);
    expect(store.currentFile(ACCESS).header.date).toBe('2025-01-15');
    expect(store.currentFile(ACCESS).content().toString()).toMatch(/#Start-Date: 2025-01-15 00:00:05 IST[\s\S]*next day\n$/);
    for (let i = 0; i < 100; i++) store.write(ACCESS, `${'x'.repeat(100)} ${i}\n`);
    const rolled = store.files().filter((f) => f.logType === ACCESS && !f.current);
    expect(rolled).toHaveLength(2);
    expect(rolled.every((f) => f.size <= 2048)).toBe(true);
    expect(rolled.map((f) => f.name)).toEqual([expect.stringMatching(/^wowzastreamingengine_access\.log\.2025-01-15\.\d+$/), expect.stringMatching(/\.\d+$/)]);
  });

  it('writes lines in the background at the configured rate', async () => {
    await withSim(
      async (s) => {
        const before = dataLines(s.logs.bytes(ACCESS)).length;
        await new Promise((r) => setTimeout(r, 700));
        const after = dataLines(s.logs.bytes(ACCESS)).length + dataLines(s.logs.bytes(ERROR)).length;
        expect(after - before).toBeGreaterThanOrEqual(15);
      },
      { logs: { linesPerSecond: 50 } },
    );
  });
});
