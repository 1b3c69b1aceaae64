import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { signHs256 } from '../../src/webhooks/jwt.js';
import { runCli, samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';

/**
 * Issue 29: the webhook receiver took too much on trust. Without a secret it took anyone's events; every stream
 * event re-polled the server (10 s of events cost it 3,011 requests against 157 quiet); made-up names minted series.
 */
describe('hostile webhook callers', () => {
  let dir: string;
  let sim: Simulator;
  let exporter: RunningExporter;
  const SECRET = 'hostile-webhook-secret';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-hostile-hooks-'));
    writeFileSync(join(dir, 'secret'), SECRET, { mode: 0o600 });
    sim = await startSimulator({ auth: 'basic', apps: 2, streams: 3 });
    writeFileSync(join(dir, 'password'), sim.password, { mode: 0o600 });
    writeFileSync(
      join(dir, 'config.yaml'),
      stringify({
        servers: [{ name: 'wse', url: sim.url, username: sim.username, auth: 'basic', password_file: join(dir, 'password') }],
        webhooks: { enabled: true, secret_file: join(dir, 'secret') },
      }),
    );
    exporter = await startExporterProcess(['--config', join(dir, 'config.yaml')]);
  });
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to start a receiver without a secret, unless told to take anyone', async () => {
    const config = join(dir, 'no-secret.yaml');
    writeFileSync(config, stringify({ servers: [], webhooks: { enabled: true } }));
    const res = await runCli(['serve', '--config', config, '--web.listen-address', '127.0.0.1:0']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/webhooks\.secret_file: the webhook receiver needs a secret/);
  });

  it('10 s of stream events at 40 a second cost the server at most 300 requests more than 10 quiet seconds', async () => {
    const stream = sim.topology.streams()[0]!;
    const window = async (events: boolean) => {
      const before = sim.counters.total;
      const end = Date.now() + 10_000;
      let n = 0;
      while (Date.now() < end) {
        if (events) {
          const now = Math.floor(Date.now() / 1000);
          const id = `ev-${n++}-${Date.now()}`;
          const body = JSON.stringify({ id, timestamp: Date.now(), name: 'stream.started', source: 'wse', context: { vhost: stream.vhost, app: stream.app, appInstance: stream.instance, stream: stream.stream } });
          void fetch(`${exporter.url}/webhooks/wowza`, {
            method: 'POST',
            body,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${signHs256({ iat: now, exp: now + 60, jti: id }, SECRET)}` },
          }).then((r) => r.body?.cancel());
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      return sim.counters.total - before;
    };
    const quiet = await window(false);
    const busy = await window(true);
    const accepted = samples(await exporter.metrics(), 'wowza_webhook_events_total', { event: 'stream.started' })[0]?.value ?? 0;
    expect(accepted).toBeGreaterThan(200);
    expect(busy - quiet, `quiet ${quiet} requests, with events ${busy}`).toBeLessThanOrEqual(300);
  }, 40_000);
});
