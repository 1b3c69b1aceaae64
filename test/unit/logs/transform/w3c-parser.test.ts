import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ACCESS_LOG_FIELDS, ERROR_LOG_FIELDS } from '../../../helpers/memory-log-source.js';
import { toUtcTimestamp } from '../../../../src/logs/transform/timestamp.js';
import { parseFieldsHeader, startDateHeader, W3cLogParser, type LogRecord, type ParsedLine } from '../../../../src/logs/transform/w3c-parser.js';

const PLAY: Record<string, string> = {
  date: '2024-01-15', time: '10:23:45', tz: 'UTC', 'x-event': 'play', 'x-category': 'stream', 'x-severity': 'INFO',
  'x-status': '200', 'x-ctx': 'cam1', 'x-comment': '-', 'x-vhost': '_defaultVHost_', 'x-app': 'live',
  'x-appinst': '_definst_', 'x-duration': '12.345', 's-ip': '203.0.113.10', 's-port': '1935',
  's-uri': 'rtmp://203.0.113.10:1935/live', 'c-ip': '198.51.100.7', 'c-proto': 'rtmp', 'c-referrer': '-',
  'c-user-agent': 'WIN 32,0,0,100', 'c-client-id': '1984732', 'cs-bytes': '3456', 'sc-bytes': '1234567',
  'x-stream-id': '1', 'x-spos': '0', 'cs-stream-bytes': '0', 'sc-stream-bytes': '1200000', 'x-sname': 'cam1',
  'x-sname-query': '-', 'x-file-name': '-', 'x-file-ext': '-', 'x-file-size': '-', 'x-file-length': '-',
  'x-suri': 'rtmp://203.0.113.10:1935/live/cam1', 'x-suri-stem': 'rtmp://203.0.113.10:1935/live/cam1',
  'x-suri-query': '-', 'cs-uri-stem': 'rtmp://203.0.113.10:1935/live', 'cs-uri-query': '-',
};

const ACCESS_HEADER = `#Fields: ${ACCESS_LOG_FIELDS.join('\t')}`;
const ERROR_HEADER = `#Fields: ${ERROR_LOG_FIELDS.join('\t')}`;

function accessLine(overrides: Record<string, string> = {}): string {
  return ACCESS_LOG_FIELDS.map((f) => overrides[f] ?? PLAY[f]!).join('\t');
}

function record(parsed: ParsedLine): LogRecord {
  if (parsed.kind !== 'record') throw new Error(`expected a record, got ${parsed.kind}`);
  return parsed.record;
}

function parserWith(header: string, options: { defaultTimeZone?: string } = {}): W3cLogParser {
  const p = new W3cLogParser(options);
  expect(p.parseLine(header).kind).toBe('header');
  return p;
}

describe('W3C log parser', () => {
  it('turns a play line into a typed record named by the header', () => {
    const rec = record(parserWith(ACCESS_HEADER).parseLine(accessLine()));
    expect(rec.timestamp).toBe('2024-01-15T10:23:45.000Z');
    expect(rec['x-event']).toBe('play');
    expect(rec['x-category']).toBe('stream');
    expect(rec['sc-bytes']).toBe(1234567);
    expect(rec['cs-bytes']).toBe(3456);
    expect(rec['x-duration']).toBe(12.345);
    expect(rec['s-port']).toBe(1935);
    expect(rec['c-referrer']).toBeNull();
    expect(rec['x-file-size']).toBeNull();
    // Status codes and ids are not quantities: they stay text.
    expect(rec['x-status']).toBe('200');
    expect(rec['c-client-id']).toBe('1984732');
    expect(rec['c-user-agent']).toBe('WIN 32,0,0,100');
    // date/time/tz are folded into timestamp.
    expect(rec).not.toHaveProperty('date');
    expect(rec).not.toHaveProperty('tz');
    expect(rec).not.toHaveProperty('parse_error');
    expect(Object.keys(rec)).toHaveLength(ACCESS_LOG_FIELDS.length - 3 + 1);
  });

  it('maps the error log by its own column order', () => {
    const p = parserWith(ERROR_HEADER);
    const values: Record<string, string> = {
      'x-severity': 'WARN', 'x-category': 'server', 'x-event': 'comment', date: '2024-01-15', time: '10:24:00',
      'x-comment': 'License key expires in 10 days',
    };
    const rec = record(p.parseLine(ERROR_LOG_FIELDS.map((f) => values[f] ?? '-').join('\t')));
    expect(rec).toMatchObject({
      timestamp: '2024-01-15T10:24:00.000Z',
      'x-severity': 'WARN',
      'x-category': 'server',
      'x-event': 'comment',
      'x-comment': 'License key expires in 10 days',
      'c-port': null,
      'x-duration': null,
    });
  });

  it('reads local times without a tz column in the configured zone', () => {
    const p = parserWith('#Fields: x-severity date time x-comment', { defaultTimeZone: 'Europe/Berlin' });
    expect(record(p.parseLine('ERROR\t2024-07-01\t12:00:00\tdisk full')).timestamp).toBe('2024-07-01T10:00:00.000Z');
    expect(record(p.parseLine('ERROR\t2024-01-10\t12:00:00\tdisk full')).timestamp).toBe('2024-01-10T11:00:00.000Z');
  });

  it.each([
    ['UTC', '2024-01-15T10:23:45.000Z'],
    ['CET', '2024-01-15T09:23:45.000Z'],
    ['PST', '2024-01-15T18:23:45.000Z'],
    ['+0530', '2024-01-15T04:53:45.000Z'],
    ['GMT-05:00', '2024-01-15T15:23:45.000Z'],
    ['America/New_York', '2024-01-15T15:23:45.000Z'],
  ])('converts time zone %s to UTC', (tz, expected) => {
    expect(record(parserWith(ACCESS_HEADER).parseLine(accessLine({ tz }))).timestamp).toBe(expected);
  });

  it('keeps fractional seconds', () => {
    expect(toUtcTimestamp('2024-01-15', '10:23:45.250', 'UTC')).toEqual({ ok: true, iso: '2024-01-15T10:23:45.250Z', ms: Date.UTC(2024, 0, 15, 10, 23, 45, 250) });
  });

  it('marks a line with an unreadable time instead of guessing it', () => {
    const p = parserWith(ACCESS_HEADER);
    const zone = record(p.parseLine(accessLine({ tz: 'Mars/Olympus' })));
    expect(zone.timestamp).toBeNull();
    expect(zone.parse_error).toMatch(/unknown time zone "Mars\/Olympus"/);
    expect(zone.tz).toBe('Mars/Olympus');
    expect(zone['x-event']).toBe('play');
    const date = record(p.parseLine(accessLine({ date: '2024-02-31' })));
    expect(date.timestamp).toBeNull();
    expect(date.parse_error).toMatch(/invalid date/);
    expect(date.date).toBe('2024-02-31');
  });

  it('follows a header that changes mid-stream', () => {
    const p = parserWith(ACCESS_HEADER);
    expect(record(p.parseLine(accessLine()))['x-event']).toBe('play');
    expect(p.parseLine('#Fields: date time tz x-event x-comment x-app')).toEqual({ kind: 'header', name: 'Fields', value: 'date time tz x-event x-comment x-app' });
    const rec = record(p.parseLine('2024-01-15\t11:00:00\tUTC\tpublish\tcamera online\tlive'));
    expect(rec).toEqual({ timestamp: '2024-01-15T11:00:00.000Z', 'x-event': 'publish', 'x-comment': 'camera online', 'x-app': 'live' });
    expect(p.fields).toBe('date time tz x-event x-comment x-app');
  });

  it('uses fields given from outside (a page without headers) until a header says otherwise', () => {
    const p = new W3cLogParser({ fields: ACCESS_LOG_FIELDS.join(' ') });
    expect(record(p.parseLine(accessLine()))['sc-bytes']).toBe(1234567);
  });

  it('turns broken lines into records with the raw text and a parse error', () => {
    const none = new W3cLogParser();
    expect(record(none.parseLine(accessLine()))).toEqual({ timestamp: null, raw: accessLine(), parse_error: 'no #Fields header known for this log' });
    const p = parserWith(ACCESS_HEADER);
    const truncated = accessLine().split('\t').slice(0, 10).join('\t');
    expect(record(p.parseLine(truncated))).toEqual({ timestamp: null, raw: truncated, parse_error: `expected ${ACCESS_LOG_FIELDS.length} tab-separated fields, got 10` });
    expect(record(p.parseLine('garbage \u0000\u00ff line')).parse_error).toMatch(/expected/);
    // The parser keeps working after a broken line.
    expect(record(p.parseLine(accessLine())).parse_error).toBeUndefined();
  });

  it('handles CRLF, trailing tabs, blank lines and UTF-8 comments', () => {
    const p = parserWith(ACCESS_HEADER + '\r');
    expect(p.fields?.split(' ')).toHaveLength(ACCESS_LOG_FIELDS.length);
    const rec = record(p.parseLine(accessLine({ 'x-comment': 'Kamera „Süd“ 🎥 verbunden' }) + '\t\r'));
    expect(rec['x-comment']).toBe('Kamera „Süd“ 🎥 verbunden');
    expect(rec['cs-uri-query']).toBeNull();
    expect(p.parseLine('')).toEqual({ kind: 'blank' });
    expect(p.parseLine('  \r')).toEqual({ kind: 'blank' });
  });

  it('keeps 64-bit counters beyond exact double range as their digits', () => {
    const rec = record(parserWith(ACCESS_HEADER).parseLine(accessLine({ 'sc-bytes': '18446744073709551615', 'cs-bytes': 'n/a' })));
    expect(rec['sc-bytes']).toBe('18446744073709551615');
    expect(rec['cs-bytes']).toBe('n/a');
  });

  it('reads header metadata', () => {
    const p = new W3cLogParser();
    expect(p.parseLine('#Start-Date: 2024-01-15 00:00:00 UTC')).toEqual({ kind: 'header', name: 'Start-Date', value: '2024-01-15 00:00:00 UTC' });
    expect(p.parseLine('#Version: 1.0')).toEqual({ kind: 'header', name: 'Version', value: '1.0' });
    expect(startDateHeader(['#Version: 1.0', '#Start-Date: 2024-01-15 00:00:00', '#Fields: a'])).toBe('2024-01-15 00:00:00');
    expect(parseFieldsHeader('#Fields: date\ttime  tz')).toEqual(['date', 'time', 'tz']);
  });

  describe('properties', () => {
    const RESERVED = new Set(['date', 'time', 'tz', 'timestamp', 'raw', 'parse_error']);
    const fieldName = fc
      .oneof(fc.constantFrom(...ACCESS_LOG_FIELDS, ...ERROR_LOG_FIELDS), fc.stringMatching(/^[a-z][a-z0-9]{0,5}(-[a-z0-9]{1,6}){0,2}$/))
      .filter((f) => !RESERVED.has(f));
    const value = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 30 }).filter((s) => !/[\t\r\n]/.test(s)),
      fc.integer().map(String),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
      fc.constant('-'),
    );
    const row = fc
      .uniqueArray(fieldName, { minLength: 1, maxLength: 12 })
      .chain((fields) => fc.tuple(fc.constant(fields), fc.array(value, { minLength: fields.length, maxLength: fields.length })))
      .filter(([, values]) => !values[0]!.startsWith('#') && values.join('\t').trim() !== '');

    it('never throws, whatever the input', () => {
      fc.assert(
        fc.property(fc.array(fc.oneof(fc.string(), fc.constant('#Fields: a b c'), fc.string().map((s) => `#${s}`)), { maxLength: 20 }), (lines) => {
          const p = new W3cLogParser();
          for (const line of lines) p.parseLine(line);
        }),
        { numRuns: 300 },
      );
    });

    it('round-trips every field of a well-formed line', () => {
      fc.assert(
        fc.property(row, ([fields, values]) => {
          const p = new W3cLogParser();
          p.parseLine(`#Fields: ${fields.join(' ')}`);
          const rec = record(p.parseLine(values.join('\t')));
          expect(rec.parse_error).toBeUndefined();
          fields.forEach((f, i) => {
            const v = values[i]!;
            const got = rec[f];
            if (v === '-') expect(got).toBeNull();
            else if (typeof got === 'number') expect(got).toBe(Number(v));
            else expect(got).toBe(v);
          });
          expect(Object.keys(rec).sort()).toEqual(['timestamp', ...fields].sort());
        }),
        { numRuns: 300 },
      );
    });
  });
});
