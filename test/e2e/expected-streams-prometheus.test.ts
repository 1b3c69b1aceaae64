import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
// @ts-expect-error -- a plain ES module of the deploy material, without types
import { renderRules } from '../../deploy/prometheus/render-rules.mjs';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { missingTool, prometheusPath } from '../helpers/prometheus.js';
import { startPrometheus, type PrometheusServer } from '../helpers/prometheus-server.js';
import { waitFor } from '../helpers/ports.js';

const PROMETHEUS = prometheusPath();
const V = '_defaultVHost_';

interface RuleDoc {
  groups: Array<{ rules: Array<{ alert?: string; for?: string }> }>;
}

/**
 * Issue 30: a stream that ends normally raises nothing; a stream the configuration names in expected_streams fires
 * an alert when it is gone, and its wowza_stream_expected series stays. The shipped rules, with `for:` shortened,
 * loaded by a real Prometheus that scrapes the exporter.
 */
describe.skipIf(missingTool('prometheus', PROMETHEUS, 'the expected-streams alert with a real Prometheus'))('expected streams and WowzaExpectedStreamDown', () => {
  let sim: Simulator;
  let exporter: RunningExporter;
  let prom: PrometheusServer;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-expected-'));
    sim = await startSimulator({ frozen: true, streams: 1 });
    sim.topology.addStream(V, 'live', 'cam1');
    sim.topology.addStream(V, 'live', 'cam2');
    writeFileSync(
      join(dir, 'config.yaml'),
      stringify({ servers: [{ name: 'wse-1', url: sim.url, username: sim.username, expected_streams: ['live/cam2'] }], poll: { interval: '1s', max_requests_per_second: 0 } }),
    );
    exporter = await startExporterProcess(['--config', join(dir, 'config.yaml')], { WOWZA_PASSWORD: sim.password });
    const rules = renderRules() as RuleDoc;
    for (const g of rules.groups) for (const r of g.rules) if (r.alert) r.for = '3s';
    writeFileSync(join(dir, 'rules.yml'), stringify(rules));
    prom = await startPrometheus(PROMETHEUS!, { targets: [exporter.url.replace('http://', '')], ruleFiles: [join(dir, 'rules.yml')] });
  }, 60_000);
  afterAll(async () => {
    await prom?.stop();
    await exporter?.stop();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('labels the application instance app_instance, never instance', async () => {
    const text = await exporter.metrics();
    const wowza = text.split('\n').filter((l) => l.startsWith('wowza_') && !l.startsWith('wowza_exporter_'));
    expect(wowza.length).toBeGreaterThan(10);
    for (const line of wowza) expect(line, line).not.toMatch(/[{,]instance="/);
    expect(samples(text, 'wowza_stream_connected', { stream: 'cam1' })[0]!.labels.app_instance).toBe('_definst_');
    expect(samples(text, 'wowza_instance_incoming_streams')[0]!.labels.app_instance).toBe('_definst_');
    // Prometheus keeps its own `instance` (the exporter) and no `exported_instance` appears.
    const [s] = await prom.waitForQuery('wowza_stream_connected{stream="cam1"}');
    expect(s!.metric.instance).toBe(exporter.url.replace('http://', ''));
    expect(s!.metric.app_instance).toBe('_definst_');
    expect(s!.metric).not.toHaveProperty('exported_instance');
  });

  it('removing a stream that is not expected fires nothing; removing the expected one fires for it, and its series stays', async () => {
    await prom.waitForQuery('wowza_stream_expected{server="wse-1",application="live",app_instance="_definst_",stream="cam2"} == 1');
    await prom.waitForQuery('wowza_stream_connected{application="live",stream=~"cam1|cam2",rendition=""} == 1', (r) => r.length === 2);
    await prom.waitForQuery('ALERTS', (r) => r.length === 0 || r.every((a) => a.metric.alertname !== 'WowzaExpectedStreamDown'));

    sim.topology.removeStream(V, 'live', 'cam1');
    // Prometheus has seen cam1 go (its series went stale), then cam2 goes too.
    await prom.waitForQuery('absent(wowza_stream_connected{application="live",stream="cam1",rendition=""})');
    sim.topology.removeStream(V, 'live', 'cam2');
    const firing = await prom.waitForQuery('ALERTS{alertname="WowzaExpectedStreamDown",alertstate="firing"}', undefined, 60_000);
    expect(firing.map((a) => a.metric.stream)).toEqual(['cam2']);
    expect(firing[0]!.metric).toMatchObject({ server: 'wse-1', application: 'live', app_instance: '_definst_', severity: 'critical' });

    // cam1 was gone longer than cam2 when cam2's alert fired: nothing ever pended or fired about it.
    expect(await prom.query('max_over_time(ALERTS{application="live",stream="cam1"}[10m])')).toEqual([]);
    expect(samples(await exporter.metrics(), 'wowza_stream_expected', { stream: 'cam2' })).toEqual([
      { labels: { server: 'wse-1', application: 'live', app_instance: '_definst_', stream: 'cam2' }, value: 1 },
    ]);

    // It resolves when the stream is back.
    sim.topology.addStream(V, 'live', 'cam2');
    await waitFor('the alert resolved', async () => ((await prom.query('ALERTS{alertname="WowzaExpectedStreamDown"}')).length === 0 ? true : undefined), 60_000, 250);
  }, 120_000);
});
