import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, writeLogsConfig, type RunningExporter } from '../helpers/exporter-process.js';
import { startLokiReceiver, type LokiReceiver } from '../helpers/loki-receiver.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 5 acceptance, filters: with `filters.min_severity: warn` no INFO line reaches a sink, and
 * `server_filter.flags: [noDebug]` is sent to the server, which then never hands out a DEBUG line.
 * The exporter talks to the simulator through a loopback proxy that records every request URL.
 */

const ACCESS = 'wowzastreamingengine_access';
const ERROR = 'wowzastreamingengine_error';
const SEVERITIES = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
const PER_SEVERITY = 5;
/** line_count, distinct from the follower's 10-line head reads (which carry no filter). */
const LINE_COUNT = 500;

/** Forwards every request to `target` unchanged and remembers its URL. */
async function startRecordingProxy(target: string): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const to = new URL(target);
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const upstream = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('log filters: min_severity in the exporter, noDebug on the server', () => {
  let dir: string;
  let sim: Simulator;
  let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
  let receiver: LokiReceiver;
  let exporter: RunningExporter;
  let records: Array<{ labels: Readonly<Record<string, string>>; record: Record<string, unknown> }> = [];
  let metrics = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-logs-filters-'));
    sim = await startSimulator({ auth: 'basic', frozen: true, logs: { linesPerSecond: 0 } });
    proxy = await startRecordingProxy(sim.url);
    receiver = await startLokiReceiver();
    const config = writeLogsConfig(dir, { url: proxy.url, username: sim.username }, {
      follow_interval: '200ms',
      line_count: LINE_COUNT,
      // The files' own lines (startup, generated: every severity) go through the filters too.
      start_at: 'beginning',
      log_types: ['access', 'error'],
      server_filter: { flags: ['noDebug'] },
      filters: { min_severity: 'warn' },
      sinks: [{ type: 'loki', url: receiver.url }],
      batch: { max_wait: '200ms' },
    });
    exporter = await startExporterProcess(['--config', config], { WOWZA_PASSWORD: sim.password });

    for (const type of [ACCESS, ERROR]) {
      for (let i = 1; i <= PER_SEVERITY; i++) {
        sim.logs.append(
          type,
          SEVERITIES.map((severity) => ({ 'x-event': 'comment', 'x-category': 'server', 'x-severity': severity, 'x-comment': `filter-test ${severity} ${i}` })),
        );
      }
    }
    // Lines arrive in the order written: once the last ERROR of both logs is in, every earlier line
    // had its chance.
    const marked = () => receiver.lines.filter((l) => l.line.includes('filter-test'));
    await waitFor(
      'the last ERROR line of both logs delivered',
      () => (marked().filter((l) => l.line.includes(`filter-test ERROR ${PER_SEVERITY}`)).length === 2 ? true : undefined),
      20_000,
      50,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; output:\n${exporter.output().slice(-3000)}`);
    });
    metrics = await exporter.metrics();
    expect(await exporter.stop('SIGTERM')).toBe(0);
    records = receiver.lines.map((l) => ({ labels: l.labels, record: JSON.parse(l.line) as Record<string, unknown> }));
  }, 60_000);

  afterAll(async () => {
    await exporter?.stop('SIGKILL');
    await receiver?.close();
    await proxy?.close();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('ships every WARN and ERROR line, of both logs', () => {
    for (const severity of ['WARN', 'ERROR']) {
      const got = records.filter((r) => String(r.record['x-comment']).startsWith(`filter-test ${severity} `));
      expect(got).toHaveLength(2 * PER_SEVERITY);
      expect(new Set(got.map((r) => r.labels.log_type))).toEqual(new Set([ACCESS, ERROR]));
      for (const r of got) expect(r.labels.severity).toBe(severity.toLowerCase());
    }
  });

  it('no INFO or DEBUG line reaches the sink, from the test or from the server itself', () => {
    const below = records.filter((r) => ['INFO', 'DEBUG'].includes(String(r.record['x-severity'])));
    expect(below).toEqual([]);
    expect(new Set(records.map((r) => r.labels.severity))).toEqual(new Set(['warn', 'error']));
  });

  it('asks the server for noDebug on every log read, so DEBUG lines never leave it', () => {
    const reads = proxy.requests
      .map((u) => new URL(u, 'http://x'))
      .filter((u) => /\/logs\/wowzastreamingengine_(access|error)$/.test(u.pathname) && u.searchParams.get('lineCount') === String(LINE_COUNT));
    expect(reads.length).toBeGreaterThanOrEqual(2);
    for (const u of reads) expect(u.searchParams.get('filter'), u.href).toBe('noDebug');
    // The exporter counts every line it read, before its own filters: INFO lines were read (and
    // dropped by min_severity), DEBUG lines never arrived.
    for (const log_type of [ACCESS, ERROR]) {
      const read = (severity: string) => samples(metrics, 'wowza_log_lines_total', { log_type, severity }).reduce((n, s) => n + s.value, 0);
      expect(read('info'), `${log_type} info`).toBeGreaterThanOrEqual(PER_SEVERITY);
      expect(read('warn'), `${log_type} warn`).toBeGreaterThanOrEqual(PER_SEVERITY);
      expect(read('debug'), `${log_type} debug`).toBe(0);
    }
  });

  it('every push matched the Loki schema', () => {
    expect(receiver.rejections).toEqual([]);
    expect(receiver.pushes).toBeGreaterThan(0);
  });
});
