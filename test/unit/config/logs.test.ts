import { describe, expect, it } from 'vitest';
import { describeIssues } from '../../../src/config/errors.js';
import { LogsConfigSchema } from '../../../src/config/logs.js';

function problems(input: unknown): string[] {
  const r = LogsConfigSchema.safeParse(input);
  if (r.success) return [];
  return describeIssues(r.error);
}

describe('logs config schema', () => {
  it('fills sensible defaults', () => {
    const c = LogsConfigSchema.parse({});
    expect(c).toMatchObject({
      follow_interval: 2000,
      line_count: 1000,
      start_at: 'end',
      log_types: ['wowzastreamingengine_access', 'wowzastreamingengine_error'],
      time_zone: 'UTC',
      server_filter: { flags: [] },
      sinks: [{ type: 'stdout', name: 'stdout' }],
      batch: { max_lines: 1000, max_bytes: 1024 * 1024, max_wait: 1000 },
      retry: { min_backoff: 500, max_backoff: 30_000 },
      queue_lines: 10_000,
      max_queue_bytes: 64 * 1024 * 1024,
      positions_sync_interval: 1000,
      drain_timeout: 10_000,
    });
    expect(c.retry.max_retries).toBeUndefined();
  });

  it('reads durations, sizes, short log type names and every sink type', () => {
    const c = LogsConfigSchema.parse({
      follow_interval: '500ms',
      log_types: ['access', 'wowzastreamingengine_access', 'stats'],
      filters: { min_severity: 'WARN', field_regex: { 'x-sname': '^cam' } },
      server_filter: { flags: ['noDebug', 'noHeader'], regex_search: 'cam\\d' },
      batch: { max_bytes: '512KiB', max_wait: '2s' },
      max_queue_bytes: '16MiB',
      sinks: [
        { type: 'stdout' },
        { type: 'file', path: '/var/log/wowza.ndjson', max_bytes: '10MiB' },
        { type: 'loki', url: 'http://loki:3100', tenant_id: 'media', username: 'wowza', password_file: '/run/secrets/loki', labels: { env: 'prod' } },
        { type: 'http', name: 'siem', url: 'https://siem.example.com/ingest', headers: { 'X-Source': 'wowza' }, bearer_token_file: '/run/secrets/siem' },
      ],
    });
    expect(c.follow_interval).toBe(500);
    expect(c.log_types).toEqual(['wowzastreamingengine_access', 'wowzastreamingengine_stats']);
    expect(c.filters.min_severity).toBe('warn');
    expect(c.batch).toEqual({ max_lines: 1000, max_bytes: 512 * 1024, max_wait: 2000 });
    expect(c.max_queue_bytes).toBe(16 * 1024 * 1024);
    expect(LogsConfigSchema.parse({ max_queue_bytes: 1_000_000 }).max_queue_bytes).toBe(1_000_000);
    expect(c.sinks.map((s) => s.name)).toEqual(['stdout', 'file', 'loki', 'siem']);
    expect(c.sinks[1]).toMatchObject({ max_bytes: 10 * 1024 * 1024, max_files: 5 });
    expect(c.sinks[2]).toMatchObject({ timeout: 10_000 });
    expect(LogsConfigSchema.parse({ log_types: '*' }).log_types).toBe('*');
    // A list holding "*" means every type too, not a type literally named "*".
    expect(LogsConfigSchema.parse({ log_types: ['*'] }).log_types).toBe('*');
    expect(LogsConfigSchema.parse({ log_types: ['access', '*'] }).log_types).toBe('*');
  });

  it('rejects unknown keys and bad values, naming the field', () => {
    expect(problems({ follow_intervall: '2s' })).toEqual(['follow_intervall: unknown key']);
    expect(problems({ batch: { max_wait: 'soon' } })[0]).toMatch(/^batch\.max_wait: invalid duration "soon"/);
    expect(problems({ sinks: [{ type: 'loki', url: 'http://loki:3100', pasword_file: 'x' }] })).toEqual(['sinks[0].pasword_file: unknown key']);
    expect(problems({ sinks: [{ type: 'kafka' }] })[0]).toMatch(/^sinks\[0\]\.type: unknown sink type: use stdout, file, loki or http/);
    expect(problems({ sinks: [] })).toEqual(['sinks: configure at least one sink']);
    expect(problems({ time_zone: 'Mars/Olympus' })[0]).toMatch(/^time_zone: unknown time zone/);
    expect(problems({ filters: { min_severity: 'loud' } })[0]).toMatch(/^filters\.min_severity/);
    expect(problems({ filters: { field_regex: { 'x-sname': '(' } } })[0]).toMatch(/^filters\.field_regex\.x-sname: invalid regular expression/);
    expect(problems({ server_filter: { flags: ['noTrace'] } })[0]).toMatch(/^server_filter\.flags\[0\]/);
    expect(problems({ retry: { min_backoff: '1m', max_backoff: '1s' } })).toEqual(['retry.min_backoff: min_backoff must not exceed max_backoff']);
    expect(problems({ server_filter: { search: 'a', regex_search: 'b' } })).toEqual(['server_filter.regex_search: use search or regex_search, not both']);
    expect(problems({ log_types: [] })).toEqual(['log_types: list at least one log type, or use "*" for all']);
    expect(problems({ max_queue_bytes: 'plenty' })[0]).toMatch(/^max_queue_bytes: invalid size "plenty"/);
    expect(problems({ max_queue_bytes: 0 })[0]).toMatch(/^max_queue_bytes/);
  });

  it('checks sink credentials and names', () => {
    expect(problems({ sinks: [{ type: 'loki', url: 'http://admin:secret@loki:3100' }] })[0]).toMatch(/credentials do not belong in the URL/);
    expect(problems({ sinks: [{ type: 'loki', url: 'http://loki:3100' }] })).toEqual([]);
    expect(problems({ sinks: [{ type: 'loki', url: 'http://loki:3100', username: 'u' }] })).toEqual(['sinks[0].password_file: username needs password_file']);
    expect(problems({ sinks: [{ type: 'loki', url: 'http://loki:3100', username: 'u', password_file: 'p', bearer_token_file: 't' }] })).toEqual([
      'sinks[0].bearer_token_file: use basic auth (username/password_file) or bearer_token_file, not both',
    ]);
    expect(problems({ sinks: [{ type: 'loki', url: 'http://loki:3100', labels: { severity: 'x' } }] })).toEqual(['sinks[0].labels.severity: "severity" is set by the shipper and cannot be overridden']);
    expect(problems({ sinks: [{ type: 'http', url: 'http://a/', headers: { Authorization: 'Bearer x' }, bearer_token_file: 't' }] })).toEqual([
      'sinks[0].bearer_token_file: headers already set Authorization; drop one of them',
    ]);
    expect(problems({ sinks: [{ type: 'file', path: 'a' }, { type: 'file', path: 'b' }] })).toEqual([
      'sinks[1].name: sink name "file" is already used by sinks[0]: give each sink a unique name',
    ]);
  });
});
