import fc from 'fast-check';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../../src/base/logger.js';
import { EncoderPool } from '../../../../src/logs/transform/encoder-pool.js';
import { entriesOf, LineEncoder, type EncodingSettings, type LineSegment } from '../../../../src/logs/transform/line-encoding.js';
import { entryRecord as entryRecordOf } from '../../../../src/logs/transform/entry.js';
import { compileRecordFilter } from '../../../../src/logs/transform/record-filter.js';
import { redactSecrets } from '../../../../src/base/redact.js';
import { isoUtc, TimestampConverter, toUtcTimestamp } from '../../../../src/logs/transform/timestamp.js';
import { encodeNdjson } from '../../../../src/logs/sinks/ndjson.js';
import { buildLokiPush, encodeLokiPush } from '../../../../src/logs/sinks/loki.js';
import { severityLabel } from '../../../../src/wowza/log-vocabulary.js';
import { cleanForJson, quotedRecordJson, recordJson, W3cLogParser, type LogRecord } from '../../../../src/logs/transform/w3c-parser.js';
import { ACCESS_LOG_FIELDS } from '../../../helpers/memory-log-source.js';

/**
 * The shipping hot path (redaction with cheap pre-checks, parsing into compiled record classes, encoding in
 * worker threads) must give exactly what the plain, slow way gives.
 */

const FIELDS = ACCESS_LOG_FIELDS.join(' ');
const dir = mkdtempSync(join(tmpdir(), 'wowza-encoding-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The plain way: both patterns applied to every string, every field of the record redacted on its own.
const USER_INFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;
const SECRET_PARAMS = /((?:^|[?&;\s])[\w.-]*(?:token|tokenhash|auth|password|passwd|pwd|secret|key|signature|sig)=)[^&#\s]*/gi;
const plainRedact = (text: string) => text.replace(USER_INFO, '$1').replace(SECRET_PARAMS, '$1REDACTED');
function plainRedactRecord(record: LogRecord): LogRecord {
  const out: LogRecord = {};
  for (const [k, v] of Object.entries(record)) out[k] = typeof v === 'string' ? plainRedact(v) : v;
  return out;
}

const piece = fc.oneof(
  fc.constantFrom('rtsp://', 'srt://', 'admin:s3cret@', '@', '?token=abc', '&Key=x', 'passwd=1;', 'tokenhash=z', 'SIG=', '=', '://', ' ', '/', '#', ';', '-', '∞', '„Süd“', '🎥', '"', '\\'),
  fc.string({ maxLength: 8 }),
);
const fieldText = fc.array(piece, { maxLength: 6 }).map((p) => p.join('').replace(/[\t\r\n]/g, ' '));

function accessLine(values: Record<string, string>): string {
  return ACCESS_LOG_FIELDS.map((f) => values[f] ?? '-').join('\t');
}

const line = fc
  .record({
    time: fc.integer({ min: 0, max: 86_399 }),
    severity: fc.constantFrom('INFO', 'WARN', 'ERROR', 'DEBUG', 'bogus', '-'),
    event: fc.constantFrom('play', 'publish', 'connect', 'weird', '-'),
    category: fc.constantFrom('stream', 'session', 'odd', '-'),
    app: fc.constantFrom('live', 'vod', '-'),
    suri: fieldText,
    comment: fieldText,
    bytes: fc.oneof(fc.integer({ min: 0 }).map(String), fc.constantFrom('-', '1.50', 'n/a', '18446744073709551615')),
  })
  .map((v) =>
    accessLine({
      date: '2024-01-15',
      time: new Date(v.time * 1000).toISOString().slice(11, 19),
      tz: 'UTC',
      'x-severity': v.severity,
      'x-event': v.event,
      'x-category': v.category,
      'x-app': v.app,
      'x-suri': v.suri || '-',
      'x-comment': v.comment || '-',
      'sc-bytes': v.bytes,
    }),
  );

const SETTINGS: EncodingSettings = { timeZone: 'UTC', redactSecrets: true, filters: { min_severity: 'info', events: { exclude: ['connect'] } }, documents: true, lokiLines: true };

/** What the shipper used to do line by line: parse, redact every field, filter, stringify, count. */
function plainEncode(lines: readonly string[], settings: EncodingSettings) {
  const parser = new W3cLogParser({ fields: FIELDS, defaultTimeZone: settings.timeZone });
  const filter = compileRecordFilter(settings.filters);
  const kept: Array<{ document?: string; lokiLine?: string; severity: string; line: string }> = [];
  const severities = new Map<string, number>();
  for (const text of lines) {
    const parsed = parser.parseLine(text);
    if (parsed.kind !== 'record') continue;
    const record = settings.redactSecrets ? plainRedactRecord(parsed.record) : parsed.record;
    const severity = severityLabel(record['x-severity']);
    severities.set(severity, (severities.get(severity) ?? 0) + 1);
    if (!filter(record)) continue;
    kept.push({
      ...(settings.documents !== false ? { document: JSON.stringify({ server: 'edge-1', log_type: 'access', ...record }) } : {}),
      ...(settings.lokiLines ? { lokiLine: JSON.stringify(JSON.stringify(record)) } : {}),
      severity,
      line: settings.redactSecrets ? plainRedact(text) : text,
    });
  }
  return { kept, severities: [...severities].sort() };
}

function viewOf(segment: LineSegment, e: ReturnType<LineEncoder['encode']>, settings: EncodingSettings = SETTINGS) {
  return {
    kept: entriesOf(segment, e, settings, 0).map(({ document, lokiLine, severity, line }) => ({
      ...(document ? { document: document.toString('utf8') } : {}),
      ...(lokiLine ? { lokiLine: lokiLine.toString('utf8') } : {}),
      severity,
      line,
    })),
    severities: [...e.counts.severities].sort(),
  };
}

describe('log line encoding', () => {
  it('blanks the same secrets as applying both patterns to every string', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 20 }), (parts) => {
        const text = parts.join('');
        expect(redactSecrets(text)).toBe(plainRedact(text));
      }),
      { numRuns: 3000 },
    );
  });

  it('writes timestamps exactly as Date#toISOString does', () => {
    fc.assert(
      fc.property(fc.integer({ min: -5e12, max: 3e14 }), (ms) => {
        expect(isoUtc(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 3000 },
    );
  });

  it('converts a stream of times as toUtcTimestamp converts each', () => {
    const converter = new TimestampConverter();
    const date = fc.constantFrom('2024-01-15', '2024-02-29', '2023-02-29', '2024-03-31', '2024-10-27', '1969-12-31', '2024-13-01', 'x');
    const time = fc.oneof(
      fc.tuple(fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 61 }), fc.integer({ min: 0, max: 61 })).map((t) => t.map((n) => String(n).padStart(2, '0')).join(':')),
      fc.constantFrom('12:00:00.250', '1:00:00', '12:0a:00', 'aa:bb:cc', ''),
    );
    const zone = fc.constantFrom('UTC', 'CET', 'cest', '+0200', 'GMT-05:00', ' PST ', 'Europe/Berlin', 'America/New_York', 'Mars/Olympus', '-');
    fc.assert(
      fc.property(fc.array(fc.tuple(date, time, zone), { maxLength: 20 }), (rows) => {
        for (const [d, t, z] of rows) expect(converter.convert(d, t, z)).toEqual(toUtcTimestamp(d, t, z));
      }),
      { numRuns: 500 },
    );
  });

  it('gives the records, JSON, labels and filtering of the line-by-line way', () => {
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 30 }), fc.boolean(), fc.constantFrom([true, false], [false, true], [true, true]), (lines, redact, [documents, lokiLines]) => {
        const settings = { ...SETTINGS, redactSecrets: redact, documents, lokiLines };
        const segment = { server: 'edge-1', logType: 'access', fields: FIELDS, lines };
        expect(viewOf(segment, new LineEncoder(settings).encode(segment), settings)).toEqual(plainEncode(lines, settings));
      }),
      { numRuns: 300 },
    );
  });

  it('writes straight from the line (no filters) exactly what the line-by-line way gives, whatever the characters and numbers', () => {
    const odd = fc.oneof(
      fieldText,
      fc.string({ unit: 'binary', maxLength: 10 }).map((v) => v.replace(/[\t\r\n]/g, ' ')),
      fc.constantFrom('\ufffd', '\ud83c', '🎥', 'ü∞', '"', '\\', '', '-'),
    );
    const number = fc.oneof(
      fc.integer().map(String),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
      fc.stringMatching(/^-?\d{1,20}(\.\d{1,20})?$/),
      fc.constantFrom('0', '-0', '0.000', '-0.0', '1.50', '007', '1e3', '0.000001', '0.0000001', '123456789012345.5', '18446744073709551615', '-', '', 'n/a'),
    );
    const record = fc.record({ time: fc.integer({ min: 0, max: 86_399 }), comment: odd, uri: odd, event: odd, bytes: number, duration: number, port: number }).map((v) =>
      accessLine({
        date: '2024-01-15',
        time: new Date(v.time * 1000).toISOString().slice(11, 19),
        tz: 'UTC',
        'x-event': v.event,
        'x-comment': v.comment,
        'x-suri': v.uri,
        'sc-bytes': v.bytes,
        'x-duration': v.duration,
        's-port': v.port,
      }),
    );
    const settings: EncodingSettings = { ...SETTINGS, filters: {} };
    fc.assert(
      fc.property(fc.array(fc.oneof(record, line), { minLength: 1, maxLength: 20 }), fc.boolean(), fc.constantFrom([true, false], [false, true], [true, true]), (lines, redact, [documents, lokiLines]) => {
        const s = { ...settings, redactSecrets: redact, documents, lokiLines };
        const segment = { server: 'edge-1', logType: 'access', fields: FIELDS, lines };
        expect(viewOf(segment, new LineEncoder(s).encode(segment), s)).toEqual(plainEncode(lines, s));
      }),
      { numRuns: 1000 },
    );
  });

  it('sends NDJSON of consecutive documents of one segment as the bytes the encoder wrote', () => {
    const settings: EncodingSettings = { ...SETTINGS, filters: {}, documents: true, lokiLines: false };
    const lines = fc.sample(line, { numRuns: 50, seed: 3 });
    const segment = { server: 'edge-1', logType: 'access', fields: FIELDS, lines };
    const entries = entriesOf(segment, new LineEncoder(settings).encode(segment), settings, 0);
    const expected = entries.map((e) => `${e.document!.toString('utf8')}\n`).join('');
    expect(encodeNdjson(entries).toString('utf8')).toBe(expected);
    // Runs of two segments, and entries out of order, are copied.
    const other = entriesOf(segment, new LineEncoder(settings).encode(segment), settings, 0);
    const mixed = [...entries.slice(0, 10), ...other.slice(5, 20), entries[30]!, entries[29]!];
    expect(encodeNdjson(mixed).toString('utf8')).toBe(mixed.map((e) => `${e.document!.toString('utf8')}\n`).join(''));
    expect(encodeNdjson([]).length).toBe(0);
  });

  it('sends a Loki push of consecutive lines of one stream as the values the encoder wrote, byte for byte the push built entry by entry', () => {
    for (const documents of [false, true]) {
      const settings: EncodingSettings = { ...SETTINGS, filters: {}, documents, lokiLines: true };
      const lines = fc.sample(line, { numRuns: 60, seed: 5 });
      // A line whose date cannot be read carries no time of its own: its value is written by the push, not the encoder.
      lines[7] = lines[7]!.replace('2024-01-15', 'someday');
      const segment = { server: 'edge-1', logType: 'access', fields: FIELDS, lines };
      const entries = entriesOf(segment, new LineEncoder(settings).encode(segment), settings, 1_700_000_000_000);
      expect(entries.filter((e) => (e.lokiPrefix ?? 0) > 0).length).toBe(59);
      expect(entries.map((e) => e.lokiLine!.toString('utf8'))).toEqual(entries.map((e) => JSON.stringify(JSON.stringify(entryRecordOf(e)))));
      const other = entriesOf(segment, new LineEncoder(settings).encode(segment), settings, 1_700_000_000_000);
      // Runs of two segments, entries out of order, several streams (severities), and none.
      for (const batch of [entries, [...entries.slice(0, 10), ...other.slice(5, 20), entries[30]!, entries[29]!], []]) {
        expect(encodeLokiPush(batch, { env: 'x' }).toString('utf8')).toBe(JSON.stringify(buildLokiPush(batch, { env: 'x' })));
      }
    }
  });

  it('writes records and Loki lines as JSON.stringify(record) and JSON.stringify(JSON.stringify(record)) do, whatever the characters', () => {
    const odd = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.constantFrom('\u0001', '\u001f', '\u2028', '\u2029', '\ud800', '\udfff', '🎥', '"', '\\', '-', '12', '1.50', '-0'),
    );
    fc.assert(
      fc.property(fc.tuple(odd, odd, odd, odd, odd), ([event, comment, bytes, uri, date]) => {
        const parser = new W3cLogParser({ fields: 'date time tz x-event x-comment sc-bytes x-suri' });
        const clean = (v: string) => v.replace(/[\t\r\n]/g, ' ');
        const parsed = parser.parseLine(['2024-01-15', '10:00:00', 'UTC', event, comment, bytes, uri].map(clean).join('\t'));
        const generic = new W3cLogParser({ fields: 'date time tz x-event x-comment sc-bytes x-suri' }).parseLine([clean(date), '10:00:00', 'UTC', event, comment, bytes, uri].map(clean).join('\t'));
        for (const p of [parsed, generic]) {
          if (p.kind !== 'record') continue;
          expect(quotedRecordJson(p.record)).toBe(JSON.stringify(JSON.stringify(p.record)));
          expect(recordJson(p.record)).toBe(JSON.stringify(p.record));
        }
      }),
      { numRuns: 2000 },
    );
    const named = new W3cLogParser({ fields: 'date time tz a"b c\\d ü∞' }).parseLine('2024-01-15\t10:00:00\tUTC\tx\ty\tz');
    if (named.kind !== 'record') throw new Error('expected a record');
    expect(Object.keys(named.record)).toEqual(['timestamp', 'a"b', 'c\\d', 'ü∞']);
    expect(quotedRecordJson(named.record)).toBe(JSON.stringify(JSON.stringify(named.record)));
    expect(recordJson(named.record)).toBe(JSON.stringify(named.record));
  });

  it('finds a line clean for JSON exactly when no UTF-16 unit of it but the tab is one JSON.stringify escapes', () => {
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c);
      const escaped = c !== 9 && JSON.stringify(ch) !== `"${ch}"`;
      expect(cleanForJson(`a\t${ch}\tb`), `U+${c.toString(16)}`).toBe(!escaped);
    }
    // A valid pair needs no escaping, but surrogates, paired or not, take the checked way: slower, never wrong.
    expect(cleanForJson('🎥')).toBe(false);
  });

  it('ships lines it failed to encode as raw records with a parse_error, never drops them', () => {
    const encoder = new LineEncoder({ ...SETTINGS, filters: {} });
    vi.spyOn(encoder, 'encode').mockImplementationOnce(() => {
      throw new Error('boom');
    });
    const lines = fc.sample(line, { numRuns: 5, seed: 1 });
    const segment = { server: 'edge-1', logType: 'access', fields: FIELDS, lines };
    const kept = viewOf(segment, encoder.encodeSafely(segment)).kept;
    expect(kept).toHaveLength(5);
    expect(kept.map((k) => JSON.parse(k.document!) as Record<string, unknown>)).toEqual(
      lines.map((l) => ({ server: 'edge-1', log_type: 'access', timestamp: null, raw: redactSecrets(l), parse_error: 'cannot encode the line: boom' })),
    );
  });

  it('keeps columns in header order as plain JSON keys, whichever way a record was built', () => {
    // A layout with a duplicated column is not compiled: both ways must give the same keys and text.
    const compiled = new W3cLogParser({ fields: 'date time tz x-event x-comment' });
    const generic = new W3cLogParser({ fields: 'date time tz x-event x-comment x-comment' });
    const a = compiled.parseLine('2024-01-15\t10:00:00\tUTC\tplay\thello "you"');
    const b = generic.parseLine('2024-01-15\t10:00:00\tUTC\tplay\tignored\thello "you"');
    if (a.kind !== 'record' || b.kind !== 'record') throw new Error('expected records');
    expect(Object.keys(a.record)).toEqual(['timestamp', 'x-event', 'x-comment']);
    expect(JSON.stringify(a.record)).toBe(JSON.stringify(b.record));
    expect(JSON.stringify({ ...a.record })).toBe(JSON.stringify(a.record));
  });
});

describe('encoder threads', () => {
  const worker = new URL('../../../../dist/logs/transform/encode-worker.js', import.meta.url);
  const lines = fc.sample(line, { numRuns: 900, seed: 42 });
  const segment: LineSegment = { server: 'edge-1', logType: 'access', fields: FIELDS, lines };
  const expected = viewOf(segment, new LineEncoder(SETTINGS).encode(segment));

  function capture() {
    const text: string[] = [];
    const destination = new Writable({ write: (c, _e, cb) => (text.push(String(c)), cb()) });
    return { logger: createLogger({ level: 'debug', destination }), text: () => text.join('') };
  }

  it('encode in a worker thread what the event loop would', async () => {
    expect(existsSync(worker), 'the compiled worker is missing: run `npm run build` first').toBe(true);
    const pool = new EncoderPool({ settings: SETTINGS, threads: 2, cpus: 4, logger: capture().logger, workerUrl: worker });
    try {
      const size = pool.partSize(lines.length);
      expect(size).toBe(450);
      const parts = [segment.lines.slice(0, size), segment.lines.slice(size)].map((l) => ({ server: 'edge-1', logType: 'access', fields: FIELDS, lines: l }));
      const results = await Promise.all(parts.map((p) => pool.encode(p)));
      expect(pool.size).toBe(2);
      const joined = parts.flatMap((p, i) => viewOf(p, results[i]!).kept);
      expect(joined).toEqual(expected.kept);
      // Short segments stay on the event loop: a round trip to a thread costs more than they do.
      await pool.encode({ server: 'edge-1', logType: 'access', fields: FIELDS, lines: lines.slice(0, 10) });
    } finally {
      await pool.close();
    }
  });

  it('encode lines with a lone surrogate, which UTF-8 cannot carry to a thread, as the event loop would', async () => {
    const pool = new EncoderPool({ settings: SETTINGS, threads: 1, cpus: 4, logger: capture().logger, workerUrl: worker });
    try {
      const broken = [...lines.slice(0, 300)];
      broken[150] = broken[150]!.replace('-', 'lone \ud83c surrogate');
      const withLone: LineSegment = { server: 'edge-1', logType: 'access', fields: FIELDS, lines: broken };
      const fromPool = viewOf(withLone, await pool.encode(withLone)).kept;
      expect(fromPool).toEqual(viewOf(withLone, new LineEncoder(SETTINGS).encode(withLone)).kept);
      expect(fromPool.some((k) => JSON.stringify(k).includes('\\ud83c'))).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('the bundle that `npx wowza-exporter` runs has its worker beside the encoder pool\'s chunk, and it encodes the same', async () => {
    const root = new URL('../../../../dist/', import.meta.url);
    const chunks = JSON.parse(readFileSync(new URL('chunks/modules.json', root), 'utf8')) as Record<string, string[]>;
    const poolChunk = Object.keys(chunks).find((f) => chunks[f]!.includes('src/logs/transform/encoder-pool.ts'));
    expect(poolChunk, 'no chunk of dist/ holds the encoder pool: run `npm run build` first').toBeDefined();
    // The pool starts `./encode-worker.js` relative to its own module (src/logs/transform/encoder-pool.ts).
    const bundled = new URL('./encode-worker.js', new URL(poolChunk!, root));
    expect(Object.keys(chunks)).toContain(fileURLToPath(bundled).slice(fileURLToPath(root).length));
    const pool = new EncoderPool({ settings: SETTINGS, threads: 1, cpus: 4, logger: capture().logger, workerUrl: bundled });
    try {
      const result = await pool.encode(segment);
      expect(pool.size).toBe(1);
      expect(viewOf(segment, result).kept).toEqual(expected.kept);
    } finally {
      await pool.close();
    }
  });

  it('run at most one thread fewer than the CPUs, and none on two or one (the event loop needs a core, and a thread beside it on two gained nothing)', async () => {
    for (const [cpus, threads] of [[3, 2], [2, 0], [1, 0]] as const) {
      const pool = new EncoderPool({ settings: SETTINGS, threads: 2, cpus, logger: capture().logger, workerUrl: worker });
      try {
        expect(pool.partSize(lines.length)).toBe(threads === 0 ? lines.length : Math.max(200, Math.ceil(lines.length / threads)));
        // Two segments at once: as many threads run as may.
        const both = await Promise.all([pool.encode(segment), pool.encode(segment)]);
        for (const result of both) expect(viewOf(segment, result).kept).toEqual(expected.kept);
        expect(pool.size).toBe(threads);
      } finally {
        await pool.close();
      }
    }
  });

  it('stop threads that have had no work for a while, and start them again when work comes', async () => {
    const log = capture();
    const pool = new EncoderPool({ settings: SETTINGS, threads: 1, cpus: 4, logger: log.logger, workerUrl: worker, idleMs: 200 });
    try {
      expect(viewOf(segment, await pool.encode(segment)).kept).toEqual(expected.kept);
      expect(pool.size).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(pool.size).toBe(0);
      expect(viewOf(segment, await pool.encode(segment)).kept).toEqual(expected.kept);
      expect(pool.size).toBe(1);
      expect(log.text()).not.toContain('failed');
    } finally {
      await pool.close();
    }
  });

  it('encode on the event loop what a failing thread could not, and stop using threads that keep failing', async () => {
    const crashing = join(dir, 'crashing-worker.mjs');
    // Takes the first request and dies with it, as a thread that runs out of memory would.
    writeFileSync(crashing, "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => process.exit(7));\n");
    const log = capture();
    const pool = new EncoderPool({ settings: SETTINGS, threads: 1, cpus: 4, logger: log.logger, workerUrl: pathToFileURL(crashing) });
    try {
      for (let i = 0; i < 4; i++) expect(viewOf(segment, await pool.encode(segment))).toEqual(expected);
      expect(log.text()).toContain('encoder thread failed: its lines are parsed on the event loop');
      expect(log.text()).toContain('encoder threads keep failing: log lines are parsed on the event loop from now on');
      expect(pool.size).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('start no thread at all when there is no compiled worker', async () => {
    const pool = new EncoderPool({ settings: SETTINGS, threads: 2, cpus: 4, logger: capture().logger, workerUrl: pathToFileURL(join(dir, 'missing.js')) });
    expect(viewOf(segment, await pool.encode(segment))).toEqual(expected);
    expect(pool.size).toBe(0);
    await pool.close();
  });
});
