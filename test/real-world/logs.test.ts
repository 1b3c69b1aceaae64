import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LineEncoder } from '../../src/logs/transform/line-encoding.js';
import { checkRecord, expected, follow } from './log-follow.js';

/**
 * Issue 38: every log file of the real-world corpus (test/fixtures/real-world/logs, PROVENANCE.md) through the
 * follower and the parser, each field checked against the line as written. The files are served as the REST API
 * serves a log: lines by byte offset, as the server holds them (a Windows server's CRLF included).
 */
const ROOT = join(import.meta.dirname, '../fixtures/real-world/logs');

const wowza471 = readdirSync(join(ROOT, '4.7.1-windows')).sort();

describe('real 4.7.1 logs (Windows, zone IST, CRLF, header blocks mid-file)', () => {
  for (const name of wowza471) {
    it(`${name}: every record line, every field, and its time`, async () => {
      const content = readFileSync(join(ROOT, '4.7.1-windows', name));
      const lines = await follow(content);
      const written = content.toString('utf8').split('\n');
      if (written.at(-1) === '') written.pop();
      // Nothing lost, nothing doubled, in order.
      expect(lines.map((l) => l.text.replace(/\r$/, ''))).toEqual(written.map((l) => l.replace(/\r$/, '')));
      let fields: string[] = [];
      let headerZone: string | undefined;
      let records = 0;
      for (const [i, line] of lines.entries()) {
        const text = line.text.replace(/\r$/, '');
        if (text.startsWith('#Fields:')) fields = text.slice('#Fields:'.length).trim().split('\t');
        if (text.startsWith('#Start-Date:')) headerZone = text.split(' ').at(-1);
        if (text.startsWith('#') || text.trim() === '') {
          expect(line.parsed.kind, `${name}:${i + 1}`).not.toBe('record');
          continue;
        }
        expect(line.parsed.kind, `${name}:${i + 1}`).toBe('record');
        if (line.parsed.kind !== 'record') continue;
        checkRecord(line.parsed.record, expected(fields, text, headerZone), `${name}:${i + 1}`);
        records++;
      }
      // Every record line was one (a file of headers only, after a restart, has none).
      expect(records).toBe(written.filter((l) => !l.startsWith('#') && l.replace(/\r$/, '').trim() !== '').length);
    });
  }

  it('an event in both the access log (tz IST) and the error log (no tz, header IST) has one timestamp', async () => {
    const find = async (name: string) => {
      const lines = await follow(readFileSync(join(ROOT, '4.7.1-windows', name)));
      const hit = lines.find((l) => l.parsed.kind === 'record' && String(l.parsed.record['x-comment']).startsWith('REST API: Server request (POST): Object already exists-409'));
      return hit?.parsed.kind === 'record' ? hit.parsed.record.timestamp : undefined;
    };
    const access = await find('wowzastreamingengine_access.log.2017-11-20');
    const error = await find('wowzastreamingengine_error.log');
    expect(access).toBe('2017-11-20T08:59:17.000Z');
    expect(error).toBe(access);
  });

  it("the same through serve's path: lines handed on unparsed carry the header's zone to the encoder", async () => {
    const lines = await follow(readFileSync(join(ROOT, '4.7.1-windows', 'wowzastreamingengine_error.log')), { deferRecords: true });
    const deferred = lines.filter((l) => l.parsed.kind === 'deferred');
    expect(deferred.length).toBeGreaterThan(0);
    const first = deferred[0]!.parsed as { kind: 'deferred'; fields: string | undefined; zone: string };
    expect(first.zone).toBe('IST');
    const encoder = new LineEncoder({ timeZone: 'UTC', redactSecrets: false, filters: {}, documents: true });
    const encoded = encoder.encode({ server: 'real', logType: 'error', fields: first.fields, zone: first.zone, lines: [deferred[0]!.text] });
    const doc = JSON.parse(Buffer.from(encoded.bytes).toString('utf8').split('\n')[0]!) as { timestamp: string };
    expect(doc.timestamp).toBe('2017-11-20T08:59:17.000Z');
  });

  it('a per-server log_time_zone overrides the header, and a tz column still wins line by line', async () => {
    const errorLines = await follow(readFileSync(join(ROOT, '4.7.1-windows', 'wowzastreamingengine_error.log')), { timeZone: 'Europe/Dublin' });
    const error = errorLines.find((l) => l.parsed.kind === 'record');
    // 14:29:17 in Dublin in November (GMT).
    expect(error?.parsed.kind === 'record' && error.parsed.record.timestamp).toBe('2017-11-20T14:29:17.000Z');
    const accessLines = await follow(readFileSync(join(ROOT, '4.7.1-windows', 'wowzastreamingengine_access.log.2017-11-20')), { timeZone: 'Europe/Dublin' });
    const access = accessLines.find((l) => l.parsed.kind === 'record');
    expect(access?.parsed.kind === 'record' && access.parsed.record.timestamp).toBe('2017-11-20T08:59:17.000Z');
  });
});

describe('a published access log whose tabs were turned into spaces (wms-2013-cest-redacted)', () => {
  it('cannot be read as W3C: every line is kept raw with a parse error that says why, none dropped', async () => {
    // The publisher replaced every tab with spaces and left out the header block (PROVENANCE.md): no columns to map.
    const content = readFileSync(join(ROOT, 'wms-2013-cest-redacted', 'access.log'));
    const lines = await follow(content);
    const written = content.toString('utf8').split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(written.length);
    for (const line of lines) {
      expect(line.parsed.kind).toBe('record');
      if (line.parsed.kind !== 'record') continue;
      expect(line.parsed.record.raw).toBe(line.text);
      expect(line.parsed.record.parse_error).toBe('no #Fields header known for this log');
    }
  });
});
