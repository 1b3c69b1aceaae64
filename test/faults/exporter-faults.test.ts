import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type FaultInput, type Simulator } from '@wowza-exporter/simulator';
import { EP } from '../../src/wowza/endpoints.js';
import { startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import {
  collectorSeries,
  collectorSuccess,
  describeHealth,
  pollFailures,
  unclaimedSeries,
  valueOf,
  WSE_COLLECTOR_NAMES as ALL,
  type WseCollector,
} from '../helpers/faults-observe.js';
import { startScrapeTimer, type ScrapeTimer } from '../helpers/faults-scrape-timer.js';
import { missingOpenssl, selfSignedCert, type SelfSignedCert } from '../helpers/faults-tls.js';
import { waitFor } from '../helpers/ports.js';

/**
 * One exporter process polling three servers every second (request deadline 500 ms): `main`, a simulator
 * that gets one injected fault after another; `tls`, a simulator over HTTPS whose certificate is swapped
 * for one the exporter does not trust; `unresolvable`, a host name that never resolves. For every fault:
 * /metrics keeps answering fast, the hit collectors report failure with a reason in their log line, their
 * series are gone (no stale values), the rest keeps working, and all comes back once the fault clears.
 */

const MAIN = 'main';
const TLS = 'tls';
const DNS = 'unresolvable';
const PASSWORD = `fault-suite-${randomBytes(8).toString('hex')}`;
const ROTATED = `rotated-${randomBytes(8).toString('hex')}`;
const LIMIT_BYTES = 1024 * 1024;
/** Scrapes per batch, 200 ms apart: the batch spans more than one poll interval. */
const SCRAPES = 8;
/** All but `SCRAPES_OVER_BUDGET` scrapes of a batch answer within this. */
const SCRAPE_BUDGET_MS = 100;
const SCRAPES_OVER_BUDGET = 2;
/** No scrape may take this long: the API request deadline, so a scrape that waited on Wowza shows. */
const SCRAPE_CEILING_MS = 500;
const DISCOVERY_BASED: WseCollector[] = ['vhost', 'application', 'instance', 'stream', 'recorder', 'stream_target'];
/** Every kind of failure, each for one poll on every route: the warm-up and the memory case run it. */
const FAILURE_ROUND: FaultInput[] = ['hang', 'reset', 500, 'garbage', 'html', { type: 'huge', bytes: 2 * LIMIT_BYTES, chunked: true }];
const NO_OPENSSL = missingOpenssl('the TLS fault case (untrusted certificate)');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface FailureExpectation {
  server: string;
  /** Collectors the fault must fail; the server's other collectors must keep succeeding. */
  failing: readonly WseCollector[];
  /** `reason` of their `poll failed` log lines. */
  reason: string;
  /** Their `err`. */
  err: RegExp;
  /** `wowza_up` of the server while failing: 0 when the API is not reached (auth, network, tls, timeout). */
  up: 0 | 1;
}

describe('exporter process under injected Wowza faults', () => {
  let dir: string;
  let sim: Simulator;
  let tlsSim: Simulator | undefined;
  let tlsPort = 0;
  let trusted: SelfSignedCert | undefined;
  let untrusted: SelfSignedCert | undefined;
  let exporter: RunningExporter;
  let timer: ScrapeTimer;
  /** Series keys of every healthy collector, per server, taken before any fault. */
  const baseline = new Map<string, string[]>();
  let rssAtStart = 0;
  let fdsAtStart = 0;
  /** Offset into the exporter's output where the memory baseline was taken. */
  let outputAtStart = 0;

  const key = (server: string, collector: WseCollector) => `${server}/${collector}`;

  /** Scrapes until `check` holds; a timeout says what the exporter reported last and what it logged. */
  async function untilMetrics(what: string, check: (text: string) => boolean, timeoutMs = 10_000): Promise<void> {
    let last = '';
    try {
      await waitFor(
        what,
        async () => {
          last = await exporter.metrics();
          return check(last) ? true : undefined;
        },
        timeoutMs,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\nlast seen: ${describeHealth(last)}\nexporter output (tail):\n${exporter.output().slice(-2000)}`);
    }
  }

  /** Waits for the collectors of `server` to succeed with exactly the series they had at the start, and wowza_up 1. */
  async function expectHealthy(server: string, collectors: readonly WseCollector[] = ALL, what = 'recovery'): Promise<void> {
    await untilMetrics(`${what}: ${collectors.join(', ')} of ${server} succeeding with their series back`, (text) => {
      if (valueOf(text, 'wowza_up', { server }) !== 1) return false;
      return collectors.every((c) => {
        const series = collectorSeries(text, server, c);
        const expected = baseline.get(key(server, c));
        return collectorSuccess(text, server, c) === 1 && (expected ? series.join('\n') === expected.join('\n') : series.length > 0);
      });
    });
  }

  /**
   * Waits until the fault shows, then scrapes several times while it lasts, then reads the log lines
   * written since `mark` (an offset into the exporter's output).
   */
  async function expectFailing(e: FailureExpectation, mark: number): Promise<void> {
    const healthy = ALL.filter((c) => !e.failing.includes(c));
    await untilMetrics(`${e.failing.join(', ')} of ${e.server} failing with no series left, wowza_up ${e.up}`, (text) => {
      const shows = e.failing.every((c) => collectorSuccess(text, e.server, c) === 0 && collectorSeries(text, e.server, c).length === 0);
      return shows && valueOf(text, 'wowza_up', { server: e.server }) === e.up;
    });

    // Several scrapes across more than one poll interval: fast every time, and never a stale series.
    const timing = timer.time(SCRAPES, 200);
    for (let i = 0; i < SCRAPES; i++) {
      const text = await exporter.metrics();
      for (const c of e.failing) {
        expect(collectorSuccess(text, e.server, c), `${c} success`).toBe(0);
        expect(collectorSeries(text, e.server, c), `${c} series while failing`).toEqual([]);
      }
      for (const c of healthy) {
        expect(collectorSuccess(text, e.server, c), `${c} (not hit by the fault) success`).toBe(1);
        expect(collectorSeries(text, e.server, c).length, `${c} (not hit by the fault) series`).toBeGreaterThan(0);
      }
      expect(valueOf(text, 'wowza_up', { server: e.server }), 'wowza_up').toBe(e.up);
      await sleep(200);
    }
    expectFast(await timing, 'during the fault');

    const failures = pollFailures(exporter.output().slice(mark)).filter((f) => f.server === e.server);
    for (const c of e.failing) {
      const latest = failures.filter((f) => f.collector === c).at(-1);
      expect(latest, `a "poll failed" log line for ${c} of ${e.server}`).toBeDefined();
      expect(latest!.reason, `reason logged for ${c}`).toBe(e.reason);
      expect(latest!.err, `err logged for ${c}`).toMatch(e.err);
    }
    for (const c of healthy) expect(failures.filter((f) => f.collector === c), `failures of ${c}, not hit by the fault`).toEqual([]);
    expect(exporter.proc.exitCode, 'exporter still running').toBeNull();
  }

  /**
   * Scrapes read the latest stored polls and never wait on Wowza. The box has two cores shared by the
   * simulator, the exporter, the timer and whatever else runs there, so a scrape now and then misses the
   * budget to the OS scheduler; one that waits on the API or an event loop blocked by the fault misses it
   * every time (or goes past the ceiling).
   */
  function expectFast(times: number[], when: string): void {
    const shown = `/metrics times ${when}: ${times.map((t) => t.toFixed(1)).join(', ')} ms`;
    expect(times.filter((t) => t >= SCRAPE_BUDGET_MS).length, `${shown}; scrapes over ${SCRAPE_BUDGET_MS} ms`).toBeLessThanOrEqual(SCRAPES_OVER_BUDGET);
    expect(Math.max(...times), shown).toBeLessThan(SCRAPE_CEILING_MS);
  }

  /** Injects `fault` on `route` of the main simulator, checks the failure, clears it, checks the recovery. */
  async function faultCase(route: string, fault: FaultInput, e: Omit<FailureExpectation, 'server'>): Promise<void> {
    const mark = exporter.output().length;
    sim.faults.inject(route, fault);
    await expectFailing({ ...e, server: MAIN }, mark);
    sim.faults.clear();
    await expectHealthy(MAIN);
  }

  const startTlsSim = (cert: SelfSignedCert) => startSimulator({ port: tlsPort, password: PASSWORD, tls: { cert: cert.cert, key: cert.key } });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-faults-'));
    sim = await startSimulator({ password: PASSWORD });
    // An application with a stream target, so that the stream_target collector has series to lose.
    sim.topology.addApp('_defaultVHost_', 'push', { streamTargetsEnabled: true, running: true });
    sim.topology.addStream('_defaultVHost_', 'push', 'main');
    if (!NO_OPENSSL) {
      [trusted, untrusted] = await Promise.all([selfSignedCert(dir, 'trusted'), selfSignedCert(dir, 'untrusted')]);
      tlsSim = await startSimulator({ password: PASSWORD, tls: { cert: trusted.cert, key: trusted.key } });
      tlsPort = tlsSim.port;
    }
    const passwordFile = join(dir, 'password');
    writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
    const server = (name: string, url: string, extra = '') =>
      `  - name: ${name}\n    url: ${url}\n    username: admin\n    password_file: ${passwordFile}\n${extra}`;
    const config = [
      'servers:',
      server(MAIN, sim.url, `    max_response_size: ${LIMIT_BYTES}\n`),
      // No ca_file: the exporter trusts what Node trusts, here the system store plus NODE_EXTRA_CA_CERTS.
      ...(tlsSim ? [server(TLS, tlsSim.url)] : []),
      server(DNS, 'http://wowza.invalid:8087'),
      // Every collector at the poll interval (stream targets are read every 30 s by default).
      'collectors:',
      '  stream_target: {interval: 1s}',
    ].join('\n');
    writeFileSync(join(dir, 'config.yaml'), config);
    exporter = await startExporterProcess(
      // At debug level every failing poll has its line (at info, a down server's collectors are said once, by the server).
      ['--config', join(dir, 'config.yaml'), '--poll.interval', '1s', '--wowza.timeout', '500ms', '--log.level', 'debug'],
      // The trusted certificate stands for a CA installed on the host; the untrusted one is in no store.
      trusted ? { NODE_EXTRA_CA_CERTS: trusted.certPath } : {},
    );

    const servers = tlsSim ? [MAIN, TLS] : [MAIN];
    await untilMetrics(
      'every collector of the healthy servers succeeding',
      (text) => servers.every((s) => ALL.every((c) => collectorSuccess(text, s, c) === 1)),
      15_000,
    );
    let text = await exporter.metrics();
    for (const s of servers) for (const c of ALL) baseline.set(key(s, c), collectorSeries(text, s, c));

    // A warm-up round through the failure paths, so the memory baseline is not the process's start-up.
    for (const fault of FAILURE_ROUND) {
      sim.faults.inject('*', fault);
      await sleep(1100);
      sim.faults.clear();
    }
    await expectHealthy(MAIN, ALL, 'after the warm-up');
    text = await exporter.metrics();
    rssAtStart = valueOf(text, 'process_resident_memory_bytes')!;
    fdsAtStart = valueOf(text, 'process_open_fds')!;
    outputAtStart = exporter.output().length;
    timer = await startScrapeTimer(`${exporter.url}/metrics`);
  });

  afterEach(() => sim?.faults.clear());

  afterAll(async () => {
    await timer?.close();
    await exporter?.stop();
    await Promise.all([sim?.close(), tlsSim?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('starts with every collector of the main server succeeding and series for each', async () => {
    for (const c of ALL) expect(baseline.get(key(MAIN, c))!.length, `${c} series`).toBeGreaterThan(0);
    // Every series of the server belongs to a known collector, so the checks below see all of them.
    expect(unclaimedSeries(await exporter.metrics(), MAIN)).toEqual([]);
  });

  it('HTTP 500: the collector fails with reason http, the server still counts as up', async () => {
    await faultCase(EP.machineCurrent, 500, { failing: ['machine'], reason: 'http', err: /answered HTTP 500/, up: 1 });
  });

  it('a hang longer than the deadline: reason timeout, wowza_up 0 (steady, not flapping with the other collectors)', async () => {
    await faultCase(EP.serverStatus, 'hang', { failing: ['status'], reason: 'timeout', err: /did not answer within 500 ms/, up: 0 });
  });

  it('connection reset: reason network', async () => {
    await faultCase(EP.vhostCurrent, 'reset', { failing: ['vhost'], reason: 'network', err: /connection reset by the server/, up: 0 });
  });

  it('garbage JSON: reason unparsable', async () => {
    await faultCase(EP.applicationCurrent, 'garbage', { failing: ['application'], reason: 'unparsable', err: /invalid JSON/, up: 1 });
  });

  it('an XML body although JSON was asked for: reason unparsable', async () => {
    await faultCase(EP.streamCurrent, 'xml', { failing: ['stream'], reason: 'unparsable', err: /answered XML\/HTML although JSON was requested/, up: 1 });
  });

  it('a response over its endpoint cap with Content-Length: reason too_large', async () => {
    // Machine statistics are a few numbers: their cap is 256 KiB, below this server's max_response_size.
    await faultCase(EP.machineCurrent, { type: 'huge', bytes: 4 * LIMIT_BYTES }, {
      failing: ['machine'],
      reason: 'too_large',
      err: new RegExp(`larger than the ${Math.min(LIMIT_BYTES, 256 * 1024)} byte limit`),
      up: 1,
    });
  });

  it('a chunked response over max_response_size on the instance lists: every collector that needs discovery fails', async () => {
    await faultCase(EP.instances, { type: 'huge', bytes: 4 * LIMIT_BYTES, chunked: true }, {
      failing: DISCOVERY_BASED,
      reason: 'too_large',
      err: new RegExp(`instances response is larger than the ${LIMIT_BYTES} byte limit`),
      up: 1,
    });
  });

  it('credentials revoked mid-run (401): every collector fails with reason auth, wowza_up 0, the password never shows', async () => {
    const mark = exporter.output().length;
    sim.setPassword(ROTATED);
    try {
      await expectFailing({ server: MAIN, failing: ALL, reason: 'auth', err: /authentication failed for user "admin"/, up: 0 }, mark);
    } finally {
      sim.setPassword(PASSWORD);
    }
    await expectHealthy(MAIN);
    const output = exporter.output();
    expect(output).not.toContain(PASSWORD);
    expect(output).not.toContain(ROTATED);
  });

  it.skipIf(NO_OPENSSL)('TLS: a certificate the exporter does not trust fails with reason tls and a hint; the trusted one recovers', async () => {
    await expectHealthy(TLS, ALL, 'the trusted certificate');
    const mark = exporter.output().length;
    // The server's certificate is replaced by a self-signed one (same port, as after a botched renewal).
    await tlsSim!.close();
    tlsSim = await startTlsSim(untrusted!);
    try {
      await expectFailing({ server: TLS, failing: ALL, reason: 'tls', err: /TLS certificate is not trusted \(set tls\.ca_file/, up: 0 }, mark);
    } finally {
      await tlsSim.close();
      tlsSim = await startTlsSim(trusted!);
    }
    await expectHealthy(TLS);
  });

  it('DNS: a host name that does not resolve fails every collector with reason network, and no series of that server', async () => {
    await expectFailing({ server: DNS, failing: ALL, reason: 'network', err: /wowza\.invalid:8087.*host name does not resolve/, up: 0 }, 0);
  });

  it('memory and sockets stay bounded over hundreds of failing polls', async () => {
    // Rounds of every kind of failure on every main route, on top of the cases before, until hundreds of polls have
    // failed. While a server cannot be reached at all only one of its collectors asks it (the others wait for its
    // answer), so a round makes fewer failing polls than one per collector and interval.
    for (let round = 0; round < 10 && pollFailures(exporter.output().slice(outputAtStart)).length <= 250; round++) {
      for (const fault of FAILURE_ROUND) {
        sim.faults.inject('*', fault);
        await sleep(1100);
        sim.faults.clear();
      }
      await expectHealthy(MAIN);
    }

    const failed = pollFailures(exporter.output().slice(outputAtStart)).length;
    expect(failed, 'failing polls since the memory baseline').toBeGreaterThan(250);
    const text = await exporter.metrics();
    const rss = valueOf(text, 'process_resident_memory_bytes')!;
    const fds = valueOf(text, 'process_open_fds')!;
    const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
    console.info(`fault suite: ${failed} failing polls; RSS ${mib(rssAtStart)} -> ${mib(rss)}; open fds ${fdsAtStart} -> ${fds}`);
    expect(rss - rssAtStart, `RSS growth (${mib(rssAtStart)} -> ${mib(rss)})`).toBeLessThan(64 * 2 ** 20);
    // Hung and reset connections are closed, not kept: at most a pool's worth of sockets more than at the start.
    expect(fds - fdsAtStart, `open fds ${fdsAtStart} -> ${fds}`).toBeLessThanOrEqual(8);
  });

  // After the memory case: ten times the series is a bigger heap by right, not a leak.
  it('a 10x topology spike: every collector keeps up, scrapes stay fast; back to normal leaves no stale stream', async () => {
    const streamsBefore = baseline.get(key(MAIN, 'stream'))!.length;
    sim.topology.scale(10);
    try {
      await untilMetrics('stream series to grow tenfold', (text) => {
        const streams = collectorSeries(text, MAIN, 'stream').length;
        const instance = collectorSeries(text, MAIN, 'instance').length;
        return streams >= streamsBefore * 9 && instance > baseline.get(key(MAIN, 'instance'))!.length;
      });
      const timing = timer.time(SCRAPES, 200);
      for (let i = 0; i < SCRAPES; i++) {
        const text = await exporter.metrics();
        for (const c of ALL) expect(collectorSuccess(text, MAIN, c), `${c} success during the spike`).toBe(1);
        await sleep(200);
      }
      expectFast(await timing, 'during the spike');
    } finally {
      sim.topology.scale(0.1);
    }
    await expectHealthy(MAIN, ALL, 'back to the original topology');
  });

  it('never logged an unhandled rejection, and stops cleanly (exit 0) while requests hang', async () => {
    expect(exporter.proc.exitCode).toBeNull();
    sim.faults.inject('*', 'hang');
    await sleep(1200);
    const started = Date.now();
    const code = await exporter.stop();
    expect(code).toBe(0);
    expect(Date.now() - started, 'shutdown time').toBeLessThan(5000);
    const output = exporter.output();
    expect(output).not.toMatch(/unhandled rejection|uncaught exception/i);
    expect(output).not.toContain(PASSWORD);
  });
});
