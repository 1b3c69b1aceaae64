import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExporterProcess } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 41: a server (or a proxy) that echoes the request back in a 2xx body that is not JSON. Error bodies were
 * scrubbed of credentials; a 2xx body's excerpt reached the log and /api/v1/status as it came.
 */
const PASSWORD = 'Echo-pa55word';
const BASIC = Buffer.from(`admin:${PASSWORD}`).toString('base64');

describe('credentials a server echoes in a 2xx answer', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const auth = req.headers.authorization;
      if (!auth) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="Wowza"' }).end();
        return;
      }
      const decoded = Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString('utf8');
      // Not JSON, 200: the password first, so that any excerpt of the body holds it.
      res.writeHead(200, { 'content-type': 'application/json' }).end(`${decoded.split(':')[1]} ${auth} you sent ${decoded}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('never reach the log or /api/v1/status', async () => {
    const exporter = await startExporterProcess(['--wowza.url', url, '--wowza.username', 'admin', '--wowza.connectioncounts-url', 'off', '--poll.interval', '1s'], { WOWZA_PASSWORD: PASSWORD });
    try {
      const status = await waitFor('a collector failure with the body excerpt', async () => {
        const text = await (await fetch(`${exporter.url}/api/v1/status`)).text();
        return /invalid JSON/.test(text) ? text : undefined;
      }, 30_000);
      expect(status).toContain('[REDACTED]');
      for (const secret of [PASSWORD, BASIC, PASSWORD.slice(0, 6)]) {
        expect(status).not.toContain(secret);
        expect(exporter.output()).not.toContain(secret);
      }
    } finally {
      await exporter.stop();
    }
  }, 60_000);
});
