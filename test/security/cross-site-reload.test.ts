import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { chromiumPath, missingTool } from '../helpers/prometheus.js';
import { waitFor } from '../helpers/ports.js';

const CHROMIUM = chromiumPath();

/**
 * Issue 29: a plain HTML form on another site, opened in an operator's browser, reloaded the exporter's
 * configuration. Here a page on `localhost` posts a form to the exporter on `127.0.0.1` (another site) from a real
 * Chromium, with the lifecycle API on: the exporter must refuse it and not reload.
 */
describe.skipIf(missingTool('chromium', CHROMIUM, 'a cross-site form in a real browser'))('a cross-site form against /-/reload', () => {
  let dir: string;
  let sim: Simulator;
  let exporter: RunningExporter;
  let evil: Server;
  let browser: Browser;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-cross-site-'));
    sim = await startSimulator({ auth: 'basic' });
    writeFileSync(join(dir, 'password'), sim.password, { mode: 0o600 });
    writeFileSync(join(dir, 'config.yaml'), `servers: [{name: a, url: "${sim.url}", username: admin, auth: basic, password_file: "${join(dir, 'password')}"}]\n`);
    exporter = await startExporterProcess(['--config', join(dir, 'config.yaml'), '--web.enable-lifecycle']);
    const target = `${exporter.url}/-/reload`;
    evil = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><form id="f" method="POST" action="${target}"><input name="x" value="1"></form><script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    browser = await puppeteer.launch({
      executablePath: CHROMIUM!,
      headless: true,
      userDataDir: join(dir, 'chromium'),
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await exporter?.stop();
    await sim?.close();
    await new Promise((r) => evil?.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is refused: the browser is answered 403 and the configuration is not read again', async () => {
    const reloadedAt = async () => samples(await exporter.metrics(), 'wowza_exporter_config_last_reload_success_timestamp_seconds')[0]?.value;
    const before = await reloadedAt();
    const page = await browser.newPage();
    const answers: number[] = [];
    page.on('response', (r) => {
      if (r.url().endsWith('/-/reload')) answers.push(r.status());
    });
    // `localhost` and `127.0.0.1` are different sites to the browser.
    await page.goto(`http://localhost:${(evil.address() as { port: number }).port}/`);
    await waitFor('the form posted', () => (answers.length > 0 ? true : undefined), 45_000);
    expect(answers).toEqual([403]);
    expect(exporter.output()).toMatch(/refused a reload a browser sent from another site/);
    expect(exporter.output()).not.toMatch(/configuration reloaded/);
    expect(await reloadedAt()).toBe(before);
  }, 60_000);
});
