import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { tailLog } from '../../../src/logs/tail.js';
import { ACCESS_LOG_FIELDS, MemoryLogSource, w3cLine } from '../../helpers/memory-log-source.js';

const ACCESS = 'wowzastreamingengine_access';

/** A pulled source and a player with credentials in their URLs, as real access logs hold them. */
function source(): MemoryLogSource {
  const src = new MemoryLogSource('edge-1').addLog(ACCESS, ACCESS_LOG_FIELDS);
  src.append(ACCESS, [
    w3cLine(ACCESS_LOG_FIELDS, { date: '2024-01-15', time: '10:00:00', tz: 'UTC', 'x-event': 'connect', 'x-severity': 'INFO', 'x-suri': 'rtmp://camuser:campa55word@203.0.113.7:1935/live/cam1', 'cs-uri-stem': 'rtsp://viewer:s3cret@10.0.0.1/cam' }),
    w3cLine(ACCESS_LOG_FIELDS, { date: '2024-01-15', time: '10:00:01', tz: 'UTC', 'x-event': 'play', 'x-severity': 'INFO', 'x-suri-query': 'token=playTok3n&x=1', 'x-comment': 'pulled rtmp://camuser:campa55word@203.0.113.7/live' }),
  ]);
  return src;
}

async function tail(redactSecrets?: boolean): Promise<string> {
  const chunks: string[] = [];
  const out = new Writable({ write: (c: Buffer, _e, cb) => cb(void chunks.push(c.toString('utf8'))) });
  await tailLog({ source: source(), logType: ACCESS, startAt: 'beginning', format: 'json', out, ...(redactSecrets === undefined ? {} : { redactSecrets }) });
  return chunks.join('');
}

describe('logs tail --format json', () => {
  it('blanks credentials in URLs and token-like query values in the records, as the sinks do (issue 47)', async () => {
    const text = await tail();
    const records = text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records).toHaveLength(2);
    expect(records[0]!['x-suri']).toBe('rtmp://203.0.113.7:1935/live/cam1');
    expect(records[0]!['cs-uri-stem']).toBe('rtsp://10.0.0.1/cam');
    expect(records[1]!['x-suri-query']).toBe('token=REDACTED&x=1');
    expect(records[1]!['x-comment']).toBe('pulled rtmp://203.0.113.7/live');
    for (const secret of ['camuser', 'campa55word', 'viewer', 's3cret', 'playTok3n']) expect(text).not.toContain(secret);
  });

  it('keeps them with logs.redact_secrets off', async () => {
    expect(await tail(false)).toContain('rtmp://camuser:campa55word@203.0.113.7:1935/live/cam1');
  });
});
