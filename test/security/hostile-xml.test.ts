import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';
import { healthyWithinASecond } from '../helpers/health-samples.js';

/**
 * Hostile connectioncounts documents (issue 41, item 2), each from the provider of its own server, beside a
 * well-behaved server:
 * - `nested`: 1 MB nested 100,000 deep, with a stream every 10 levels. Each stream looked its names up in a copy of
 *   the whole stack, so the parse was quadratic: 53 s on the thread that answers /-/healthy, SIGTERM ignored.
 * - `flat`: 31 MB of flat streams (within max_response_size): one synchronous parse held the thread ~5 s a poll, and
 *   the same server's other collectors failed as false timeouts.
 * Health must answer within a second, the good server stay up, the flat server's collectors all succeed, and SIGTERM
 * end the process within 5 s while a document is being parsed.
 */

const LEVELS = 100_000;

function nestedDocument(): Buffer {
  const open: string[] = ['<?xml version="1.0"?><WowzaStreamingEngine>'];
  for (let i = 0; i < LEVELS; i++) open.push(i % 10 === 0 ? '<a><Stream><Name>s</Name></Stream>' : '<a>');
  return Buffer.from(`${open.join('')}${'</a>'.repeat(LEVELS)}</WowzaStreamingEngine>`);
}

function flatDocument(bytes: number): Buffer {
  const parts: string[] = ['<?xml version="1.0"?>\n<WowzaStreamingEngine>\n'];
  let size = parts[0]!.length;
  for (let i = 0; size < bytes; i++) {
    const s = `<Stream vhostName="_defaultVHost_" applicationName="live" appInstanceName="_definst_" streamName="stream-${i}" sessionsFlash="1" sessionsCupertino="2" sessionsSanJose="0" sessionsSmooth="0" sessionsRTSP="0" sessionsMPEGDash="0" sessionsWebRTC="0" sessionsTotal="3"/>\n`;
    parts.push(s);
    size += s.length;
  }
  parts.push('</WowzaStreamingEngine>\n');
  return Buffer.from(parts.join(''));
}

/** Peak resident memory of a process (VmHWM), in MB. */
function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

describe('hostile connectioncounts documents', () => {
  const documents = { nested: nestedDocument(), flat: flatDocument(31_000_000) };
  const served = { nested: 0, flat: 0 };
  /** Called when a flat document has been written out whole (the exporter parses it from then on). */
  let onFlatSent: (() => void) | undefined;
  let hostile: Server;
  let hostileUrl = '';
  const sims: Record<'good' | 'nested' | 'flat', Simulator | undefined> = { good: undefined, nested: undefined, flat: undefined };
  let exporter: RunningExporter;
  let dir = '';

  beforeAll(async () => {
    expect(documents.nested.length).toBeGreaterThan(1_000_000);
    hostile = createServer((req, res) => {
      req.resume();
      const which = req.url?.startsWith('/nested/') ? 'nested' : req.url?.startsWith('/flat/') ? 'flat' : undefined;
      if (!which) {
        res.writeHead(404).end();
        return;
      }
      served[which]++;
      // Chunked: no Content-Length tells the client the size before it reads.
      res.writeHead(200, { 'content-type': 'text/xml;charset=UTF-8' });
      res.end(documents[which], () => {
        if (which === 'flat') onFlatSent?.();
      });
    });
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
    hostileUrl = `http://127.0.0.1:${(hostile.address() as { port: number }).port}`;
    dir = mkdtempSync(join(tmpdir(), 'hostile-xml-'));
    const servers = [];
    for (const name of ['good', 'nested', 'flat'] as const) {
      const sim = (sims[name] = await startSimulator({ auth: 'basic', apps: 1, streams: 2 }));
      writeFileSync(join(dir, `${name}-password`), sim.password);
      servers.push({ name, url: sim.url, username: sim.username, password_file: join(dir, `${name}-password`) });
    }
    writeFileSync(join(dir, 'config.yaml'), `poll: {interval: 5s}\nservers: ${JSON.stringify(servers)}\n`);
    exporter = await startExporterProcess([
      '--config',
      join(dir, 'config.yaml'),
      '--wowza.auth',
      'basic',
      // The good server reads viewers from REST; the hostile ones from their providers here.
      '--wowza.connectioncounts-url',
      'off',
      '--wowza.connectioncounts-url',
      `${hostileUrl}/nested/connectioncounts`,
      '--wowza.connectioncounts-url',
      `${hostileUrl}/flat/connectioncounts`,
    ]);
  }, 60_000);
  afterAll(async () => {
    await exporter?.stop('SIGKILL');
    for (const sim of Object.values(sims)) await sim?.close();
    hostile?.closeAllConnections();
    await new Promise((r) => hostile?.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('health answers within a second, the good server stays up, the hostile documents are refused or read, SIGTERM ends the process within 5 s', async () => {
    await waitFor('both hostile documents served twice', () => (served.nested >= 2 && served.flat >= 2 ? true : undefined), 60_000);
    const SAMPLES = 40;
    const fast = await healthyWithinASecond(exporter.url, SAMPLES);
    console.log(`hostile connectioncounts: healthy within 1 s in ${fast} of ${SAMPLES} samples; ${served.nested} nested and ${served.flat} flat documents served; exporter peak RSS ${peakRssMb(exporter.proc.pid!).toFixed(0)} MB`);
    expect(fast, `healthy within 1 s in ${fast} of ${SAMPLES} one-second samples`).toBeGreaterThanOrEqual(38);

    // Read from scrapes after the latest polls: a single poll that timed out on a busy machine would read 0 for one
    // interval; only a lasting failure fails here.
    const up = (server: string) =>
      waitFor(`${server} up`, async () => {
        const t = await exporter.metrics();
        if (samples(t, 'wowza_up', { server })[0]?.value === 1) return true;
        const failing = samples(t, 'wowza_exporter_collector_success', { server }).filter((s) => s.value !== 1).map((s) => s.labels.collector);
        throw new Error(`${server} down: failing collectors ${failing.join(', ')}`);
      });
    await up('good');
    // The 31 MB document is within every cap: it is read, and the same server's other collectors do not time out.
    await up('flat');
    // Read whole at least once (a poll that succeeded has a timestamp; on a busy machine one may pass its deadline).
    await waitFor('the flat document read', async () => (samples(await exporter.metrics(), 'wowza_exporter_last_poll_timestamp_seconds', { server: 'flat', collector: 'connectioncounts' }).length === 1 ? true : undefined));
    // The nested one is refused, saying which cap, and counted as the JSON failures are.
    const text = await exporter.metrics();
    expect(samples(text, 'wowza_exporter_collector_success', { server: 'nested', collector: 'connectioncounts' })[0]?.value).toBe(0);
    expect(exporter.output()).toMatch(/"server":"nested".*\/connectioncounts returned an unusable body: XML nested deeper than 32 levels/);
    expect(samples(text, 'wowza_exporter_api_requests_total', { server: 'nested', endpoint: '/connectioncounts', code: 'unparsable' })[0]?.value ?? 0).toBeGreaterThan(0);

    // SIGTERM as a flat document has just been sent whole: the exporter is reading it.
    await new Promise<void>((resolve) => (onFlatSent = resolve));
    const signalled = Date.now();
    const code = await exporter.stop('SIGTERM');
    const took = Date.now() - signalled;
    console.log(`hostile connectioncounts: SIGTERM during a parse ended the process in ${took} ms (exit ${code})`);
    expect(took).toBeLessThan(5000);
    expect(code).toBe(0);
  }, 120_000);
});
