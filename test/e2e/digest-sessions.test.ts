import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 31: one digest nonce shared by every request in flight. When the server retired it (after N uses or
 * seconds, as RFC 7616 allows), every request in flight got `401 stale` at once, each retry installed its own nonce
 * and the next burst retired it again: a third of all requests were 401s, and the race made a right password look
 * wrong ("Digest rejected", wowza_up 0). Each request now holds a digest session of its own while it runs.
 */
describe('digest sessions against a server that retires nonces', () => {
  let sim: Simulator | undefined;
  let exporter: RunningExporter | undefined;
  afterEach(async () => {
    await exporter?.stop();
    await sim?.close();
    exporter = sim = undefined;
  });

  const start = async (opts: { nonceMaxUses: number; nonceTtlMs: number; strict: boolean }) => {
    sim = await startSimulator({ auth: 'digest', apps: 4, streams: 50, nonceMaxUses: opts.nonceMaxUses, nonceTtlMs: opts.nonceTtlMs, strictNonceCount: opts.strict });
    exporter = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username, '--wowza.auth', 'digest', '--poll.interval', '1s'], { WOWZA_PASSWORD: sim.password });
    return { sim, exporter };
  };

  it('4 apps x 50 streams, nonces of 50 uses or 30 s: 401s are at most 3 % of requests', async () => {
    const { sim: s, exporter: e } = await start({ nonceMaxUses: 50, nonceTtlMs: 30_000, strict: false });
    // Warm-up: every session has its first nonce.
    await waitFor('a few polls', async () => ((samples(await e.metrics(), 'wowza_exporter_collector_success', { collector: 'stream' })[0]?.value ?? 0) === 1 ? true : undefined), 20_000);
    await new Promise((r) => setTimeout(r, 3000));
    s.counters.reset();
    await waitFor('enough requests', () => (s.counters.total >= 3000 ? true : undefined), 60_000, 200);
    const challenged = s.counters.status(401);
    expect(challenged / s.counters.total, `${challenged} of ${s.counters.total} requests answered 401`).toBeLessThanOrEqual(0.03);
    const text = await e.metrics();
    expect(samples(text, 'wowza_exporter_auth_challenges_total', { reason: 'stale' })[0]?.value ?? 0).toBeGreaterThan(0);
    expect(samples(text, 'wowza_exporter_auth_challenges_total', { reason: 'rejected' })[0]?.value ?? 0).toBe(0);
  }, 90_000);

  it('nonces of 10 uses or 5 s, nc checked strictly: the right password never looks wrong, wowza_up stays 1', async () => {
    const { exporter: e } = await start({ nonceMaxUses: 10, nonceTtlMs: 5000, strict: true });
    await waitFor('up', async () => ((samples(await e.metrics(), 'wowza_up')[0]?.value ?? 0) === 1 ? true : undefined), 20_000);
    const end = Date.now() + 15_000;
    const downs: number[] = [];
    while (Date.now() < end) {
      const up = samples(await e.metrics(), 'wowza_up')[0]?.value;
      if (up !== 1) downs.push(Date.now());
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(downs).toEqual([]);
    expect(e.output()).not.toMatch(/authentication failed|Digest rejected/);
  }, 60_000);
});
