import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LogsConfigSchema } from '../../../src/config/logs.js';
import { ConfigSchema } from '../../../src/config/schema.js';
import { runDoctor } from '../../../src/doctor/checks.js';
import { formatResult } from '../../../src/doctor/report.js';
import { silentLogger } from '../../../src/base/logger.js';
import type { WowzaTarget } from '../../../src/wowza/client.js';
import { secretForms, secretLeaks } from '../../helpers/secret-forms.js';

/** Issue 47: 7 characters, one of them escaped by every encoder; the old scrub let `doctor` print the other 6. */
const PASSWORD = 'Pa5s!wd';
const USER = 'admin';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

/** A WSE REST port (or a proxy before it) that quotes the credentials it was sent, in every form, in its answers. */
async function echoingWowza(): Promise<string> {
  server = createServer((req, res) => {
    const auth = req.headers.authorization;
    if (!auth) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="Wowza"', 'content-type': 'application/json' }).end('{"success":false,"message":"unauthorized","code":"401"}');
      return;
    }
    const decoded = Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString('utf8');
    const password = decoded.slice(decoded.indexOf(':') + 1);
    const echo = `you sent ${Object.values(secretForms(password, USER)).join(' ')} (${auth})`;
    // Authenticated: monitoring answers a page that is not JSON (the auth check takes it), the rest fail.
    if (req.url!.includes('/monitoring/current')) res.writeHead(200, { 'content-type': 'application/json' }).end(`${password} ${echo}`);
    else res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, message: echo, code: '500', wowzaServer: '4.9.4' }));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('doctor against a server that echoes the credentials', () => {
  it('prints no form of the password, as text or as JSON', async () => {
    const url = await echoingWowza();
    const target: WowzaTarget = { name: 'wse', url, username: USER, password: PASSWORD, auth: 'basic', timeoutMs: 2000, maxResponseBytes: 1 << 20, serverName: '_defaultServer_', connections: 2 };
    const printed: string[] = [];
    const config = ConfigSchema.parse({ logs: LogsConfigSchema.parse({}) });
    const results = await runDoctor({ target, config, collectors: [], intervalMs: 10_000, logger: silentLogger(), emit: (r) => printed.push(formatResult(r)) });
    expect(results.map((r) => [r.check, r.status])).toEqual([
      ['dns', 'pass'],
      ['tcp', 'pass'],
      ['http', 'pass'],
      ['auth', 'pass'],
      ['content-type', 'fail'],
    ]);
    expect(results.at(-1)!.message).toMatch(/you sent \[REDACTED\]/);
    const text = printed.join('\n');
    const json = JSON.stringify(results);
    const messages = results.map((r) => `${r.message} ${r.fix ?? ''}`).join('\n');
    expect([...secretLeaks('text', text, PASSWORD, USER), ...secretLeaks('JSON', json, PASSWORD, USER), ...secretLeaks('messages', messages, PASSWORD, USER)]).toEqual([]);
  });
});
