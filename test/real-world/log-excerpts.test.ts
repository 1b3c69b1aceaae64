import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkRecord, expected, follow } from './log-follow.js';

/**
 * Issue 38: the quoted log excerpts and console output of the corpus (test/fixtures/real-world/logs/quoted-excerpts,
 * test/fixtures/real-world/console, PROVENANCE.md) through the follower and the parser, each field checked.
 *
 * The excerpts are fragments: pasted lines without the file's header block, so without `#Fields`. A W3C line cannot
 * be read without its columns, so each is parsed with the `#Fields` line of a captured log of the same kind,
 * prepended here (the excerpt's own bytes follow unchanged):
 * - access excerpts: the `#Fields` of the captured 4.7.1 access log (38 columns, `date time tz x-event ...`), the
 *   order every WSE 4.x access log has; each excerpt's intact lines have exactly 38 columns in that order (a `tz`
 *   of `UTC` third, `x-event` fourth, the URIs last).
 * - the error excerpt: the `#Fields` of the captured 4.7.1 error log (20 columns, `x-severity x-category x-event date
 *   time ...`): its lines have 20 columns in that order. It has no `tz` column and the paste no `#Start-Date`, so no
 *   zone is known: read in the exporter's default zone (UTC), which a user would set with `log_time_zone`.
 * Console output is not a W3C log (space separated, no header block in any form): it gets no header, and every line
 * must be kept, raw, with the reason it could not be read.
 */
const CAPTURED = join(import.meta.dirname, '../fixtures/real-world/logs/4.7.1-windows');
const EXCERPTS = join(import.meta.dirname, '../fixtures/real-world/logs/quoted-excerpts');
const CONSOLE = join(import.meta.dirname, '../fixtures/real-world/console');

/** The first `#Fields:` line of a captured log, without its CRLF. */
function fieldsLineOf(file: string): string {
  return readFileSync(join(CAPTURED, file), 'utf8').split('\n').find((l) => l.startsWith('#Fields:'))!.replace(/\r$/, '');
}
const ACCESS_FIELDS = fieldsLineOf('wowzastreamingengine_access.log');
const ERROR_FIELDS = fieldsLineOf('wowzastreamingengine_error.log');
const columns = (fieldsLine: string) => fieldsLine.slice('#Fields:'.length).trim().split('\t');

/** Follows `header` + the excerpt's bytes; every line of the excerpt comes back in order, none lost. */
async function followExcerpt(bytes: Buffer, header: string | undefined, timeZone?: string) {
  const content = header === undefined ? bytes : Buffer.concat([Buffer.from(`${header}\n`), bytes]);
  const lines = await follow(content, timeZone ? { timeZone } : {});
  const written = bytes.toString('utf8').split('\n');
  if (written.at(-1) === '') written.pop();
  const own = header === undefined ? lines : lines.slice(1);
  expect(own.map((l) => l.text)).toEqual(written);
  return own;
}

describe('quoted access-log excerpts, parsed with the 4.x access #Fields', () => {
  const fields = columns(ACCESS_FIELDS);

  it('the header they are read with has 38 columns', () => {
    expect(fields).toHaveLength(38);
    expect(fields.slice(0, 4)).toEqual(['date', 'time', 'tz', 'x-event']);
  });

  it('wse-4.x-ec2-utc-2017 (HaishinKit #313): every line, every field, its UTC time', async () => {
    const lines = await followExcerpt(readFileSync(join(EXCERPTS, 'wse-4.x-ec2-utc-2017-access-excerpt-rtmp-publish_haishinkit-issue313.log')), ACCESS_FIELDS);
    expect(lines).toHaveLength(4);
    for (const [i, line] of lines.entries()) {
      expect(line.parsed.kind).toBe('record');
      if (line.parsed.kind === 'record') checkRecord(line.parsed.record, expected(fields, line.text, undefined), `line ${i + 1}`);
    }
    const events = lines.map((l) => (l.parsed.kind === 'record' ? l.parsed.record['x-event'] : undefined));
    expect(events).toEqual(['app-start', 'connect-pending', 'connect', 'create']);
  });

  it('wse-4.x-linux-utc-2021 (s3upload #23): the intact line read field by field; the 4 lines a paste shortened to 37 columns kept raw, saying why', async () => {
    const lines = await followExcerpt(readFileSync(join(EXCERPTS, 'wse-4.x-linux-utc-2021-access-excerpt_s3upload-issue23.log')), ACCESS_FIELDS);
    expect(lines).toHaveLength(5);
    let intact = 0;
    for (const [i, line] of lines.entries()) {
      expect(line.parsed.kind).toBe('record');
      if (line.parsed.kind !== 'record') continue;
      const count = line.text.split('\t').length;
      if (count === fields.length) {
        checkRecord(line.parsed.record, expected(fields, line.text, undefined), `line ${i + 1}`);
        intact++;
      } else {
        // One `-<TAB>-` became `--` in the paste: the columns cannot be placed, so none is guessed.
        expect(count).toBe(37);
        expect(line.parsed.record.raw).toBe(line.text);
        expect(line.parsed.record.parse_error).toBe('expected 38 tab-separated fields, got 37');
      }
    }
    expect(intact).toBe(1);
  });

  it('the blog line (Wowza 3.6 / 4.0) with its tabs printed as "\\t": one column as written; read field by field once they are tabs again', async () => {
    const bytes = readFileSync(join(EXCERPTS, 'wms3.6-or-wse4.0-2014-utc-access-line-escaped-tabs_stevenmeyer-blog.txt'));
    expect(bytes.includes(0x09)).toBe(false);
    const [asWritten] = await followExcerpt(bytes, ACCESS_FIELDS);
    expect(asWritten!.parsed.kind === 'record' && asWritten!.parsed.record.parse_error).toBe('expected 38 tab-separated fields, got 1');
    // Our edit, for this check only: the two characters `\t` back to the tab the blog stood them for.
    const tabbed = Buffer.from(bytes.toString('utf8').replaceAll('\\t', '\t'));
    const [line] = await followExcerpt(tabbed, ACCESS_FIELDS);
    expect(line!.parsed.kind).toBe('record');
    if (line!.parsed.kind === 'record') checkRecord(line!.parsed.record, expected(fields, line!.text, undefined), 'blog line');
  });
});

describe('the quoted error-log excerpt, parsed with the 4.7.1 error #Fields', () => {
  it('wse-4.7.5-windows-2018 (s3upload #15): both WARN lines, every field, read as UTC; the empty line of the paste is no record', async () => {
    const fields = columns(ERROR_FIELDS);
    expect(fields).toHaveLength(20);
    expect(fields.includes('tz')).toBe(false);
    const lines = await followExcerpt(readFileSync(join(EXCERPTS, 'wse-4.7.5-windows-2018-error-excerpt-severity-first_s3upload-issue15.log')), ERROR_FIELDS);
    const records = lines.filter((l) => l.text.trim() !== '');
    expect(records).toHaveLength(2);
    for (const line of lines) {
      if (line.text.trim() === '') {
        expect(line.parsed.kind).not.toBe('record');
        continue;
      }
      expect(line.parsed.kind).toBe('record');
      if (line.parsed.kind === 'record') checkRecord(line.parsed.record, expected(fields, line.text, 'UTC'), line.text.slice(0, 40));
    }
  });
});

describe('console output (not a W3C log)', () => {
  const files = [
    'wms-3.6.2-macos-console-start-part1_libstreaming-examples-issue1.txt',
    'wms-3.6.2-macos-console-start-part2_libstreaming-examples-issue1.txt',
    'wse-4.x-2016-console-ERROR-stacktrace-pipes_wse-example-pushpublish-hls-issue2.txt',
    'wms-2010-console-pingtimeout-unpublish-disconnect_wowza-community-34972.txt',
  ];
  for (const file of files) {
    it(`${file}: every line kept raw with the reason, none dropped; empty lines are no records`, async () => {
      const lines = await followExcerpt(readFileSync(join(CONSOLE, file)), undefined);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        if (line.text.trim() === '') {
          expect(line.parsed.kind).not.toBe('record');
          continue;
        }
        expect(line.parsed.kind).toBe('record');
        if (line.parsed.kind !== 'record') continue;
        expect(line.parsed.record.raw).toBe(line.text);
        expect(line.parsed.record.parse_error).toBe('no #Fields header known for this log');
      }
    });
  }
});
