import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { EP } from '../../src/wowza/endpoints.js';
import { runCli, samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';
import { chromiumPath } from '../helpers/prometheus.js';

/**
 * `wowza_up` is 1 only for a server that answers as the WSE REST API, and `serve` says why a server is down the way
 * doctor does: one line when it goes down (cause and next step), one when it answers again, nothing per collector
 * per poll in between.
 */

const CHROMIUM = chromiumPath();

interface LogLine {
  level: string;
  msg: string;
  server?: string;
  collector?: string;
  cause?: string;
  fix?: string;
}

/** The exporter's JSON log lines. */
function logLines(output: string): LogLine[] {
  const out: LogLine[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as LogLine);
    } catch {
      // a line cut by the read: not ours to judge
    }
  }
  return out;
}

/** doctor's output for the same flags: it must name the same next step as serve's line. */
async function doctorSays(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const r = await runCli(['doctor', ...args], { env });
  return r.stdout + r.stderr;
}

const downLines = (e: RunningExporter) => logLines(e.output()).filter((l) => l.msg.startsWith('server down'));
const recoveryLines = (e: RunningExporter) => logLines(e.output()).filter((l) => l.msg.startsWith('server answers again'));
/** Warnings, errors and fatal lines. */
const warnings = (e: RunningExporter) => logLines(e.output()).filter((l) => ['warn', 'error', 'fatal'].includes(l.level));

/** The status API's view of the one server. */
async function serverStatus(e: RunningExporter): Promise<{ name: string; up: boolean | null; down_reason: string | null; down_fix: string | null }> {
  const status = (await (await fetch(`${e.url}/api/v1/status`)).json()) as { servers: Array<{ name: string; up: boolean | null; down_reason: string | null; down_fix: string | null }> };
  return status.servers[0]!;
}

/** Waits until several more poll rounds have run (a once-per-change line had every chance to repeat). */
async function severalRounds(ms = 4_000): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

describe('an honest wowza_up, and serve that explains its failures once', () => {
  let dir: string;
  let running: RunningExporter | undefined;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'honest-up-'));
  });
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe('a web server that answers HTML 404 pages (as the Manager port does)', () => {
    let web: Server;
    let webUrl: string;
    beforeAll(async () => {
      web = createServer((_req, res) => {
        res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<!DOCTYPE html><html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>');
      });
      await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
      webUrl = `http://127.0.0.1:${(web.address() as { port: number }).port}`;
    });
    afterAll(() => new Promise<void>((r) => web.close(() => r())));

    it('gives wowza_up 0, and the log, /api/v1/status and the status page say it is not the WSE REST API', async () => {
      const e = (running = await startExporterProcess(['--wowza.url', webUrl, '--wowza.username', 'admin', '--poll.interval', '1s'], { WOWZA_PASSWORD: 'x' }));
      const text = await waitFor('every collector polled', async () => {
        const t = await e.metrics();
        return samples(t, 'wowza_exporter_collector_success').length >= 8 && samples(t, 'wowza_exporter_collector_success').every((s) => s.value === 0) ? t : undefined;
      });
      expect(samples(text, 'wowza_up')[0]?.value).toBe(0);

      const server = await serverStatus(e);
      expect(server.up).toBe(false);
      expect(server.down_reason).toContain('not the WSE REST API');
      expect(server.down_fix).toContain('8087');

      await severalRounds();
      const down = downLines(e);
      expect(down.map((l) => l.msg)).toHaveLength(1);
      expect(down[0]!.msg).toContain('not the WSE REST API');
      expect(down[0]!.fix).toContain('the REST port, 8087');
      expect(await doctorSays(['--wowza.url', webUrl, '--wowza.username', 'admin'], { WOWZA_PASSWORD: 'x' })).toContain(down[0]!.fix!);
      expect(samples(await e.metrics(), 'wowza_up')[0]?.value, 'still 0 after several rounds').toBe(0);
      // While the server is down, its collectors' failures are not said one by one, poll after poll.
      expect(warnings(e).filter((l) => l.msg === 'poll failed')).toEqual([]);
    }, 60_000);

    it.skipIf(!CHROMIUM)('the HTML status page shows DOWN with the reason', async () => {
      const e = (running = await startExporterProcess(['--wowza.url', webUrl, '--wowza.username', 'admin', '--poll.interval', '1s'], { WOWZA_PASSWORD: 'x' }));
      const { name } = await waitFor('wowza_up 0 with a reason', async () => {
        const server = await serverStatus(e);
        return server.up === false && server.down_reason ? server : undefined;
      });
      const browser = await puppeteer.launch({
        executablePath: CHROMIUM!,
        headless: true,
        userDataDir: join(dir, 'chromium'),
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
      try {
        const page = await browser.newPage();
        await page.goto(`${e.url}/`, { waitUntil: 'load' });
        await page.waitForSelector(`[data-server="${name}"] [data-down-reason]`, { timeout: 30_000 });
        const card = await page.$eval(`[data-server="${name}"]`, (el) => el.textContent ?? '');
        expect(card).toContain('DOWN');
        expect(card).toContain('not the WSE REST API');
        expect(card).toContain('8087');
      } finally {
        await browser.close();
      }
    }, 90_000);
  });

  describe('against the simulator', () => {
    let sim: Simulator;
    beforeAll(async () => {
      sim = await startSimulator({ auth: 'basic' });
    });
    afterAll(() => sim.close());

    it('https on a plain-HTTP port: one line that says to use an http:// URL', async () => {
      const e = (running = await startExporterProcess(['--wowza.url', sim.url.replace(/^http:/, 'https:'), '--wowza.username', sim.username, '--poll.interval', '1s'], { WOWZA_PASSWORD: sim.password }));
      await waitFor('the server down line', () => (downLines(e).length > 0 ? true : undefined));
      await severalRounds();
      const down = downLines(e);
      expect(down, JSON.stringify(down)).toHaveLength(1);
      expect(down[0]!.msg).toContain('use an http:// URL');
      expect(samples(await e.metrics(), 'wowza_up')[0]?.value).toBe(0);
      expect(await doctorSays(['--wowza.url', sim.url.replace(/^http:/, 'https:'), '--wowza.username', sim.username], { WOWZA_PASSWORD: sim.password })).toContain(down[0]!.fix!);
      expect(warnings(e).filter((l) => l.msg === 'poll failed')).toEqual([]);
    }, 60_000);

    it('no password configured: one line that says so and how to set it (not "wrong password")', async () => {
      const e = (running = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '1s'], ));
      await waitFor('the server down line', () => (downLines(e).length > 0 ? true : undefined));
      await severalRounds();
      const down = downLines(e);
      expect(down, JSON.stringify(down)).toHaveLength(1);
      expect(down[0]!.msg).toContain(`no password configured for user "${sim.username}"`);
      expect(down[0]!.msg).toContain('--wowza.password-file or WOWZA_PASSWORD');
      expect(e.output()).not.toMatch(/wrong username or password/);
      expect(await doctorSays(['--wowza.url', sim.url, '--wowza.username', sim.username])).toContain(down[0]!.fix!);
    }, 60_000);

    it("a 404 from one endpoint (Wowza's own, or a proxy's HTML page) keeps wowza_up 1 while the others answer; the collector's failure is said once, then its recovery", async () => {
      const e = (running = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '1s'], { WOWZA_PASSWORD: sim.password }));
      const success = async (collector: string) => samples(await e.metrics(), 'wowza_exporter_collector_success', { collector })[0]?.value;
      await waitFor('wowza_up 1', async () => (samples(await e.metrics(), 'wowza_up')[0]?.value === 1 ? true : undefined));
      const failedLines = () => warnings(e).filter((l) => l.msg === 'poll failed' && l.collector === 'machine');
      try {
        sim.faults.inject(EP.machineCurrent, 404);
        await waitFor('machine failing', async () => ((await success('machine')) === 0 ? true : undefined));
        await severalRounds(3_000);
        expect(samples(await e.metrics(), 'wowza_up')[0]?.value, "wowza_up with Wowza's 404 on one endpoint").toBe(1);
        sim.faults.clear();
        sim.faults.inject(EP.machineCurrent, { type: 'html', status: 404 });
        await severalRounds(3_000);
        expect(await success('machine')).toBe(0);
        expect(samples(await e.metrics(), 'wowza_up')[0]?.value, 'wowza_up with an HTML 404 on one endpoint').toBe(1);
      } finally {
        sim.faults.clear();
      }
      await waitFor('machine polls again', async () => ((await success('machine')) === 1 ? true : undefined));
      await waitFor('its recovery line', () => (logLines(e.output()).some((l) => l.msg === 'poll succeeds again' && l.collector === 'machine') ? true : undefined));
      // Both failures have the reason http: one line for the change from success to failure, not one per poll.
      expect(failedLines(), JSON.stringify(failedLines())).toHaveLength(1);
      expect(downLines(e)).toEqual([]);
    }, 90_000);

    it('a Wowza that answers XML (a proxy dropped the Accept header) is up; its collectors fail saying so, not "not the WSE REST API"', async () => {
      const xml = await startSimulator({ auth: 'basic', xmlOnly: true, apps: 1, streams: 1 });
      // machine and status answer their first poll 1 s late (well within its 2.7 s deadline, on a loaded machine too), so
      // the collectors that read the walk say first what they met: the walk's XML, heard in their prepare step before
      // each poll began, is the REST API.
      xml.faults.inject(EP.machineCurrent, { type: 'slow', ms: 1_000 }, { times: 1 });
      xml.faults.inject(EP.serverStatus, { type: 'slow', ms: 1_000 }, { times: 1 });
      try {
        const e = (running = await startExporterProcess(['--wowza.url', xml.url, '--wowza.username', xml.username, '--wowza.connectioncounts-url', 'off', '--poll.interval', '3s'], { WOWZA_PASSWORD: xml.password }));
        const text = await waitFor('the machine collector failing', async () => {
          const t = await e.metrics();
          return samples(t, 'wowza_exporter_collector_success', { collector: 'machine' })[0]?.value === 0 ? t : undefined;
        });
        expect(samples(text, 'wowza_up')[0]?.value).toBe(1);
        await waitFor('its failure line', () => (warnings(e).some((l) => l.msg === 'poll failed' && l.collector === 'machine') ? true : undefined));
        const line = warnings(e).find((l) => l.msg === 'poll failed' && l.collector === 'machine')!;
        expect(JSON.stringify(line)).toMatch(/Accept header/);
        expect(JSON.stringify(line)).not.toMatch(/not the WSE REST API/);
        expect(downLines(e)).toEqual([]);
      } finally {
        await xml.close();
      }
    }, 60_000);

    it('serve says its version and revision once, at start', async () => {
      const e = (running = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username], { WOWZA_PASSWORD: sim.password }));
      const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
      const all = logLines(e.output());
      const lines = all.filter((l) => l.msg.includes(' starting') && 'version' in l);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 'info', version, revision: expect.stringMatching(/\S/) });
      expect(all.indexOf(lines[0]!), 'said before the exporter listens').toBeLessThan(all.findIndex((l) => l.msg === 'exporter listening'));
    }, 60_000);

    it('a server that goes down and comes back: one line naming the cause and fix, then one recovery line', async () => {
      const port = Number(new URL(sim.url).port);
      const e = (running = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '1s'], { WOWZA_PASSWORD: sim.password }));
      await waitFor('wowza_up 1', async () => (samples(await e.metrics(), 'wowza_up')[0]?.value === 1 ? true : undefined));
      await sim.close();
      await waitFor('wowza_up 0', async () => (samples(await e.metrics(), 'wowza_up')[0]?.value === 0 ? true : undefined));
      await severalRounds();
      sim = await startSimulator({ auth: 'basic', port });
      await waitFor('wowza_up 1 again', async () => (samples(await e.metrics(), 'wowza_up')[0]?.value === 1 ? true : undefined));
      await severalRounds(2_000);
      const down = downLines(e);
      expect(down, JSON.stringify(down)).toHaveLength(1);
      expect(down[0]!.msg).toContain('connection refused');
      expect(down[0]!.fix).toContain('8087');
      expect(recoveryLines(e)).toHaveLength(1);
      expect(warnings(e).filter((l) => l.msg === 'poll failed')).toEqual([]);
    }, 90_000);
  });
});
