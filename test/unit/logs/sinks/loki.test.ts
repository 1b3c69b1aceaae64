import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LogsConfigSchema } from '../../../../src/config/logs.js';
import { createLogger } from '../../../../src/base/logger.js';
import { startLogShipping } from '../../../../src/logs/pipeline.js';
import { ACCESS_LOG_FIELDS, MemoryLogSource, w3cLine } from '../../../helpers/memory-log-source.js';
import { waitFor } from '../../../helpers/ports.js';
import { secretForms, secretLeaks } from '../../../helpers/secret-forms.js';

const ACCESS = 'wowzastreamingengine_access';
const USER = 'shipper';
/** Characters every encoder escapes differently: `!` (URL), `"` and `\` (JSON), `é` (two UTF-8 bytes). */
const PASSWORD = 'L0ki!pw"\\é7';

let dir: string;
let server: Server | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'loki-echo-'));
});
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Issue 47: a Loki (or a proxy before it) that decodes the Basic header and quotes the credentials in its error
 * answers, in every form: the first push is refused for a while (503, retried), the second for good (400,
 * dead-lettered), each time with the password as itself, URL-encoded, JSON-escaped and in base64.
 */
async function echoingLoki(): Promise<{ url: string; pushes: () => number }> {
  let n = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      n++;
      const basic = String(req.headers.authorization ?? '').replace(/^Basic /, '');
      const decoded = Buffer.from(basic, 'base64').toString('utf8');
      const password = decoded.slice(decoded.indexOf(':') + 1);
      const said = [
        `invalid credentials ${decoded}`,
        ...Object.values(secretForms(password, USER)),
        `body ${Buffer.from(JSON.stringify({ user: USER, password })).toString('base64')}`,
        `authorization=${encodeURIComponent(req.headers.authorization ?? '')}`,
      ].join('\n');
      if (n === 1) res.writeHead(503, { 'content-type': 'text/plain' }).end(said);
      else res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: said }));
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, pushes: () => n };
}

describe('a Loki receiver that echoes the credentials it was sent', () => {
  it('puts the Loki password in no form into the log or the dead-letter file', async () => {
    const loki = await echoingLoki();
    writeFileSync(join(dir, 'loki-password'), `${PASSWORD}\n`, { mode: 0o600 });
    const src = new MemoryLogSource('edge-1').addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(
      ACCESS,
      Array.from({ length: 3 }, (_, i) => w3cLine(ACCESS_LOG_FIELDS, { date: '2024-01-15', time: `10:00:0${i}`, tz: 'UTC', 'x-event': 'play', 'x-severity': 'INFO', 'x-comment': `line ${i}` })),
    );
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', destination: new Writable({ write: (c: Buffer, _e, cb) => cb(void lines.push(c.toString('utf8'))) }) });
    const config = LogsConfigSchema.parse({
      positions_file: join(dir, 'positions.json'),
      dead_letter_file: join(dir, 'dead-letter.ndjson'),
      start_at: 'beginning',
      log_types: [ACCESS],
      follow_interval: '10ms',
      batch: { max_wait: '10ms' },
      retry: { min_backoff: '10ms', max_backoff: '20ms', max_retries: 1 },
      drain_timeout: '1s',
      sinks: [{ type: 'loki', url: loki.url, username: USER, password_file: join(dir, 'loki-password') }],
    });
    const shipping = await startLogShipping({ sources: [src], config, registry: new Registry(), logger });
    try {
      await waitFor('a retry and a dead-lettered batch', () => (lines.join('').includes('moved to the dead-letter file') ? true : undefined));
    } finally {
      await shipping.stop();
    }
    expect(loki.pushes()).toBe(2);
    const log = lines.join('');
    expect(log).toMatch(/"error":"[^"]* answered HTTP 503: invalid credentials shipper:\[REDACTED\] [^"]*","lines":3,"attempt":1,.*"msg":"sending logs failed; retrying"/);
    const dead = readFileSync(join(dir, 'dead-letter.ndjson'), 'utf8');
    const reasons = dead.trim().split('\n').map((l) => (JSON.parse(l) as { reason: string }).reason);
    expect(reasons).toHaveLength(3);
    expect(reasons[0]).toMatch(/answered HTTP 400: \{"message":"invalid credentials shipper:\[REDACTED\]/);
    // JSON output is searched as written and as read back (a JSON-escaped form written into JSON is escaped twice).
    const messages = lines.map((l) => JSON.parse(l) as { error?: string; reason?: string }).map((l) => `${l.error ?? ''} ${l.reason ?? ''}`);
    const leaks = [
      ...secretLeaks('log', log, PASSWORD, USER),
      ...secretLeaks('log messages', messages.join('\n'), PASSWORD, USER),
      ...secretLeaks('dead letters', dead, PASSWORD, USER),
      ...secretLeaks('dead-letter reasons', reasons.join('\n'), PASSWORD, USER),
    ];
    expect(leaks).toEqual([]);
  });
});
