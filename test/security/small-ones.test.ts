import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import bcrypt from 'bcryptjs';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { BasicAuthVerifier } from '../../src/http/basic-auth.js';
import { WowzaClient } from '../../src/wowza/client.js';
import { startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';

/** Issue 29's small ones: nosniff everywhere, no `..` in a request path, a bounded queue of password checks. */
describe('small hardening', () => {
  let sim: Simulator;
  let exporter: RunningExporter;
  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic' });
    exporter = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username, '--wowza.auth', 'basic'], { WOWZA_PASSWORD: sim.password });
  });
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
  });

  it.each(['/metrics', '/api/v1/status', '/', '/no-such-page', '/-/healthy', '/probe'])('X-Content-Type-Options: nosniff on %s', async (path) => {
    const res = await fetch(`${exporter.url}${path}`);
    await res.arrayBuffer();
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('a log type or file named "." or ".." (from the config or the server\'s own list) never becomes a request path', async () => {
    let requests = 0;
    const server: Server = createServer((_req, res) => {
      requests++;
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new WowzaClient({
      name: 't',
      url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
      username: 'admin',
      password: 'x',
      auth: 'basic',
      timeoutMs: 1000,
      maxResponseBytes: 1024,
      serverName: '_defaultServer_',
      connections: 1,
    });
    try {
      for (const name of ['..', '.', '%2e%2e'.replace(/%2e/g, '.')]) {
        await expect(client.logPage(name, { startOffset: 0 })).rejects.toThrow(/refusing ".{1,2}" as the logType/);
        await expect(client.logFile(name, { startOffset: 0 })).rejects.toThrow(/refusing ".{1,2}" as the logName/);
      }
      expect(requests).toBe(0);
    } finally {
      await client.close();
      await new Promise((r) => server.close(r));
    }
  });

  it('a flood of wrong passwords is turned away once checks queue up, instead of queueing without bound', async () => {
    const verifier = new BasicAuthVerifier(new Map([['admin', bcrypt.hashSync('right', 4)]]));
    const verdicts = await Promise.all(Array.from({ length: 200 }, (_, i) => verifier.verify('admin', `wrong-${i}`)));
    expect(verdicts.filter((v) => v === 'busy').length).toBeGreaterThan(0);
    expect(verdicts.filter((v) => v === false).length).toBeLessThanOrEqual(BasicAuthVerifier.MAX_WAITING + 1);
    expect(verdicts).not.toContain(true);
    // The right password still gets through once the flood has passed.
    expect(await verifier.verify('admin', 'right')).toBe(true);
  });
});
