import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { WowzaClient, type WowzaTarget } from '../../src/wowza/client.js';
import { WowzaAuthError } from '../../src/wowza/errors.js';
import { runCli } from '../helpers/exporter-process.js';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

function target(s: Simulator, over: Partial<WowzaTarget> = {}): WowzaTarget {
  return {
    name: 'sim',
    url: s.url,
    username: s.username,
    password: s.password,
    auth: 'digest',
    timeoutMs: 2000,
    maxResponseBytes: 32 * 1024 * 1024,
    serverName: '_defaultServer_',
    connections: 8,
    ...over,
  };
}

describe('REST client against the simulator', () => {
  for (const algorithm of ['MD5', 'SHA-256'] as const) {
    it(`digest ${algorithm}: 200 sequential calls reuse each nonce: one 401 to start and one per nonce the server retires, not one per call`, async () => {
      sim = await startSimulator({ auth: 'digest', digestAlgorithms: [algorithm], nonceTtlMs: 150, strictNonceCount: true });
      const client = new WowzaClient(target(sim));
      const started = Date.now();
      for (let i = 0; i < 200; i++) {
        await client.machineCurrent();
        // Spread the calls so the 150 ms nonce expires at least once along the way.
        if (i === 100) await new Promise((r) => setTimeout(r, 200));
      }
      await client.close();
      const elapsed = Date.now() - started;
      // Every 401 is the first challenge or a retired nonce, each retried once; the nonce lives 150 ms, so how many
      // retire depends on how fast the machine made the calls (about 10 on a quiet one, more on a busy one), never on
      // how many calls there were.
      expect(sim.counters.status(200)).toBe(200);
      expect(sim.counters.total).toBe(200 + sim.counters.status(401));
      expect(sim.counters.staleChallenges).toBeGreaterThanOrEqual(1);
      expect(sim.counters.status(401)).toBeLessThanOrEqual(1 + Math.ceil(elapsed / 150) + 1);
      expect(sim.counters.status(401)).toBeLessThan(100);
    });
  }

  it('auto mode picks digest when that is what the server asks for, and survives concurrent requests', async () => {
    sim = await startSimulator({ auth: 'digest', digestAlgorithms: ['SHA-256', 'MD5'], strictNonceCount: true });
    const client = new WowzaClient(target(sim, { auth: 'auto' }));
    const results = await Promise.all(Array.from({ length: 40 }, () => client.vhosts()));
    expect(results.every((r) => r.vhosts.length === 1)).toBe(true);
    expect(client.auth.activeScheme).toBe('digest');
    await client.close();
  });

  it('a wrong password is one clear message naming the user and URL, without the password', async () => {
    sim = await startSimulator({ auth: 'digest' });
    const client = new WowzaClient(target(sim, { password: 'not-the-pa55word' }));
    const err = await client.serverStatus().catch((e: unknown) => e);
    await client.close();
    expect(err).toBeInstanceOf(WowzaAuthError);
    expect((err as Error).message).toBe(`authentication failed for user "admin" at ${sim.url}/v2/servers/_defaultServer_/status: wrong username or password (Digest rejected)`);
    expect(JSON.stringify(err) + String(err)).not.toContain('not-the-pa55word');
  });

  it('reads every monitoring endpoint into the typed shapes, with appType null and 404 for an unknown app', async () => {
    sim = await startSimulator({ auth: 'basic', frozen: true });
    const c = new WowzaClient(target(sim, { auth: 'basic' }));
    const apps = await c.applications('_defaultVHost_');
    expect(apps.applications.some((a) => a.appType === null)).toBe(true);
    const instances = await c.instances('_defaultVHost_', 'cameras');
    expect(instances.instanceList[0]!.incomingStreams.some((s) => s.sourceIp?.includes('@'))).toBe(true);
    await expect(c.applicationCurrent('_defaultVHost_', 'nope')).rejects.toThrow(/HTTP 404: Application \(nope\) not found/);
    // 200 with zeros for a stream that does not exist: the instance list is the truth, not this.
    const ghost = await c.streamCurrent('_defaultVHost_', 'live', '_definst_', 'ghost');
    expect(ghost.bytesIn).toBe(0);
    const status = await c.serverStatus();
    expect(status.javaMaxHeapSize).toMatch(/MB$/);
    await c.close();
  });
});

describe('CLI usage errors', () => {
  it('a config typo exits 2 naming the key', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'wowza-cli-'));
    writeFileSync(join(dir, 'c.yaml'), 'servers:\n  - urll: http://127.0.0.1:8087\n');
    const r = await runCli(['serve', '--config', join(dir, 'c.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('servers[0].urll: unknown key (did you mean "url"?)');
  });

  it('an unknown flag exits 2 naming it', async () => {
    const r = await runCli(['serve', '--wowza.urll', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/wowza\.urll/);
  });

  it('there is no password flag', async () => {
    const r = await runCli(['serve', '--wowza.password', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain(' x\n');
  });
});
