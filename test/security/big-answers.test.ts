import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';
import { probeHealth } from '../helpers/health-samples.js';

/**
 * Big valid answers (issue 47): the vhosts, applications and instances lists of a server each padded to 32 MB with
 * 150,000 extra items, answered at every 5 s poll. Parsed and validated on the thread that serves /metrics, one such
 * list held it for 1 to 6 s, and liveness probes (3 s timeout) failed in a row. Health must answer every probe, memory
 * stay bounded, and the lists over max_list_items be cut, counted and said once.
 */

const MiB = 1024 * 1024;
const DURATION_MS = Number(process.env.BIG_ANSWERS_MS ?? 120_000);

/** `{key: [real items]}` with 150,000 more objects in a field the exporter does not read, to about 32 MB. */
function padded(key: string, items: object[]): Buffer {
  const filler = Array.from({ length: 150_000 }, (_, i) => ({ id: `pad-${i}`, note: 'x'.repeat(178), n: i }));
  return Buffer.from(JSON.stringify({ serverName: '_defaultServer_', [key]: items.map((item) => ({ ...item, padding: filler })) }));
}

const stats = (extra: object = {}) => Buffer.from(JSON.stringify({ uptime: 100, bytesIn: 1, bytesOut: 2, bytesInRate: 3, bytesOutRate: 4, totalConnections: 5, connectionCount: { RTMP: 1 }, ...extra }));

function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

describe('32 MB valid lists at 5 s polls', () => {
  let wse: Server;
  let exporter: RunningExporter;
  let dir = '';
  const served = new Map<string, number>();

  beforeAll(async () => {
    const S = '/v2/servers/_defaultServer_';
    const A = `${S}/vhosts/_defaultVHost_/applications/live`;
    const answers = new Map<string, Buffer>([
      ['/v2/machine/monitoring/current', Buffer.from(JSON.stringify({ serverUptime: 100, cpuIdle: 90, cpuUser: 5, cpuSystem: 5, memoryFree: 1e9, memoryUsed: 1e9, heapFree: 1e8, heapUsed: 1e8, diskFree: 1e10, diskUsed: 1e10, connectionCount: 3 }))],
      [`${S}/status`, Buffer.from(JSON.stringify({ serverVersion: 'Wowza Streaming Engine 4.9.0 build20240101000000', serverMode: 'Running' }))],
      [`${S}/vhosts`, padded('vhosts', [{ id: '_defaultVHost_', href: `${S}/vhosts/_defaultVHost_` }])],
      [`${S}/vhosts/_defaultVHost_/monitoring/current`, stats()],
      [`${S}/vhosts/_defaultVHost_/applications`, padded('applications', [{ id: 'live', appType: 'Live', streamTargetsEnabled: false }])],
      [`${A}/monitoring/current`, stats()],
      [`${A}/instances`, padded('instanceList', [{ name: '_definst_', incomingStreams: [{ name: 'cam1', applicationInstance: '_definst_', sourceIp: 'rtmp://192.0.2.1', isConnected: true }], recorders: [] }])],
      [`${A}/instances/_definst_/incomingstreams/cam1/monitoring/current`, stats()],
    ]);
    for (const [path, body] of answers) if (body.length > 16 * MiB) expect(body.length, path).toBeGreaterThan(30 * MiB);
    wse = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0]!;
      served.set(path, (served.get(path) ?? 0) + 1);
      const body = answers.get(path);
      req.resume();
      if (!body) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ success: false, message: 'not found', code: '404', wowzaServer: '4.9.0' }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    await new Promise<void>((r) => wse.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(wse.address() as { port: number }).port}`;
    dir = mkdtempSync(join(tmpdir(), 'big-answers-'));
    writeFileSync(join(dir, 'password'), 'pw');
    const servers = JSON.stringify([{ name: 'big', url, username: 'admin', auth: 'basic', password_file: join(dir, 'password'), connectioncounts_url: 'off' }]);
    writeFileSync(join(dir, 'config.yaml'), `poll: {interval: 5s}\nservers: ${servers}\n`);
    exporter = await startExporterProcess(['--config', join(dir, 'config.yaml')]);
  });
  afterAll(async () => {
    await exporter?.stop();
    if (wse) {
      wse.closeAllConnections();
      await new Promise((r) => wse.close(r));
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("health answers every probe for 2 minutes, RSS stays under 400 MB, the lists are cut at 100,000 items and said once", { timeout: DURATION_MS + 180_000 }, async () => {
    const S = '/v2/servers/_defaultServer_';
    await waitFor('the instances list served', () => ((served.get(`${S}/vhosts/_defaultVHost_/applications/live/instances`) ?? 0) > 0 ? true : undefined), 60_000);
    const health = await probeHealth(exporter.url, { everyMs: 250, durationMs: DURATION_MS, timeoutMs: 3000 });
    const peak = peakRssMb(exporter.proc.pid!);
    const lists = [...served].filter(([p]) => /\/(vhosts|applications|instances)$/.test(p)).map(([p, n]) => `${p.split('/').pop()} x${n}`);
    console.log(`big answers: ${health.failed} of ${health.sent} health probes failed, slowest ${health.slowestMs.toFixed(0)} ms; peak RSS ${peak.toFixed(0)} MB; served ${lists.join(', ')}`);
    expect(health.failed, `${health.failed} of ${health.sent} health probes failed (3 s timeout)`).toBe(0);
    expect(peak).toBeLessThan(400);
    // The lists were asked for again and again while the probes ran (on a busy machine a 32 MB answer can miss its
    // deadline, and the walk then stops at the first list until the next one).
    expect(served.get(`${S}/vhosts`)).toBeGreaterThan(2);

    const text = await waitFor('the stream series and the cut lists counted', async () => {
      const t = await exporter.metrics();
      return samples(t, 'wowza_exporter_list_items_dropped_total').length >= 3 && samples(t, 'wowza_stream_uptime_seconds', { stream: 'cam1' }).length > 0 ? t : undefined;
    });
    expect(samples(text, 'wowza_up', { server: 'big' })[0]?.value).toBe(1);
    for (const s of samples(text, 'wowza_exporter_list_items_dropped_total')) expect(s.value % 50_000, JSON.stringify(s.labels)).toBe(0);
    // Said once per endpoint, not at every poll.
    const said = exporter.output().split('\n').filter((l) => l.includes('longer than max_list_items'));
    expect(said.length).toBe(3);
    // The padding is not exported: the exposition is the few series of one stream, not megabytes.
    expect(Buffer.byteLength(text)).toBeLessThan(1 * MiB);
  });
});
