import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { allPanels, loadDashboards, targetDatasourceType } from '../helpers/dashboards.js';
import { RULES_FILE, RULE_TESTS_DIR, missingTool, promtoolPath } from '../helpers/prometheus.js';
import { promqlSyntaxErrors } from '../helpers/promql.js';

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleFile {
  groups: Array<{ name: string; rules: Rule[] }>;
}
interface AlertTest {
  eval_time: string;
  alertname: string;
  exp_alerts?: unknown[];
}
interface TestFile {
  rule_files: string[];
  tests: Array<{ name?: string; alert_rule_test?: AlertTest[] }>;
}

const rules = parse(readFileSync(RULES_FILE, 'utf8')) as RuleFile;
const allRules = rules.groups.flatMap((g) => g.rules);
const alerts = allRules.filter((r) => r.alert !== undefined);
const records = allRules.filter((r) => r.record !== undefined);
const testFiles = readdirSync(RULE_TESTS_DIR)
  .filter((f) => f.endsWith('.yml'))
  .map((f) => join(RULE_TESTS_DIR, f));

/** The alerts the issue asks for; renaming one breaks users' silences and routes. */
const REQUIRED_ALERTS = [
  'WowzaExporterDown',
  'WowzaServerDown',
  'WowzaCollectorFailing',
  'WowzaHighCPU',
  'WowzaJavaHeapHigh',
  'WowzaDiskFillingUp',
  'WowzaDiskFull',
  'WowzaConnectionsNearLimit',
  'WowzaLicenseExpiringSoon',
  'WowzaTranscoderLicensesExhausted',
  'WowzaExpectedStreamDown',
  'WowzaRecordingStopped',
  'WowzaRecorderError',
  'WowzaStreamTargetDown',
  'WowzaErrorLogSpike',
  'WowzaLogForwardingFailing',
  'WowzaLogForwardQueueGrowing',
  'WowzaExporterConfigReloadFailed',
  'WowzaLogLinesLostAtRotation',
  'WowzaLogDeliveryStalled',
];

describe('alerting rules', () => {
  it('has every alert the issue asks for, each name once', () => {
    const names = alerts.map((a) => a.alert);
    expect([...names].sort()).toEqual([...REQUIRED_ALERTS].sort());
  });

  it.each(alerts.map((a) => [a.alert!, a] as const))('%s has a severity, a for duration, a summary, a description and a runbook_url', (_name, alert) => {
    expect(['critical', 'warning', 'info']).toContain(alert.labels?.severity);
    expect(alert.for).toMatch(/^\d+[smh]$/);
    for (const key of ['summary', 'description']) {
      expect(alert.annotations?.[key], key).toMatch(/\S{3,}/);
    }
    // Alertmanager, Grafana and PagerDuty templates render `runbook_url` as a link; free text under `runbook` shows nothing.
    expect(alert.annotations?.runbook, 'runbook').toBeUndefined();
    expect(alert.annotations?.runbook_url).toMatch(/^https:\/\/\S+\/docs\/runbooks\.md#[a-z0-9-]+$/);
  });

  it('links every alert to a section of docs/runbooks.md that exists', () => {
    const doc = readFileSync(new URL('../../docs/runbooks.md', import.meta.url), 'utf8');
    // GitHub's anchors: the heading lowercased, spaces to hyphens, punctuation dropped.
    const anchors = new Set([...doc.matchAll(/^#{2,3} (.+)$/gm)].map((m) => m[1]!.trim().toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
    for (const a of alerts) {
      const anchor = a.annotations!.runbook_url!.split('#')[1]!;
      expect(anchors, `${a.alert} links #${anchor}`).toContain(anchor);
      const section = doc.slice(doc.indexOf(`## ${a.alert}\n`));
      for (const part of ['**What it means.**', '**Check first.**', '```promql']) expect(section.split(/\n## /)[0], `${a.alert}: ${part}`).toContain(part);
    }
  });

  it('raises nothing about a stream that ends unless the configuration expects it', () => {
    // Recordings and stream targets use the connected state only to stay quiet when the stream itself ended.
    const streamAlerts = alerts.filter((a) => /wowza_stream_connected/.test(a.expr) && !/recorder|target/.test(a.expr));
    expect(streamAlerts.map((a) => a.alert)).toEqual(['WowzaExpectedStreamDown']);
    expect(streamAlerts[0]!.expr).toMatch(/^\s*\(\s*wowza_stream_expected == 1/);
  });

  it('never aggregates away the target label, nor names the label the application instance had before 0.2', () => {
    // `instance` is Prometheus' target (the exporter); the application instance is `app_instance`.
    for (const r of allRules) expect(r.expr, r.alert ?? r.record).not.toMatch(/without\s*\([^)]*\binstance\b|exported_instance/);
  });

  it('applies the limit and licence alerts only where a limit or licence exists', () => {
    const byName = new Map(alerts.map((a) => [a.alert!, a.expr]));
    const ratio = records.find((r) => r.record === 'wowza:server_connections_limit_used:ratio')!;
    expect(ratio.expr).toContain('wowza_server_connections_limit > 0');
    expect(byName.get('WowzaConnectionsNearLimit')).toContain('wowza:server_connections_limit_used:ratio');
    expect(byName.get('WowzaTranscoderLicensesExhausted')).toContain('wowza_server_transcoder_licenses > 0');
    expect(byName.get('WowzaJavaHeapHigh')).toContain('wowza:java_heap_used:ratio');
    expect(records.find((r) => r.record === 'wowza:java_heap_used:ratio')!.expr).toContain('wowza_server_java_heap_max_bytes');
    expect(byName.get('WowzaDiskFillingUp')).toContain('predict_linear(');
  });
});

describe('PromQL of the rules (parsed by @prometheus-io/lezer-promql, with or without promtool)', () => {
  it.each(allRules.map((r) => [r.alert ?? r.record!, r.expr] as const))('%s', (_name, expr) => {
    expect(promqlSyntaxErrors(expr), expr).toEqual([]);
  });
});

describe('render-rules.mjs', () => {
  it('renders the shipped rules at its defaults, and another job selector and runbook location when asked', async () => {
    // @ts-expect-error -- a plain ES module of the deploy material, without types
    const { renderRules, prometheusRule } = (await import('../../deploy/prometheus/render-rules.mjs')) as {
      renderRules: (o?: { jobSelector?: string; runbookBaseUrl?: string }) => RuleFile;
      prometheusRule: (r: RuleFile, labels?: Record<string, string>) => { metadata: { labels: Record<string, string> }; spec: RuleFile };
    };
    expect(renderRules()).toEqual(rules);
    const custom = renderRules({ jobSelector: 'job="wse-metrics"', runbookBaseUrl: 'https://wiki.example.com/wowza' });
    const down = custom.groups.flatMap((g) => g.rules).find((r) => r.alert === 'WowzaExporterDown')!;
    expect(down.expr).toBe('up{job="wse-metrics"} == 0');
    for (const r of custom.groups.flatMap((g) => g.rules)) {
      if (r.alert) expect(r.annotations!.runbook_url).toBe(`https://wiki.example.com/wowza#${r.alert.toLowerCase()}`);
    }
    expect(() => renderRules({ jobSelector: 'wowza' })).toThrow(/not a list of label matchers/);
    expect(prometheusRule(custom, { release: 'prom' }).metadata.labels.release).toBe('prom');
  });
});

describe('recording rules', () => {
  it('are named level:metric:operations', () => {
    for (const r of records) expect(r.record).toMatch(/^wowza:[a-z0-9_]+:[a-z0-9_]+$/);
  });

  it('record every wowza:* series the dashboards use', () => {
    const recorded = new Set(records.map((r) => r.record));
    const used = new Set<string>();
    for (const { dashboard } of loadDashboards()) {
      for (const panel of allPanels(dashboard)) {
        for (const t of panel.targets ?? []) {
          if (targetDatasourceType(panel, t) !== 'prometheus') continue;
          for (const m of (t.expr ?? '').matchAll(/\bwowza:[a-z0-9_]+:[a-z0-9_]+/g)) used.add(m[0]);
        }
      }
    }
    expect(used.size).toBeGreaterThan(0);
    for (const name of used) expect(recorded, `${name} is used by a dashboard`).toContain(name);
  });
});

describe('promtool unit tests of the rules', () => {
  const parsed = testFiles.map((f) => ({ file: f, doc: parse(readFileSync(f, 'utf8')) as TestFile }));

  it('load the rules file', () => {
    for (const { file, doc } of parsed) {
      expect(doc.rule_files.map((r) => fileURLToPath(new URL(r, `file://${file}`))), file).toContain(RULES_FILE);
    }
  });

  it('make every alert fire in at least one case and stay silent in at least one', () => {
    const fires = new Set<string>();
    const silent = new Set<string>();
    for (const { doc } of parsed) {
      for (const t of doc.tests) {
        for (const a of t.alert_rule_test ?? []) ((a.exp_alerts ?? []).length > 0 ? fires : silent).add(a.alertname);
      }
    }
    for (const name of REQUIRED_ALERTS) {
      expect(fires, `${name} fires somewhere`).toContain(name);
      expect(silent, `${name} stays silent somewhere`).toContain(name);
    }
  });
});

describe.skipIf(missingTool('promtool', promtoolPath(), 'promtool check/test rules'))('promtool', () => {
  const promtool = promtoolPath()!;
  const run = (args: string[]) => {
    try {
      return execFileSync(promtool, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      throw new Error(`promtool ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    }
  };

  it('check rules accepts the rules file', () => {
    expect(run(['check', 'rules', RULES_FILE])).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('test rules passes every unit test', () => {
    const out = run(['test', 'rules', ...testFiles]);
    expect(out).not.toMatch(/FAILED/);
    expect(out.match(/SUCCESS/g)?.length).toBe(testFiles.length);
  });
});

describe('docs/dashboards-and-alerts.md', () => {
  const doc = readFileSync(new URL('../../docs/dashboards-and-alerts.md', import.meta.url), 'utf8');

  it('explains every alert under a heading of its own', () => {
    for (const name of REQUIRED_ALERTS) expect(doc, name).toMatch(new RegExp(`^#{2,4} .*\\b${name}\\b`, 'm'));
  });
});
