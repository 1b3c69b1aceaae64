import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 41: every origin negotiates its own authentication. A default install has the REST API on Basic (since
 * 4.8.5) and the admin port's connectioncounts provider (`:8086`) on admin-digest. The exporter looks for that
 * provider at `<REST host>:8086` by itself; it used to share one negotiated scheme between the two ports, so whichever
 * 401 came first decided both (wowza_up 0 in 5 of 5 runs), and it sent the admin password in clear to whatever
 * answered on :8086 with a Basic challenge.
 *
 * Each case's server gets a loopback address of its own (127.0.41.x), so its :8086 is this suite's alone: other
 * suites' exporters look at 127.0.0.1:8086.
 */
const STARTS = 10;
/** Exporters started at once: the race was between one process's first two 401s, not between processes. */
const AT_ONCE = 5;

async function bindable(host: string, port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

/** Runs `STARTS` exporters, `AT_ONCE` at a time, each checked by `check` and stopped. */
async function eachStart(args: string[], env: NodeJS.ProcessEnv, check: (e: RunningExporter, i: number) => Promise<void>): Promise<void> {
  for (let round = 0; round < STARTS / AT_ONCE; round++) {
    await Promise.all(
      Array.from({ length: AT_ONCE }, async (_, k) => {
        const exporter = await startExporterProcess(args, env);
        try {
          await check(exporter, round * AT_ONCE + k);
        } finally {
          await exporter.stop();
        }
      }),
    );
  }
}

const up = (text: string) => samples(text, 'wowza_up')[0]?.value;
const success = (text: string, collector: string) => samples(text, 'wowza_exporter_collector_success', { collector })[0]?.value;

const DEFAULT_LAYOUT_HOST = '127.0.41.1';
const BASIC_8086_HOST = '127.0.41.2';
const QUIET_HOST = '127.0.41.3';
const free = (await Promise.all([DEFAULT_LAYOUT_HOST, BASIC_8086_HOST, QUIET_HOST].map((h) => bindable(h, 8086)))).every(Boolean);
if (!free) console.warn('SKIPPED: port 8086 on 127.0.41.x is taken (something listens on every address), so the default provider address cannot be stood in for');

describe.skipIf(!free)('a default install: REST on Basic, :8086 on Digest, the exporter at its defaults', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ host: DEFAULT_LAYOUT_HOST, auth: 'basic', adminAuth: 'digest', adminPort: 8086, apps: 2, streams: 3, password: 'default-layout-pw' });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it(`wowza_up 1 and viewers from connectioncounts in ${STARTS} of ${STARTS} starts`, async () => {
    await eachStart(['--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '1s'], { WOWZA_PASSWORD: sim.password }, async (exporter, i) => {
      const text = await waitFor(`start ${i + 1}: the connectioncounts collector's first success`, async () => {
        const t = await exporter.metrics();
        return success(t, 'connectioncounts') === 1 && up(t) !== undefined ? t : undefined;
      }, 30_000);
      expect(up(text), `start ${i + 1}\n${exporter.output().slice(-3000)}`).toBe(1);
      expect(samples(text, 'wowza_stream_connections').length, `start ${i + 1}`).toBeGreaterThan(0);
      expect(exporter.output()).not.toMatch(/wrong username or password/);
    });
  }, 240_000);
});

describe.skipIf(!free)('REST on Digest, and a :8086 that challenges with Basic', () => {
  let sim: Simulator;
  let impostor: Server;
  const seen: Array<string | undefined> = [];
  beforeAll(async () => {
    sim = await startSimulator({ host: BASIC_8086_HOST, auth: 'digest', apps: 1, streams: 2, password: 'basic-8086-pw' });
    impostor = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(401, { 'www-authenticate': 'Basic realm="Wowza"' }).end();
    });
    await new Promise<void>((r) => impostor.listen(8086, BASIC_8086_HOST, r));
  });
  afterAll(async () => {
    await new Promise((r) => impostor?.close(r));
    await sim?.close();
  });

  it(`no Basic header ever reaches :8086, and REST is unaffected, in ${STARTS} of ${STARTS} starts`, async () => {
    await eachStart(['--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '1s'], { WOWZA_PASSWORD: sim.password }, async (exporter, i) => {
      const text = await waitFor(`start ${i + 1}: every REST collector polled`, async () => {
        const t = await exporter.metrics();
        return ['machine', 'status', 'stream'].every((c) => success(t, c) === 1) ? t : undefined;
      }, 30_000);
      expect(up(text), `start ${i + 1}`).toBe(1);
      expect(samples(text, 'wowza_stream_connections').length, `start ${i + 1}`).toBeGreaterThan(0);
    });
    expect(seen.length).toBeGreaterThanOrEqual(STARTS); // each start looked, without credentials
    expect(seen.filter((a) => a !== undefined)).toEqual([]);
  }, 240_000);
});

describe.skipIf(!free)('nothing reaches :8086 when connectioncounts is turned off', () => {
  let sim: Simulator;
  let provider: Server;
  let asked = 0;
  beforeAll(async () => {
    sim = await startSimulator({ host: QUIET_HOST, auth: 'basic', apps: 1, streams: 2 });
    provider = createServer((_req, res) => {
      asked++;
      res.writeHead(401, { 'www-authenticate': 'Digest realm="Wowza", nonce="bm9uY2U=", qop="auth"' }).end();
    });
    await new Promise<void>((r) => provider.listen(8086, QUIET_HOST, r));
  });
  afterAll(async () => {
    await new Promise((r) => provider?.close(r));
    await sim?.close();
  });

  for (const [name, flags] of [
    ['connectioncounts_url: off', ['--wowza.connectioncounts-url', 'off']],
    ['--no-collector.connectioncounts', ['--no-collector.connectioncounts']],
  ] as const) {
    it(name, async () => {
      const exporter = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '1s', ...flags], { WOWZA_PASSWORD: sim.password });
      try {
        // Two polls of the stream collector: the start (when the provider would be looked for) and one after it.
        const polledAt = async () => samples(await exporter.metrics(), 'wowza_exporter_last_poll_timestamp_seconds', { collector: 'stream' })[0]?.value;
        const first = await waitFor('a first stream poll', polledAt, 30_000);
        await waitFor('a second stream poll', async () => ((await polledAt())! > first ? true : undefined), 30_000);
        const text = await exporter.metrics();
        expect(up(text)).toBe(1);
        expect(success(text, 'connectioncounts')).toBeUndefined();
      } finally {
        await exporter.stop();
      }
      expect(asked).toBe(0);
    }, 60_000);
  }
});
