import { PassThrough, Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { LogFollower, type FollowerChunk, type FollowerOptions } from '../../../../src/logs/source/follower.js';
import { ACCESS_LOG_FIELDS, ERROR_LOG_FIELDS, MemoryLogSource } from '../../../helpers/memory-log-source.js';
import type { LogPage, LogQuery } from '../../../../src/logs/source/source.js';
import { tailLog } from '../../../../src/logs/tail.js';
import { waitFor } from '../../../helpers/ports.js';

const ACCESS = 'wowzastreamingengine_access';
const ERROR = 'wowzastreamingengine_error';

/** A realistic access-log line whose `x-comment` is `comment` (to recognise it) and severity `severity`. */
function accessLine(comment: string, severity = 'INFO', event = 'play'): string {
  const v: Record<string, string> = {
    date: '2024-01-15', time: '10:23:45', tz: 'UTC', 'x-event': event, 'x-category': 'stream', 'x-severity': severity,
    'x-status': '200', 'x-ctx': 'cam1', 'x-comment': comment, 'x-vhost': '_defaultVHost_', 'x-app': 'live',
    'x-appinst': '_definst_', 'x-duration': '1.5', 's-ip': '203.0.113.10', 's-port': '1935', 'c-ip': '198.51.100.7',
    'c-proto': 'rtmp', 'sc-bytes': '4096', 'x-sname': 'cam1',
  };
  return ACCESS_LOG_FIELDS.map((f) => v[f] ?? '-').join('\t');
}

const lines = (from: number, to: number, prefix = 'line') => Array.from({ length: to - from + 1 }, (_, i) => accessLine(`${prefix} ${from + i}`));

function collector() {
  const chunks: FollowerChunk[] = [];
  return {
    chunks,
    deliver: async (chunk: FollowerChunk) => {
      chunks.push(chunk);
    },
    /** `x-comment` of every record delivered, in order. */
    comments: () => chunks.flatMap((c) => c.lines.flatMap((l) => (l.parsed.kind === 'record' ? [String(l.parsed.record['x-comment'])] : []))),
    last: () => chunks[chunks.length - 1]!,
  };
}

const controllers: AbortController[] = [];
function signal(): AbortSignal {
  const c = new AbortController();
  controllers.push(c);
  return c.signal;
}
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
});

function follower(source: MemoryLogSource, sink: ReturnType<typeof collector>, extra: Partial<FollowerOptions> = {}): LogFollower {
  return new LogFollower({ source, logType: ACCESS, deliver: sink.deliver, lineCount: 2, followIntervalMs: 10, ...extra });
}

describe('log follower: offsets and paging', () => {
  it('pages through the file with startOffset = last endOffset until caught up', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 5));
    const sink = collector();
    await follower(src, sink, { startAt: 'beginning' }).run(signal(), false);

    expect(sink.comments()).toEqual(['line 1', 'line 2', 'line 3', 'line 4', 'line 5']);
    // Head probes (10 lines from 0): one at the start. A round with new lines checks the file is the same by its
    // head, and the first page of this round, read from 0, is that head: no second probe.
    const isHeadProbe = (c: { query?: { startOffset?: number; lineCount?: number } }) => c.query!.startOffset === 0 && c.query!.lineCount === 10;
    expect(src.callsOf('readLog').filter(isHeadProbe)).toHaveLength(1);
    const reads = src.callsOf('readLog').filter((c) => !isHeadProbe(c));
    expect(reads[0]!.query).toMatchObject({ startOffset: 0, lineCount: 2 });
    // The first chunk is the starting position, handed on before any read so that a restart finds it.
    expect(sink.chunks[0]).toMatchObject({ lines: [], position: { offset: 0 } });
    for (let i = 1; i < reads.length; i++) expect(reads[i]!.query!.startOffset).toBe(sink.chunks[i]!.position.offset);
    expect(sink.last().position).toMatchObject({ fileId: '2024-01-15 00:00:00', offset: src.size(ACCESS) });
    // Records are mapped by the header read from the file (5 header lines + 5 records, 2 per page).
    expect(sink.chunks.flatMap((c) => c.lines).filter((l) => l.parsed.kind === 'header')).toHaveLength(5);
  });

  it('starts a never-seen log at its end and delivers that position first', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 3, 'old'));
    const sink = collector();
    const f = follower(src, sink);
    await f.run(signal(), false);
    expect(sink.comments()).toEqual([]);
    expect(sink.chunks[0]).toMatchObject({ lines: [], position: { offset: src.size(ACCESS), fileId: '2024-01-15 00:00:00' } });
    expect(sink.chunks[0]!.position.fields).toBe(ACCESS_LOG_FIELDS.join(' '));

    src.append(ACCESS, lines(4, 6, 'new'));
    await f.run(signal(), false);
    // No header in these pages: the fields remembered from the file head map them.
    expect(sink.comments()).toEqual(['new 4', 'new 5', 'new 6']);
    expect(sink.chunks.flatMap((c) => c.lines).every((l) => l.parsed.kind !== 'record' || l.parsed.record.timestamp === '2024-01-15T10:23:45.000Z')).toBe(true);
  });

  it('resumes from a saved position, with its remembered header', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 2));
    const offset = src.size(ACCESS);
    src.append(ACCESS, lines(3, 4));
    const sink = collector();
    await follower(src, sink, {
      resumeFrom: { fileId: '2024-01-15 00:00:00', offset, fields: ACCESS_LOG_FIELDS.join(' ') },
      serverFilter: { flags: ['noHeader', 'noColumnHeadings'] },
    }).run(signal(), false);
    expect(sink.comments()).toEqual(['line 3', 'line 4']);
    expect(src.callsOf('readLog').find((c) => c.query!.startOffset === offset)).toBeDefined();
  });

  it('passes the server-side filters on every read', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, [accessLine('debug noise', 'DEBUG'), accessLine('camera up', 'INFO'), accessLine('camera lost', 'WARN')]);
    const sink = collector();
    await follower(src, sink, { startAt: 'beginning', serverFilter: { flags: ['noDebug', 'noHeader', 'noColumnHeadings'], search: 'camera' } }).run(signal(), false);
    expect(sink.comments()).toEqual(['camera up', 'camera lost']);
    // Head probes (10 unfiltered lines from 0) tell files apart; every read of lines is filtered.
    const reads = src.callsOf('readLog').filter((c) => !(c.query!.startOffset === 0 && c.query!.lineCount === 10 && c.query!.filter === undefined));
    expect(reads.length).toBeGreaterThan(0);
    for (const call of reads) {
      expect(call.query).toEqual({ startOffset: expect.any(Number), lineCount: 2, filter: ['noDebug', 'noHeader', 'noColumnHeadings'], search: 'camera' });
    }
    // A regular expression travels as `search` with the API's regexSearch flag.
    const rx = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    rx.append(ACCESS, [accessLine('camera 1 up'), accessLine('camera lost'), accessLine('camera 22 up')]);
    const rxSink = collector();
    await follower(rx, rxSink, { startAt: 'beginning', serverFilter: { regexSearch: 'camera \\d+ up' } }).run(signal(), false);
    expect(rxSink.comments()).toEqual(['camera 1 up', 'camera 22 up']);
    expect(rx.callsOf('readLog').at(-1)!.query).toMatchObject({ search: 'camera \\d+ up', regexSearch: 'true' });
    // Without header lines, the page's logFields gives the shape.
    expect(sink.chunks.flatMap((c) => c.lines).some((l) => l.parsed.kind === 'header' && l.parsed.name === 'Fields')).toBe(false);
  });

  it('maps error logs by their own header', async () => {
    const src = new MemoryLogSource().addLog(ERROR, ERROR_LOG_FIELDS);
    const v: Record<string, string> = { 'x-severity': 'ERROR', 'x-category': 'server', 'x-event': 'comment', date: '2024-01-15', time: '10:00:00', 'x-comment': 'out of memory' };
    src.append(ERROR, [ERROR_LOG_FIELDS.map((f) => v[f] ?? '-').join('\t')]);
    const sink = collector();
    await new LogFollower({ source: src, logType: ERROR, deliver: sink.deliver, startAt: 'beginning' }).run(signal(), false);
    expect(sink.comments()).toEqual(['out of memory']);
    const rec = sink.chunks.flatMap((c) => c.lines).find((l) => l.parsed.kind === 'record')!.parsed;
    expect(rec).toMatchObject({ kind: 'record', record: { 'x-severity': 'ERROR', timestamp: '2024-01-15T10:00:00.000Z' } });
  });

  it('keeps polling after read failures and loses nothing', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 3));
    const errors: unknown[] = [];
    const sink = collector();
    const sig = signal();
    const done = follower(src, sink, { startAt: 'beginning', onReadError: (e) => errors.push(e), maxRetryDelayMs: 20 }).run(sig, true);
    await waitFor('first lines', () => sink.comments().length === 3 || undefined);
    src.failNext(3);
    src.append(ACCESS, lines(4, 5));
    await waitFor('lines after the failures', () => sink.comments().length === 5 || undefined);
    // A failed read is followed by a look at the file head (a rotation can look like a failure), so three
    // failed requests make at least one failed poll.
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(sink.comments()).toEqual(['line 1', 'line 2', 'line 3', 'line 4', 'line 5']);
    controllers.at(-1)!.abort();
    await done;
  });

  it('asks for fewer lines when a page is over the size limit (long lines), without a failure or a lost line', async () => {
    /** Refuses pages of more than 10 lines, as the client refuses an answer over max_response_size. */
    class LimitedSource extends MemoryLogSource {
      readonly asked: number[] = [];
      override async readLog(logType: string, q: LogQuery, signal?: AbortSignal): Promise<LogPage> {
        this.asked.push(q.lineCount ?? 100);
        if ((q.lineCount ?? 100) > 10) throw Object.assign(new Error('response is larger than the 1048576 byte limit'), { kind: 'too_large' });
        return super.readLog(logType, q, signal);
      }
    }
    const src = new LimitedSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 100));
    const errors: unknown[] = [];
    const sink = collector();
    const sig = signal();
    const done = follower(src, sink, { startAt: 'beginning', lineCount: 64, onReadError: (e) => errors.push(e) }).run(sig, true);
    await waitFor('every line', () => sink.comments().length === 100 || undefined);
    expect(sink.comments()).toEqual(lines(1, 100).map((_, i) => `line ${i + 1}`));
    expect(errors).toEqual([]);
    // 64, 32, 16 refused; 8 fits.
    expect(src.asked.filter((n) => n !== 10).slice(0, 4)).toEqual([64, 32, 16, 8]); // 10: the file's head
    controllers.at(-1)!.abort();
    await done;
  });

  it('rejects a read failure when not following', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.failNext(1, new Error('HTTP 401 authentication failed'));
    await expect(follower(src, collector()).run(signal(), false)).rejects.toThrow('HTTP 401');
  });
});

describe('log follower: rotation', () => {
  it('reads the lines written between the last read and the rotation before the new file', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 3));
    const sink = collector();
    const rotations: number[] = [];
    const f = follower(src, sink, { startAt: 'beginning', onRotation: () => rotations.push(1) });
    await f.run(signal(), false);
    const oldOffset = f.readPosition!.offset;

    src.append(ACCESS, lines(4, 5)); // written after our last read...
    src.rotate(ACCESS, '2024-01-16 00:00:00'); // ...then the file rolls
    src.append(ACCESS, lines(6, 7));
    await f.run(signal(), false);

    expect(sink.comments()).toEqual(['line 1', 'line 2', 'line 3', 'line 4', 'line 5', 'line 6', 'line 7']);
    expect(rotations).toHaveLength(1);
    const rolledReads = src.callsOf('readLogFile').filter((c) => c.query!.lineCount === 2);
    expect(rolledReads[0]).toMatchObject({ name: `${ACCESS}.log.20240115000000`, query: { startOffset: oldOffset } });
    expect(f.readPosition).toMatchObject({ fileId: '2024-01-16 00:00:00', offset: src.size(ACCESS) });
  });

  it('detects rotation by a changed logStartDate even when the new file is already longer', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 1));
    const sink = collector();
    const f = follower(src, sink, { startAt: 'beginning' });
    await f.run(signal(), false);
    src.append(ACCESS, lines(2, 2));
    src.rotate(ACCESS, '2024-01-16 00:00:00');
    src.append(ACCESS, lines(3, 12)); // far past the old offset
    await f.run(signal(), false);
    expect(sink.comments()).toEqual(Array.from({ length: 12 }, (_, i) => `line ${i + 1}`));
  });

  it('without logStartDate, notices a shorter file and a new #Start-Date at the head', async () => {
    const short = new MemoryLogSource('s', { omitStartDate: true }).addLog(ACCESS, ACCESS_LOG_FIELDS);
    short.append(ACCESS, lines(1, 4));
    const sink = collector();
    const f = follower(short, sink, { startAt: 'beginning' });
    await f.run(signal(), false);
    expect(f.readPosition!.fileId).toBe('2024-01-15 00:00:00'); // learnt from the #Start-Date header
    short.append(ACCESS, lines(5, 5));
    short.rotate(ACCESS, '2024-01-16 00:00:00');
    short.append(ACCESS, lines(6, 6));
    await f.run(signal(), false);
    expect(sink.comments()).toEqual(['line 1', 'line 2', 'line 3', 'line 4', 'line 5', 'line 6']);

    // Resuming after a restart into a rotated file that is already longer than the saved offset.
    const long = new MemoryLogSource('s', { omitStartDate: true }).addLog(ACCESS, ACCESS_LOG_FIELDS);
    long.append(ACCESS, lines(1, 2));
    const saved = { fileId: '2024-01-15 00:00:00', offset: long.size(ACCESS), fields: ACCESS_LOG_FIELDS.join(' ') };
    long.append(ACCESS, lines(3, 3));
    long.rotate(ACCESS, '2024-01-16 00:00:00');
    long.append(ACCESS, lines(4, 20));
    const sink2 = collector();
    await follower(long, sink2, { resumeFrom: saved }).run(signal(), false);
    expect(sink2.comments()).toEqual(Array.from({ length: 18 }, (_, i) => `line ${i + 3}`));
  });

  it('treats an error for an offset past the end as a possible rotation', async () => {
    const src = new MemoryLogSource('s', { rejectOffsetPastEnd: true }).addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 3));
    const sink = collector();
    const f = follower(src, sink, { startAt: 'beginning' });
    await f.run(signal(), false);
    src.append(ACCESS, lines(4, 4));
    src.rotate(ACCESS, '2024-01-16 00:00:00');
    await f.run(signal(), false);
    expect(sink.comments()).toEqual(['line 1', 'line 2', 'line 3', 'line 4']);
  });

  it('after a long stop, reads the rest of its file and every file rolled since, in order', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS, '2024-01-14 00:00:00');
    src.append(ACCESS, lines(1, 2));
    const saved = { fileId: '2024-01-14 00:00:00', offset: src.size(ACCESS), fields: ACCESS_LOG_FIELDS.join(' ') };
    src.append(ACCESS, lines(3, 3));
    src.rotate(ACCESS, '2024-01-15 00:00:00');
    src.append(ACCESS, lines(4, 5));
    src.rotate(ACCESS, '2024-01-16 00:00:00');
    src.append(ACCESS, lines(6, 6));
    const sink = collector();
    await follower(src, sink, { resumeFrom: saved }).run(signal(), false);
    expect(sink.comments()).toEqual(['line 3', 'line 4', 'line 5', 'line 6']);
    // While reading rolled files, positions name the file being read, so a crash resumes there.
    const fileIds = [...new Set(sink.chunks.map((c) => c.position.fileId))];
    expect(fileIds).toEqual(['2024-01-14 00:00:00', '2024-01-15 00:00:00', '2024-01-16 00:00:00']);
  });

  it('warns and carries on when the rolled file is gone', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 1));
    const sink = collector();
    const f = follower(src, sink, { startAt: 'beginning' });
    await f.run(signal(), false);
    src.rotate(ACCESS, '2024-01-16 00:00:00');
    src.deleteRolled(`${ACCESS}.log.20240115000000`);
    src.append(ACCESS, lines(2, 2));
    await f.run(signal(), false);
    expect(sink.comments()).toEqual(['line 1', 'line 2']);
  });
});

describe('log follower: rotations the dates cannot tell', () => {
  /** A failure with the REST client's `kind`, as WowzaUnparsableError carries it. */
  const unparsable = () => Object.assign(new Error('/v2/servers/{server}/logfiles returned an unusable body: field serverLogFiles: missing'), { kind: 'unparsable' });

  it('two size rotations within one second: the first record line tells the files apart', async () => {
    const second = '2024-01-15 10:00:00';
    const src = new MemoryLogSource('s').addLog(ACCESS, ACCESS_LOG_FIELDS, second);
    src.append(ACCESS, lines(1, 3, 'a'));
    const sink = collector();
    const f = follower(src, sink, { startAt: 'beginning' });
    await f.run(signal(), false);
    expect(f.readPosition!.head).toBeDefined();
    // Two more lines, then the file rolls twice within the same second; the newest is longer than the offset.
    src.append(ACCESS, lines(4, 5, 'a'));
    src.rotate(ACCESS, second);
    src.append(ACCESS, lines(1, 3, 'b'));
    src.rotate(ACCESS, second);
    src.append(ACCESS, lines(1, 9, 'c'));
    const rotations: number[] = [];
    const gaps: number[] = [];
    const g = follower(src, sink, { resumeFrom: f.readPosition!, onRotation: () => rotations.push(1), onRotationGap: () => gaps.push(1) });
    await g.run(signal(), false);
    expect(sink.comments()).toEqual([
      ...['a 1', 'a 2', 'a 3', 'a 4', 'a 5'],
      ...['b 1', 'b 2', 'b 3'],
      ...Array.from({ length: 9 }, (_, i) => `c ${i + 1}`),
    ]);
    expect(rotations).toHaveLength(1);
    expect(gaps).toEqual([]);
  });

  it('a rolled file not named <type>.log.* is found by its head', async () => {
    const src = new MemoryLogSource('s').addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 2));
    const sink = collector();
    const f = follower(src, sink, { startAt: 'beginning' });
    await f.run(signal(), false);
    src.append(ACCESS, lines(3, 4));
    src.rotate(ACCESS, '2024-01-16 00:00:00', undefined, 'archive-0115.txt');
    src.append(ACCESS, lines(5, 5));
    await f.run(signal(), false);
    expect(sink.comments()).toEqual(['line 1', 'line 2', 'line 3', 'line 4', 'line 5']);
  });

  it('a file list that cannot be read: retried, then counted as a gap, and the new file is followed', async () => {
    const src = new MemoryLogSource('s').addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 2));
    const sink = collector();
    const gaps: number[] = [];
    const f = follower(src, sink, { startAt: 'beginning', onRotationGap: () => gaps.push(1) });
    await f.run(signal(), false);
    src.append(ACCESS, lines(3, 3));
    src.rotate(ACCESS, '2024-01-16 00:00:00');
    src.append(ACCESS, lines(4, 6));
    src.failListing(unparsable());
    const stop = new AbortController();
    controllers.push(stop);
    const running = f.run(stop.signal, true);
    await waitFor('the new file followed', () => (sink.comments().includes('line 6') ? true : undefined), 45_000);
    // Line 3 was in the rolled file nobody could name: lost, said and counted once, never a stall.
    expect(sink.comments()).toEqual(['line 1', 'line 2', 'line 4', 'line 5', 'line 6']);
    expect(gaps).toEqual([1]);
    expect(src.callsOf('listLogFiles')).toHaveLength(3);
    src.append(ACCESS, lines(7, 7));
    await waitFor('later lines', () => (sink.comments().includes('line 7') ? true : undefined), 45_000);
    stop.abort();
    await running;
  });

  it('an unreachable server during a rotation is retried, not given up', async () => {
    const src = new MemoryLogSource('s').addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 2));
    const sink = collector();
    const gaps: number[] = [];
    const f = follower(src, sink, { startAt: 'beginning', onRotationGap: () => gaps.push(1) });
    await f.run(signal(), false);
    src.append(ACCESS, lines(3, 3));
    src.rotate(ACCESS, '2024-01-16 00:00:00');
    src.append(ACCESS, lines(4, 4));
    src.failListing(Object.assign(new Error('connection refused'), { kind: 'network' }));
    const stop = new AbortController();
    controllers.push(stop);
    const running = f.run(stop.signal, true);
    await waitFor('several tries', () => (src.callsOf('listLogFiles').length >= 4 ? true : undefined), 45_000);
    expect(sink.comments()).toEqual(['line 1', 'line 2']);
    src.failListing(undefined);
    await waitFor('the rest', () => (sink.comments().includes('line 4') ? true : undefined), 45_000);
    expect(sink.comments()).toEqual(['line 1', 'line 2', 'line 3', 'line 4']);
    expect(gaps).toEqual([]);
    stop.abort();
    await running;
  });
});

describe('logs tail', () => {
  function output() {
    const out = new PassThrough();
    let text = '';
    out.on('data', (d: Buffer) => (text += d.toString('utf8')));
    return { out, text: () => text };
  }

  it('prints the last lines exactly as held (raw)', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 12));
    const o = output();
    await tailLog({ source: src, logType: ACCESS, format: 'raw', lines: 3, out: o.out });
    expect(o.text()).toBe(lines(10, 12).join('\n') + '\n');
  });

  it('prints a whole file as parsed JSON records, headers left out', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 2));
    const o = output();
    await tailLog({ source: src, logType: ACCESS, startAt: 'beginning', out: o.out });
    const records = o.text().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({ server: 'wowza-test', log_type: ACCESS, 'x-comment': 'line 1', 'sc-bytes': 4096, timestamp: '2024-01-15T10:23:45.000Z' });
  });

  it('ends quietly when the reader of its output goes away', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 3));
    const out = new Writable({
      write(_chunk, _enc, cb) {
        cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    out.on('error', () => undefined);
    await expect(tailLog({ source: src, logType: ACCESS, follow: true, startAt: 'beginning', out, followIntervalMs: 10 })).resolves.toBeUndefined();
  });

  it('follows new lines until stopped', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    const o = output();
    const stop = new AbortController();
    const done = tailLog({ source: src, logType: ACCESS, follow: true, format: 'raw', lines: 0, out: o.out, signal: stop.signal, followIntervalMs: 10 });
    await waitFor('the tail to start', () => src.callsOf('readLog').length > 0 || undefined);
    src.append(ACCESS, ['#Comment: raw keeps headers', ...lines(1, 1)]);
    await waitFor('the appended lines', () => o.text().includes('line 1') || undefined);
    stop.abort();
    await done;
    expect(o.text()).toBe(`#Comment: raw keeps headers\n${lines(1, 1)[0]}\n`);
  });
});

/** A MemoryLogSource whose answers a test can bend after the real ones are made. */
class BentSource extends MemoryLogSource {
  bend: (page: LogPage, q: LogQuery) => LogPage = (page) => page;
  override async readLog(logType: string, q: LogQuery, signal?: AbortSignal): Promise<LogPage> {
    return this.bend(await super.readLog(logType, q, signal), q);
  }
}

describe('log follower: answers it cannot use (issue 24)', () => {
  it('never takes, asks for or saves a negative offset: such a read fails and is retried', async () => {
    const src = new BentSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 2));
    src.bend = (page) => ({ ...page, endOffset: -21474836, fileLength: -5 });
    const errors: Error[] = [];
    const sink = collector();
    const done = follower(src, sink, { startAt: 'end', onReadError: (e) => errors.push(e as Error), maxRetryDelayMs: 20 }).run(signal(), true);
    await waitFor('a few failed reads', () => errors.length >= 3 || undefined);
    expect(errors[0]!.message).toMatch(/unusable (endOffset|fileLength|startOffset) \(-/);
    expect(sink.chunks).toEqual([]);
    for (const call of src.calls) expect(call.query?.startOffset ?? 0).toBeGreaterThanOrEqual(0);
    // Good answers again: it starts, at a real offset.
    src.bend = (page) => page;
    await waitFor('the start position', () => sink.chunks.length > 0 || undefined);
    expect(sink.chunks[0]!.position.offset).toBe(src.size(ACCESS));
    controllers.at(-1)!.abort();
    await done;
  });

  it('a read that returns lines without moving its end offset ships them once, and counts the rest', async () => {
    const src = new BentSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 3));
    const end = src.size(ACCESS);
    // From the end on, the server answers the last line again with an end offset that does not move.
    src.bend = (page, q) => ((q.startOffset ?? 0) >= end ? { ...page, lines: [accessLine('line 3')], startOffset: end, endOffset: end } : page);
    let repeated = 0;
    const sink = collector();
    const done = follower(src, sink, { startAt: 'beginning', onRepeatedLines: (n) => (repeated += n) }).run(signal(), true);
    await waitFor('several polls at the end', () => repeated >= 5 || undefined);
    expect(sink.comments()).toEqual(['line 1', 'line 2', 'line 3']);
    expect(Math.max(...sink.chunks.map((c) => c.position.offset))).toBe(end);
    controllers.at(-1)!.abort();
    await done;
  });

  it('a log start date that changes on every read is followed with growing pauses, not a request storm', async () => {
    const src = new BentSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, lines(1, 3));
    let n = 0;
    src.bend = (page) => ({ ...page, logStartDate: `2024-01-15 00:00:${String(n++ % 60).padStart(2, '0')}` });
    let rapid = 0;
    let rotations = 0;
    const sink = collector();
    const sig = signal();
    const done = follower(src, sink, { startAt: 'beginning', followIntervalMs: 10, maxRetryDelayMs: 1000, onRapidRotation: () => rapid++, onRotation: () => rotations++ }).run(sig, true);
    await new Promise((r) => setTimeout(r, 1500));
    controllers.at(-1)!.abort();
    await done;
    expect(rapid).toBeGreaterThan(0);
    // Without pacing this is a rotation per read, hundreds a second; with it, the pauses double from 10 ms.
    expect(rotations).toBeLessThan(15);
    expect(src.calls.length).toBeLessThan(150);
  });
});
