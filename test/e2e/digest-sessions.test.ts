import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, type TestContext } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/** A simulator of the test's own, closed when the test (`t`, its context: the tests run side by side) ends. */
async function ownSimulator(t: TestContext, options: Parameters<typeof startSimulator>[0]): Promise<Simulator> {
  const sim = await startSimulator(options);
  t.onTestFinished(() => sim.close());
  return sim;
}

/** `serve` with these arguments, stopped when the test (`t`) ends. */
async function serve(t: TestContext, ...args: Parameters<typeof startExporterProcess>): Promise<RunningExporter> {
  const e = await startExporterProcess(...args);
  t.onTestFinished(() => e.stop().then(() => undefined));
  return e;
}

/**
 * Issue 31: one digest nonce shared by every request in flight. When the server retired it (after N uses or
 * seconds, as RFC 7616 allows), every request in flight got `401 stale` at once, each retry installed its own nonce
 * and the next burst retired it again: a third of all requests were 401s, and the race made a right password look
 * wrong ("Digest rejected", wowza_up 0). Each request now holds a digest session of its own while it runs. Each test
 * has its own server and exporter, and waits on their requests: the tests run side by side.
 */
describe.concurrent('digest sessions against a server that retires nonces', () => {
  const start = async (t: TestContext, opts: { nonceMaxUses: number; nonceTtlMs: number; strict: boolean }) => {
    const sim = await ownSimulator(t, { auth: 'digest', apps: 4, streams: 50, nonceMaxUses: opts.nonceMaxUses, nonceTtlMs: opts.nonceTtlMs, strictNonceCount: opts.strict });
    // Steady 1 s polls (no request budget), so the nonces are used fast enough to retire by use: what raced.
    const exporter = await serve(
      t,
      ['--wowza.url', sim.url, '--wowza.username', sim.username, '--wowza.auth', 'digest', '--poll.interval', '1s', '--poll.max-requests-per-second', '0'],
      { WOWZA_PASSWORD: sim.password },
    );
    return { sim, exporter };
  };

  it('4 apps x 50 streams, nonces of 50 uses or 30 s: 401s are at most 3 % of requests', async (t) => {
    const { sim: s, exporter: e } = await start(t, { nonceMaxUses: 50, nonceTtlMs: 30_000, strict: false });
    // Warm-up: every session has its first nonce.
    await waitFor('a few polls', async () => ((samples(await e.metrics(), 'wowza_exporter_collector_success', { collector: 'stream' })[0]?.value ?? 0) === 1 ? true : undefined), 60_000);
    await new Promise((r) => setTimeout(r, 3000));
    s.counters.reset();
    await waitFor('enough requests', () => (s.counters.total >= 3000 ? true : undefined), 60_000, 200);
    const challenged = s.counters.status(401);
    expect(challenged / s.counters.total, `${challenged} of ${s.counters.total} requests answered 401`).toBeLessThanOrEqual(0.03);
    const text = await e.metrics();
    expect(samples(text, 'wowza_exporter_auth_challenges_total', { reason: 'stale' })[0]?.value ?? 0).toBeGreaterThan(0);
    expect(samples(text, 'wowza_exporter_auth_challenges_total', { reason: 'rejected' })[0]?.value ?? 0).toBe(0);
  }, 90_000);

  it('nonces of 10 uses or 5 s, nc checked strictly, reloads and stream churn: the right password never looks wrong, wowza_up stays 1', async (t) => {
    // DIGEST_SOAK_SECONDS=120 runs it for the two minutes the issue asks; the suite runs it for 20 s.
    const seconds = Number(process.env.DIGEST_SOAK_SECONDS ?? 20);
    const sim = await ownSimulator(t, { auth: 'digest', apps: 4, streams: 20, nonceMaxUses: 10, nonceTtlMs: 5000, strictNonceCount: true });
    const dir = mkdtempSync(join(tmpdir(), 'wowza-digest-soak-'));
    t.onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'password'), sim.password, { mode: 0o600 });
    writeFileSync(join(dir, 'config.yaml'), stringify({ servers: [{ url: sim.url, username: sim.username, auth: 'digest', password_file: join(dir, 'password') }], poll: { interval: '1s' } }));
    const e = await serve(t, ['--config', join(dir, 'config.yaml')]);
    const s = sim;
    await waitFor('up', async () => ((samples(await e.metrics(), 'wowza_up')[0]?.value ?? 0) === 1 ? true : undefined), 60_000);
    const app = s.topology.list().vhosts[0]!.apps[0]!.name;
    let churned = 0;
    const churn = setInterval(() => {
      s.topology.addStream('_defaultVHost_', app, `churn${++churned}`);
      if (churned > 2) s.topology.removeStream('_defaultVHost_', app, `churn${churned - 2}`);
    }, 1000);
    const reload = setInterval(() => e.proc.kill('SIGHUP'), 5000);
    const downs: number[] = [];
    try {
      const end = Date.now() + seconds * 1000;
      while (Date.now() < end) {
        const up = samples(await e.metrics(), 'wowza_up')[0]?.value;
        if (up !== 1) downs.push(Date.now());
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      clearInterval(churn);
      clearInterval(reload);
    }
    expect(downs).toEqual([]);
    expect(e.output()).toMatch(/configuration reloaded/);
    expect(e.output()).not.toMatch(/authentication failed|Digest rejected/);
    expect(samples(await e.metrics(), 'wowza_exporter_auth_challenges_total', { reason: 'rejected' })[0]?.value ?? 0).toBe(0);
  }, 300_000);
});
