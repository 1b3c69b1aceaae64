import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { startVideoSimulator, videoSchedule, type VideoSimulator } from '@wowza-exporter/simulator/video';
import { signHs256 } from '../../src/webhooks/jwt.js';
import { runCli, samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { brokenLinks } from '../helpers/markdown-links.js';
import { waitFor } from '../helpers/ports.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README_FILE = join(ROOT, 'README.md');
const README = readFileSync(README_FILE, 'utf8');
/** The metric tables: the collectors' in the README, the rest (the exporter's own, logs, webhooks, video) in docs/metrics.md. */
const METRICS_FILE = join(ROOT, 'docs', 'metrics.md');
const TABLES = [README_FILE, METRICS_FILE];
const DOCS = readdirSync(join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => join(ROOT, 'docs', f));
const V = '_defaultVHost_';
const SECRET = 'docs-drift-webhook-secret';
const VIDEO_TOKEN = 'eyJhbGciOiJIUzI1NiJ9.docs-drift-video.sig';
/**
 * The docs' convention for a metric that a healthy setup does not show: its name is followed by "(only when ...)"
 * or "(only after ...)" stating the condition, as in `wowza_webhook_rejected_total{reason}` (only after a rejection);
 * "(only in a probe's answer)" for what /probe alone shows.
 */
const CONDITIONAL = /^\s*\(only\s+(?:when|after|in)\b/;

/** A metric name as the docs write it, expanded: `a_{x,y}_b{labels}` is a_x_b and a_y_b; the trailing braces are labels. */
function expandName(token: string): string[] {
  const m = /^([a-z_:][a-z0-9_:]*(?:\{[a-z0-9_,]+\}[a-z0-9_]+)*)(\{[\s\S]*\})?$/.exec(token);
  if (!m) return [];
  let names = [''];
  for (const part of m[1]!.split(/(\{[a-z0-9_,]+\})/)) {
    const options = part.startsWith('{') ? part.slice(1, -1).split(',') : [part];
    names = names.flatMap((n) => options.map((o) => n + o));
  }
  return names;
}

interface DocumentedMetric {
  name: string;
  file: string;
  conditional: boolean;
}

/**
 * Every metric name of our own (wowza_...) in a Markdown text: backticked in prose, with whether "(only ...)" follows
 * it, and bare in code blocks (queries, commented JSON).
 */
function documentedMetrics(text: string, file: string): DocumentedMetric[] {
  const out: DocumentedMetric[] = [];
  const prose = text.replace(/```[\s\S]*?```/g, '');
  for (const m of prose.matchAll(/`(wowza_[a-z0-9_{},]*(?:\{[^`]*\})?)`/g)) {
    const after = prose.slice(m.index + m[0].length, m.index + m[0].length + 80);
    for (const name of expandName(m[1]!)) out.push({ name, file, conditional: CONDITIONAL.test(after) });
  }
  for (const block of text.matchAll(/```[\s\S]*?```/g)) {
    for (const m of block[0].matchAll(/(?<![\w:.-])wowza_[a-z0-9_]*[a-z0-9](?![\w:])/g)) out.push({ name: m[0], file, conditional: false });
  }
  return out;
}

/**
 * Families on /metrics: `declared` has a # TYPE line, `shown` also has a sample (histogram and summary series map to
 * their family through the # TYPE lines).
 */
function families(text: string): { declared: Set<string>; shown: Set<string> } {
  const declared = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) declared.set(m[1]!, m[2]!);
  const shown = new Set<string>();
  for (const m of text.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/gm)) {
    const name = m[1]!;
    const family = declared.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
    if (declared.has(family)) shown.add(family);
  }
  return { declared: new Set(declared.keys()), shown };
}

describe('docs that cannot drift', () => {
  let sim: Simulator;
  let video: VideoSimulator;
  let exporter: RunningExporter;
  let dir: string;

  beforeAll(async () => {
    sim = await startSimulator({ streams: 1, logs: { linesPerSecond: 20 } });
    sim.topology.addApp(V, 'rec', { running: true });
    sim.topology.addStream(V, 'rec', 'hall', { recording: true });
    sim.topology.addApp(V, 'push', { streamTargetsEnabled: true, running: true });
    sim.topology.addStream(V, 'push', 'main');
    video = await startVideoSimulator({ token: VIDEO_TOKEN, schedules: [videoSchedule('sch1', { name: 'Morning show', action_type: 'start_stop' })] });
    dir = mkdtempSync(join(tmpdir(), 'wowza-docs-drift-'));
    writeFileSync(join(dir, 'webhook-secret'), SECRET, { mode: 0o600 });
    writeFileSync(join(dir, 'video-token'), VIDEO_TOKEN, { mode: 0o600 });
    writeFileSync(
      join(dir, 'config.yaml'),
      stringify({
        servers: [{ name: 'wse-1', url: sim.url, username: sim.username, connectioncounts_url: sim.countsUrl, expected_streams: ['rec/hall', 'rec/gone'] }],
        poll: { interval: '1s', max_requests_per_second: 0 },
        collectors: { stream_target: { interval: '1s' } },
        logs: {
          positions_file: join(dir, 'positions.json'),
          dead_letter_file: join(dir, 'dead-letter.ndjson'),
          start_at: 'beginning',
          follow_interval: '500ms',
          sinks: [{ type: 'file', path: join(dir, 'lines.ndjson') }],
        },
        webhooks: { enabled: true, secret_file: join(dir, 'webhook-secret') },
        video: { url: video.url, token_file: join(dir, 'video-token'), interval: '1s' },
      }),
    );
    exporter = await startExporterProcess(['--config', join(dir, 'config.yaml')], { WOWZA_PASSWORD: sim.password });
  }, 60_000);
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
    await video?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('every metric family on /metrics is in the README or docs/metrics.md, and every metric the README and docs name is on /metrics or marked "(only ...)"', async () => {
    const now = Math.floor(Date.now() / 1000);
    const event = { id: 'docs-drift-1', timestamp: Date.now(), name: 'stream.started', context: { vhost: V, app: 'rec', appInstance: '_definst_', stream: 'hall' }, data: {} };
    const delivery = await fetch(`${exporter.url}/webhooks/wowza`, {
      method: 'POST',
      body: JSON.stringify(event),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${signHs256({ iat: now, exp: now + 60, iss: 'docs-drift' }, SECRET)}` },
    });
    expect(delivery.status).toBe(202);

    // Every part has shown up: each collector polled, the follower shipped lines, the event, a recorder, a schedule.
    const text = await waitFor(
      'every collector, the log follower, the webhook event, a recorder and a schedule on /metrics',
      async () => {
        const t = await exporter.metrics();
        const polled = new Set(samples(t, 'wowza_exporter_collector_success').map((s) => s.labels.collector));
        const all = ['machine', 'status', 'vhost', 'application', 'instance', 'stream', 'recorder', 'stream_target', 'connectioncounts', 'video'].every((c) => polled.has(c));
        const shown = ['wowza_log_forwarded_lines_total', 'wowza_webhook_events_total', 'wowza_stream_recorder_recording', 'wowza_stream_target_active', 'wowza_video_schedule_info', 'wowza_stream_expected'].every(
          (n) => samples(t, n).length > 0,
        );
        return all && shown ? t : undefined;
      },
      50_000,
      250,
    );
    const { declared, shown: onMetrics } = families(text);

    const tables = TABLES.map((f) => readFileSync(f, 'utf8'));
    const inTables = new Set(tables.flatMap((t, i) => documentedMetrics(t, TABLES[i]!.slice(ROOT.length))).map((d) => d.name));
    // prom-client's standard process and Node.js metrics, which docs/metrics.md names as `process_*` / `nodejs_*`.
    expect(tables.join('\n')).toContain('`process_*` / `nodejs_*`');
    const undocumented = [...declared].filter((n) => !/^(process|nodejs)_/.test(n) && !inTables.has(n)).sort();
    expect(undocumented, 'on /metrics but not in README.md or docs/metrics.md').toEqual([]);

    const documented = [README_FILE, ...DOCS].flatMap((f) => documentedMetrics(readFileSync(f, 'utf8'), f.slice(ROOT.length)));
    const conditional = new Set(documented.filter((d) => d.conditional).map((d) => d.name));
    const absent = [...new Set(documented.filter((d) => !onMetrics.has(d.name) && !conditional.has(d.name)).map((d) => `${d.file}: ${d.name}`))].sort();
    expect(absent, 'named in the docs, not on /metrics, and not marked "(only ...)"').toEqual([]);

    // A query that groups one metric by labels it does not have returns one meaningless series: check `by (...)`.
    const wrongLabels: string[] = [];
    let queries = 0;
    for (const f of [README_FILE, ...DOCS]) {
      for (const block of readFileSync(f, 'utf8').matchAll(/```[\s\S]*?```/g)) {
        for (const q of block[0].matchAll(/\bby \(([^)]*)\)\s*\(([^\n]*)/g)) {
          const names = [...new Set(q[2]!.match(/(?<![\w:])wowza_[a-z0-9_]+(?![\w:])/g) ?? [])];
          if (names.length !== 1 || !onMetrics.has(names[0]!)) continue;
          queries++;
          const labels = new Set(samples(text, names[0]!).flatMap((s) => Object.keys(s.labels)));
          for (const l of q[1]!.split(',').map((x) => x.trim())) if (l !== '' && !labels.has(l)) wrongLabels.push(`${f.slice(ROOT.length)}: ${names[0]} has no label ${l}`);
        }
      }
    }
    expect(queries, 'queries checked').toBeGreaterThan(5);
    expect(wrongLabels).toEqual([]);
  }, 60_000);

  it('every flag of serve --help is in the README\'s Configuration table, and every flag of the table is in --help', async () => {
    const help = await runCli(['serve', '--help']);
    expect(help.code).toBe(0);
    const helpFlags = new Set([...help.stdout.matchAll(/^\s+(?:-\w, )?(--[a-z][\w.-]*)/gm)].map((m) => m[1]!));
    expect(helpFlags.size).toBeGreaterThan(20);

    const heading = '\n## Configuration\n';
    const start = README.indexOf(heading);
    expect(start, 'a "## Configuration" section in README.md').toBeGreaterThan(0);
    // The section runs to the next heading of the same or a higher level.
    const rest = README.slice(start + heading.length);
    const end = rest.search(/^#{1,2} /m);
    const section = end === -1 ? rest : rest.slice(0, end);
    const rows = section.split('\n').filter((l) => l.startsWith('| `--'));
    const tableFlags = new Set(rows.flatMap((r) => [...r.split('|')[1]!.matchAll(/`(--[a-z][\w.<>-]*)/g)].map((m) => m[1]!)));
    // `--collector.<name>` / `--no-collector.<name>` stands for one flag per collector.
    const covered = (flag: string) => tableFlags.has(flag) || (flag.startsWith('--collector.') && tableFlags.has('--collector.<name>'));
    expect([...helpFlags].filter((f) => !covered(f)).sort(), 'in serve --help, not in the README table').toEqual([]);
    const notInHelp = [...tableFlags].filter((f) => !f.includes('<') && !helpFlags.has(f)).sort();
    expect(notInHelp, 'in the README table, not in serve --help').toEqual([]);
  });

  it('every relative link in README.md, CONTRIBUTING.md and docs/*.md resolves to a file, and its #anchor to a heading', () => {
    const { links, broken } = brokenLinks(ROOT, [README_FILE, join(ROOT, 'CONTRIBUTING.md'), ...DOCS]);
    expect(links, 'relative links checked').toBeGreaterThan(10);
    expect(broken).toEqual([]);
  });
});
