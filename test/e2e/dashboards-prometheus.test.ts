import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { startVideoSimulator, videoSchedule, type VideoSimulator } from '@wowza-exporter/simulator/video';
import { lokiPanels, panelQueries } from '../helpers/dashboards.js';
import { startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { missingTool, prometheusPath, RULES_FILE } from '../helpers/prometheus.js';
import { startPrometheus, type PrometheusServer } from '../helpers/prometheus-server.js';

const PROMETHEUS = prometheusPath();

describe.skipIf(missingTool('prometheus', PROMETHEUS, 'running every dashboard query against a real Prometheus'))('every dashboard panel query returns data', () => {
  let sim: Simulator;
  let video: VideoSimulator;
  let exporter: RunningExporter;
  let prom: PrometheusServer;

  beforeAll(async () => {
    // A connection limit and log shipping, so the limit and log panels have something to show.
    sim = await startSimulator({ auth: 'basic', maxConnections: 1000, maxIncomingStreams: 100, logs: { linesPerSecond: 50 } });
    // An application with a stream target, for the stream target panels (the default one records a stream already).
    sim.topology.addApp('_defaultVHost_', 'push', { streamTargetsEnabled: true, running: true });
    sim.topology.addStream('_defaultVHost_', 'push', 'main');
    // The Wowza Video simulator, whose list holds summaries only (as the real one's): one upcoming schedule.
    video = await startVideoSimulator({ token: 'video-token', schedules: [videoSchedule('s1', { name: 'Evening' })] });
    const dir = mkdtempSync(join(tmpdir(), 'wowza-dash-'));
    writeFileSync(join(dir, 'password'), sim.password, { mode: 0o600 });
    writeFileSync(join(dir, 'token'), 'video-token', { mode: 0o600 });
    writeFileSync(
      join(dir, 'config.yaml'),
      stringify({
        servers: [{ name: 'wse-1', url: sim.url, username: sim.username, password_file: join(dir, 'password') }],
        poll: { interval: '1s', timeout: '800ms' },
        video: { url: video.url, token_file: join(dir, 'token'), interval: '2s' },
        logs: {
          positions_file: join(dir, 'positions.json'),
          dead_letter_file: join(dir, 'dead.ndjson'),
          start_at: 'beginning',
          follow_interval: '500ms',
          sinks: [{ type: 'file', path: join(dir, 'out.ndjson') }],
        },
      }),
    );
    exporter = await startExporterProcess(['--config', join(dir, 'config.yaml')]);
    prom = await startPrometheus(PROMETHEUS!, { targets: [exporter.url.replace('http://', '')], ruleFiles: [RULES_FILE] });
  });
  afterAll(async () => {
    await prom?.stop();
    await exporter?.stop();
    await sim?.close();
    await video?.close();
  });

  it('runs every Prometheus query of every dashboard with its variables substituted', async () => {
    const queries = panelQueries({ values: { job: 'wowza', server: 'wse-1' } }).filter((q) => !lokiPanels().some((l) => l.dashboard === q.dashboard && l.panel === q.panel));
    expect(queries.length).toBeGreaterThan(20);
    // Rates need two scrapes inside their window; give Prometheus a few seconds of history first.
    await prom.waitForQuery('count(rate(wowza_exporter_api_requests_total[1m]) > 0)', undefined, 60_000);
    let empty: string[] = [];
    const deadline = Date.now() + 45_000;
    while (Date.now() < deadline) {
      empty = [];
      for (const q of queries) {
        const r = await prom.query(q.query);
        if (r.length === 0) empty.push(`${q.dashboard} / ${q.panel} [${q.refId}]: ${q.query}`);
      }
      if (empty.length === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(empty).toEqual([]);
  }, 90_000);

  it('documents which panels need Loki', () => {
    for (const p of lokiPanels()) expect(p.description).toMatch(/Loki/);
  });
});
