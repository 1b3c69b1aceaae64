import { describe, expect, it } from 'vitest';
import { compileRecordFilter } from '../../../../src/logs/transform/record-filter.js';
import { categoryLabel, eventLabel, parseServerFilterFlags, resolveLogType, severityLabel } from '../../../../src/wowza/log-vocabulary.js';
import type { LogRecord } from '../../../../src/logs/transform/w3c-parser.js';

const rec = (over: LogRecord = {}): LogRecord => ({
  timestamp: '2024-01-15T10:23:45.000Z', 'x-severity': 'INFO', 'x-category': 'stream', 'x-event': 'play', 'x-app': 'live', 'x-sname': 'cam1', 'c-ip': '198.51.100.7', ...over,
});
const broken: LogRecord = { timestamp: null, raw: 'garbage', parse_error: 'expected 38 tab-separated fields, got 1' };

describe('client-side record filters', () => {
  it('>= WARN drops DEBUG and INFO, keeps WARN, ERROR and lines without a severity', () => {
    const keep = compileRecordFilter({ min_severity: 'warn' });
    expect(keep(rec({ 'x-severity': 'DEBUG' }))).toBe(false);
    expect(keep(rec({ 'x-severity': 'INFO' }))).toBe(false);
    expect(keep(rec({ 'x-severity': 'WARN' }))).toBe(true);
    expect(keep(rec({ 'x-severity': 'ERROR' }))).toBe(true);
    expect(keep(broken)).toBe(true);
  });

  it('includes and excludes by category, event and application', () => {
    const keep = compileRecordFilter({
      categories: { include: ['stream', 'SESSION'] },
      events: { exclude: ['seek'] },
      applications: { exclude: ['test'] },
    });
    expect(keep(rec())).toBe(true);
    expect(keep(rec({ 'x-category': 'session' }))).toBe(true);
    expect(keep(rec({ 'x-category': 'server' }))).toBe(false);
    expect(keep(rec({ 'x-event': 'seek' }))).toBe(false);
    expect(keep(rec({ 'x-app': 'test' }))).toBe(false);
    expect(keep(rec({ 'x-app': 'Test' }))).toBe(true); // application names are case-sensitive
    expect(keep(rec({ 'x-category': null }))).toBe(false); // an include list needs the value
  });

  it('matches regular expressions on any field', () => {
    const keep = compileRecordFilter({ field_regex: { 'x-sname': '^cam\\d+$' }, exclude_field_regex: { 'c-ip': '^10\\.' } });
    expect(keep(rec())).toBe(true);
    expect(keep(rec({ 'x-sname': 'studio' }))).toBe(false);
    expect(keep(rec({ 'c-ip': '10.0.0.5' }))).toBe(false);
    expect(keep(rec({ 'c-ip': null }))).toBe(true);
    expect(keep(rec({ 'x-sname': null }))).toBe(false);
    expect(compileRecordFilter({ field_regex: { 'sc-bytes': '^4\\d{3}$' } })(rec({ 'sc-bytes': 4096 }))).toBe(true);
  });

  it('passes everything without settings and names the field of a bad regex', () => {
    expect(compileRecordFilter()(broken)).toBe(true);
    expect(() => compileRecordFilter({ field_regex: { 'x-sname': '(' } })).toThrow(/filters\.field_regex\.x-sname: invalid regular expression/);
  });
});

describe('bounded label values', () => {
  it('maps values onto the known sets, others to other, missing to none', () => {
    expect(severityLabel('WARN')).toBe('warn');
    expect(severityLabel('TRACE')).toBe('other');
    expect(severityLabel(null)).toBe('none');
    expect(categoryLabel('stream')).toBe('stream');
    expect(categoryLabel('x'.repeat(500))).toBe('other');
    expect(eventLabel('connect-pending')).toBe('connect-pending');
    expect(eventLabel('user-defined-event-4711')).toBe('other');
    expect(eventLabel(undefined)).toBe('none');
  });

  it('parses --filter flags and log type short names', () => {
    expect(parseServerFilterFlags('noDebug, noinfo|noHeader')).toEqual(['noDebug', 'noInfo', 'noHeader']);
    expect(() => parseServerFilterFlags('noDebug,noTrace')).toThrow('unknown log filter "noTrace": use noDebug, noInfo, noWarn, noError, noHeader, noColumnHeadings');
    expect(resolveLogType('access')).toBe('wowzastreamingengine_access');
    expect(resolveLogType('vhost_custom')).toBe('vhost_custom');
  });
});
