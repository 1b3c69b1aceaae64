/// <reference lib="dom" />
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { startVideoSimulator, videoSchedule, type VideoSimulator } from '@wowza-exporter/simulator/video';
import { signHs256 } from '../../src/webhooks/jwt.js';
import { startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { chromiumPath, missingTool } from '../helpers/prometheus.js';

const CHROMIUM = chromiumPath();
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
const PASSWORD = 'status-pa55-word';
const HOOK_SECRET = 'status-hook-secret-0123456789abcdef';
const MACHINE = '/v2/machine/monitoring/current';

/**
 * The status page in a real browser (Debian's Chromium, driven by puppeteer-core; nothing is downloaded): two
 * servers, one of them failing a collector, and a log follower. The same tab must show the failure, and later its
 * recovery, without being reloaded, without a request to another origin and without a JavaScript error.
 */
describe.skipIf(missingTool('chromium', CHROMIUM, 'the status page in a real browser'))('status page in Chromium', () => {
  let dir: string;
  let healthy: Simulator;
  let failing: Simulator;
  let video: VideoSimulator;
  let exporter: RunningExporter;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];
  const requests: string[] = [];
  let clearFault: () => void;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-status-'));
    writeFileSync(join(dir, 'password'), PASSWORD, { mode: 0o600 });
    writeFileSync(join(dir, 'hook-secret'), HOOK_SECRET, { mode: 0o600 });
    writeFileSync(join(dir, 'video-token'), 'status-video-token', { mode: 0o600 });
    video = await startVideoSimulator({ token: 'status-video-token', schedules: [videoSchedule('evening', { name: 'Evening news' })] });
    healthy = await startSimulator({ auth: 'digest', password: PASSWORD, apps: 2, streams: 2, logs: { linesPerSecond: 20 } });
    failing = await startSimulator({ auth: 'basic', password: PASSWORD, apps: 1, streams: 1 });
    // A recording that stopped with an error while its stream is live, and a stream target that dropped.
    healthy.topology.addApp('_defaultVHost_', 'rec', { running: true });
    healthy.topology.addStream('_defaultVHost_', 'rec', 'hall', { recording: true });
    healthy.topology.stopRecording('_defaultVHost_', 'rec', 'hall', 'Waiting for stream', 'could not open /content/hall.mp4');
    healthy.topology.addApp('_defaultVHost_', 'push', { streamTargetsEnabled: true, running: true });
    healthy.topology.addStream('_defaultVHost_', 'push', 'main');
    healthy.topology.setTargetStatus('_defaultVHost_', 'push', 'main', 'Error');
    clearFault = failing.faults.inject(MACHINE, { type: 'status', status: 500, message: 'Internal error in MachineMonitor' });
    const server = (s: Simulator, name: string) => ({ name, url: s.url, username: 'admin', password_file: join(dir, 'password') });
    writeFileSync(
      join(dir, 'config.yaml'),
      stringify({
        servers: [server(healthy, 'edge-1'), server(failing, 'edge-2')],
        poll: { interval: '2s' },
        webhooks: { enabled: true, secret_file: join(dir, 'hook-secret') },
        video: { url: video.url, token_file: join(dir, 'video-token'), interval: '2s' },
        logs: {
          positions_file: join(dir, 'positions.json'),
          dead_letter_file: join(dir, 'dead.ndjson'),
          log_types: ['access'],
          follow_interval: '500ms',
          sinks: [{ type: 'file', path: join(dir, 'records.ndjson') }],
        },
      }),
    );
    exporter = await startExporterProcess(['--config', join(dir, 'config.yaml')]);
    // One event the receiver takes and one it refuses, so the webhooks section has both to show.
    const now = Math.floor(Date.now() / 1000);
    const event = JSON.stringify({ id: 'ev-1', timestamp: Date.now(), name: 'stream.started', source: 'edge-1', context: { vhost: '_defaultVHost_', app: 'live', appInstance: '_definst_', stream: 'stream1' }, data: {} });
    for (const authorization of [`Bearer ${signHs256({ iat: now, exp: now + 60 }, HOOK_SECRET)}`, 'Bearer forged']) {
      await fetch(`${exporter.url}/webhooks/wowza?server=edge-1`, { method: 'POST', body: event, headers: { 'content-type': 'application/json', authorization } });
    }
    browser = await puppeteer.launch({
      executablePath: CHROMIUM!,
      headless: true,
      userDataDir: join(dir, 'chromium'),
      // As root in a sandboxed CI; and nothing of Chromium's own may leave the machine.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('request', (r) => requests.push(r.url()));
    // Names the URL that a console "Failed to load resource" leaves out.
    page.on('response', (r) => {
      if (r.status() >= 400) errors.push(`HTTP ${r.status()} for ${r.url()}`);
    });
    await page.setViewport({ width: 1100, height: 900 });
    await page.goto(`${exporter.url}/`, { waitUntil: 'load' });
    await page.evaluate(() => ((window as unknown as { sameTab: number }).sameTab = 42));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await exporter?.stop();
    await healthy?.close();
    await failing?.close();
    await video?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('names both servers: the failing collector with its reason and message, the healthy server up, and the follower', async () => {
    await page.waitForSelector('[data-server="edge-2"] [data-collector="machine"][data-state="bad"]', { timeout: 15_000 });
    await page.waitForSelector('[data-server="edge-1"][data-up="true"]', { timeout: 15_000 });
    await page.waitForSelector('[data-follower="edge-1/wowzastreamingengine_access"]', { timeout: 15_000 });
    // The follower's backlog (issue 48): caught up, or lines, bytes and the time to read them.
    const follower = await page.waitForFunction(() => {
      const t = document.querySelector('[data-follower="edge-1/wowzastreamingengine_access"]')?.textContent ?? '';
      return /caught up|lines \([\d,]+ bytes\), ~\d+ s/.test(t) && t;
    }, { timeout: 15_000 });
    expect(String(await follower.jsonValue())).toMatch(/caught up|lines \([\d,]+ bytes\)/);
    expect(await page.$eval('#followers thead', (el) => el.textContent ?? '')).toContain('backlog');
    const failingRow = await page.$eval('[data-server="edge-2"] [data-collector="machine"]', (el) => el.textContent ?? '');
    expect(failingRow).toMatch(/FAILING: http/);
    expect(failingRow).toMatch(/answered HTTP 500: Internal error in MachineMonitor/);
    const healthyCard = await page.$eval('[data-server="edge-1"]', (el) => el.textContent ?? '');
    expect(healthyCard).toMatch(/UP/);
    expect(healthyCard).not.toMatch(/FAILING/);
    const schedules = await page.waitForFunction(() => document.querySelector('#video')?.textContent?.includes('Evening news') && document.querySelector('#video')!.textContent, { timeout: 15_000 });
    expect(String(await schedules.jsonValue())).toMatch(/Evening news\s*enabled\s*in \d+ h/);
    const hooks = await page.$eval('#webhooks', (el) => el.textContent ?? '');
    expect(hooks).toMatch(/last event: stream\.started from edge-1/);
    expect(hooks).toMatch(/rejected: unauthorized: 1/);
    // The other collectors of the failing server are fine, and say so.
    expect(await page.$eval('[data-server="edge-2"] [data-collector="status"]', (el) => el.getAttribute('data-state'))).toBe('ok');

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'status-page.png'), fullPage: true });
  });

  it('lists the recorders and stream targets of a server, the stopped recording and the dropped push in red', async () => {
    await page.waitForSelector('[data-server="edge-1"] [data-recorder="rec/hall"]', { timeout: 15_000 });
    const recorder = await page.$eval('[data-server="edge-1"] [data-recorder="rec/hall"]', (el) => ({ text: el.textContent ?? '', bad: el.classList.contains('bad') }));
    expect(recorder.bad).toBe(true);
    expect(recorder.text).toContain('Waiting for stream');
    expect(recorder.text).toContain('could not open /content/hall.mp4');
    await page.waitForSelector('[data-server="edge-1"] [data-target="push/main-rtmp"]', { timeout: 15_000 });
    const target = await page.$eval('[data-server="edge-1"] [data-target="push/main-rtmp"]', (el) => ({ text: el.textContent ?? '', bad: el.classList.contains('bad') }));
    expect(target.bad).toBe(true);
    expect(target.text).toContain('Error');
    expect(target.text).toContain('live.example.net');
    // The target's password and stream key are nowhere on the page.
    const html = await page.content();
    for (const secret of ['push-secret', 'main-key-7f3a9c']) expect(html).not.toContain(secret);
  });

  it('agrees with /api/v1/status, and neither shows a secret', async () => {
    const status = (await (await fetch(`${exporter.url}/api/v1/status`)).json()) as {
      servers: Array<{ name: string; up: boolean; collectors: Array<{ name: string; success: boolean; reason: string | null; error: string | null; last_poll: string | null; duration_seconds: number | null }> }>;
      logs: { followers: Array<{ server: string; log_type: string }> };
    };
    expect(status.servers.map((s) => s.name).sort()).toEqual(['edge-1', 'edge-2']);
    const machine = status.servers.find((s) => s.name === 'edge-2')!.collectors.find((c) => c.name === 'machine')!;
    expect(machine).toMatchObject({ success: false, reason: 'http' });
    expect(machine.error).toMatch(/HTTP 500/);
    expect(Object.keys(machine).sort()).toEqual(expect.arrayContaining(['name', 'success', 'reason', 'error', 'last_poll', 'duration_seconds']));
    expect(status.logs.followers.map((f) => `${f.server}/${f.log_type}`)).toContain('edge-1/wowzastreamingengine_access');
    const html = await page.content();
    for (const text of [html, JSON.stringify(status)]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(Buffer.from(`admin:${PASSWORD}`).toString('base64'));
    }
  });

  it('shows the recovery in the same tab, without a reload, within 15 s of the fault clearing', async () => {
    clearFault();
    const cleared = Date.now();
    await page.waitForSelector('[data-server="edge-2"] [data-collector="machine"][data-state="ok"]', { timeout: 15_000 });
    expect(Date.now() - cleared).toBeLessThan(15_000);
    expect(await page.evaluate(() => (window as unknown as { sameTab?: number }).sameTab)).toBe(42);
    expect(await page.$('[data-state="bad"]')).toBeNull();
    await page.screenshot({ path: join(ARTIFACTS, 'status-page-recovered.png'), fullPage: true });
  });

  it('is usable at phone width', async () => {
    await page.setViewport({ width: 390, height: 844, isMobile: true });
    await new Promise((r) => setTimeout(r, 300));
    // Nothing wider than the screen but the tables, which scroll inside their own box.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(ARTIFACTS, 'status-page-phone.png'), fullPage: true });
  });

  it('made no request outside its own origin and logged no JavaScript error', () => {
    const origin = new URL(exporter.url).origin;
    expect(requests.length).toBeGreaterThan(2);
    expect(requests.filter((u) => new URL(u).origin !== origin)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
