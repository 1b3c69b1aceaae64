import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type Dashboard, type Panel, allPanels, loadDashboards, lokiPanels, panelQueries, substituteVariables, targetDatasourceType } from '../helpers/dashboards.js';
import { missingTool, promtoolPath } from '../helpers/prometheus.js';
import { promqlSyntaxErrors } from '../helpers/promql.js';

const files = loadDashboards();
const byUid = new Map(files.map((f) => [f.dashboard.uid, f.dashboard]));

/** Pinned: Grafana links, bookmarks and provisioning refer to dashboards by uid. */
const UIDS: Record<string, string> = {
  'wowza-fleet.json': 'wowza-fleet',
  'wowza-logs.json': 'wowza-logs',
  'wowza-server.json': 'wowza-server',
  'wowza-streams.json': 'wowza-streams',
};

/**
 * Unit ids of Grafana's value formats (packages/grafana-data/src/valueFormats/categories.ts) that these dashboards may
 * use, or a custom `suffix:`/`prefix:` one. Grafana puts the space between value and suffix itself: `suffix: lines/s`
 * would show two.
 */
const GRAFANA_UNIT = /^(?:none|short|percentunit|bytes|bps|reqps|s|dtdurations|dateTimeAsIso|bool_yes_no|(?:suffix|prefix):\S.*)$/;

const everyPanel = files.flatMap(({ dashboard }) => allPanels(dashboard).map((panel) => ({ dashboard, panel })));
const label = (d: Dashboard, p: Panel) => `${d.uid} / ${p.title}`;

/** The argument of each `fn(` call in `expr`, up to its matching parenthesis (quotes respected). */
function callArguments(expr: string, fn: RegExp): string[] {
  const out: string[] = [];
  for (const m of expr.matchAll(fn)) {
    let depth = 0;
    let quote: string | undefined;
    const start = m.index + m[0].length;
    for (let i = start - 1; i < expr.length; i++) {
      const c = expr[i]!;
      if (quote) {
        if (c === '\\') i++;
        else if (c === quote) quote = undefined;
      } else if (c === '"' || c === "'" || c === '`') quote = c;
      else if (c === '(') depth++;
      else if (c === ')' && --depth === 0) {
        out.push(expr.slice(start, i));
        break;
      }
    }
  }
  return out;
}

/** Metric selectors `name{...}` and bare metric names; quoted strings are skipped, not searched. */
function selectors(expr: string): Array<{ name: string; matchers: string }> {
  const out: Array<{ name: string; matchers: string }> = [];
  const token = /"(?:[^"\\]|\\.)*"|`[^`]*`|\b((?:wowza[_:]|up\b)[a-zA-Z0-9_:]*)(\{(?:[^}"]|"(?:[^"\\]|\\.)*")*\})?/g;
  for (const m of expr.matchAll(token)) if (m[1] !== undefined) out.push({ name: m[1], matchers: m[2] ?? '' });
  return out;
}

describe('dashboards/grafana.com/: the exports for grafana.com and Import', () => {
  it.each(files.map((f) => [f.file, f.dashboard] as const))('%s asks for its datasources and says what it needs', (file, dashboard) => {
    const exported = JSON.parse(readFileSync(new URL(`../../dashboards/grafana.com/${file}`, import.meta.url), 'utf8')) as Record<string, unknown> & {
      __inputs: Array<{ name: string; type: string; pluginId: string }>;
      __requires: Array<{ type: string; id: string }>;
      templating: { list: Array<{ type: string; query: string; current: { value?: string } }> };
      panels: unknown;
    };
    const dsVariables = dashboard.templating.list.filter((v) => v.type === 'datasource');
    expect(exported.__inputs.map((i) => i.pluginId).sort()).toEqual(dsVariables.map((v) => String(v.query)).sort());
    for (const v of exported.templating.list.filter((x) => x.type === 'datasource')) {
      const input = exported.__inputs.find((i) => i.pluginId === v.query)!;
      expect(v.current.value).toBe(`\${${input.name}}`);
    }
    expect(exported.__requires.filter((r) => r.type === 'grafana')).toHaveLength(1);
    for (const i of exported.__inputs) expect(exported.__requires).toContainEqual(expect.objectContaining({ type: 'datasource', id: i.pluginId }));
    // The same dashboard otherwise: panels, uid and title as provisioned.
    expect(exported.panels).toEqual(dashboard.panels);
    expect(exported.uid).toBe(dashboard.uid);
    expect(exported.id).toBeNull();
  });
});

describe('dashboards/', () => {
  it('is what dashboards/generate.mjs produces (edit the generator, then run it)', () => {
    const res = spawnSync(process.execPath, [fileURLToPath(new URL('../../dashboards/generate.mjs', import.meta.url)), '--check'], { encoding: 'utf8' });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
  });

  it('holds the four dashboards with stable, unique uids', () => {
    expect(Object.fromEntries(files.map((f) => [f.file, f.dashboard.uid]))).toEqual(UIDS);
    expect(byUid.size).toBe(files.length);
  });

  it.each(files.map((f) => [f.file, f.dashboard] as const))('%s has a title, tags, a datasource variable and job and server variables', (_file, d) => {
    expect(d.title).toMatch(/^Wowza \/ /);
    const vars = new Map(d.templating.list.map((v) => [v.name, v]));
    expect(vars.get('datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    expect(vars.get('job')).toMatchObject({ type: 'query' });
    expect(vars.get('server')).toMatchObject({ type: 'query' });
  });

  it('never hard-codes a datasource uid: every reference is a datasource variable of its dashboard', () => {
    for (const { dashboard } of files) {
      const dsVars = new Map(dashboard.templating.list.filter((v) => v.type === 'datasource').map((v) => [v.name, v.query]));
      const walk = (node: unknown, path: string) => {
        if (Array.isArray(node)) node.forEach((n, i) => walk(n, `${path}[${i}]`));
        else if (node && typeof node === 'object') {
          for (const [k, v] of Object.entries(node)) {
            if (k === 'datasource' && v && typeof v === 'object' && 'uid' in v) {
              const ref = v as { type?: string; uid?: string };
              if (ref.uid === '-- Grafana --') continue; // the built-in annotations source
              const name = /^\$\{(\w+)\}$/.exec(ref.uid ?? '')?.[1];
              expect(name, `${dashboard.uid}${path}.datasource`).toBeDefined();
              expect(dsVars.get(name!), `${dashboard.uid}${path}.datasource: ${ref.uid} is a ${ref.type} datasource variable`).toBe(ref.type);
            } else walk(v, `${path}.${k}`);
          }
        }
      };
      walk(dashboard, '');
    }
  });

  it.each(everyPanel.map(({ dashboard, panel }) => [label(dashboard, panel), dashboard, panel] as const))('%s: description, unit, datasource variable', (_l, _d, panel) => {
    expect((panel.description ?? '').trim().length).toBeGreaterThanOrEqual(20);
    // A logs panel shows text: it has no values to give a unit to.
    if (panel.type !== 'logs') expect(GRAFANA_UNIT.test(panel.fieldConfig?.defaults?.unit ?? ''), panel.fieldConfig?.defaults?.unit).toBe(true);
    expect(panel.datasource?.uid).toMatch(/^\$\{\w+\}$/);
    expect(panel.targets?.length).toBeGreaterThan(0);
    for (const t of panel.targets ?? []) expect(t.datasource?.uid).toBe(panel.datasource?.uid);
  });

  it('rates and increases use $__rate_interval (or $__range for totals over the picked range)', () => {
    let checked = 0;
    for (const { dashboard, panel } of everyPanel) {
      for (const t of panel.targets ?? []) {
        if (targetDatasourceType(panel, t) !== 'prometheus') continue;
        for (const arg of callArguments(t.expr ?? '', /\b(?:rate|irate|increase)\s*\(/g)) {
          const range = /\[([^\]]+)\]\s*$/.exec(arg)?.[1];
          expect(['$__rate_interval', '$__range'], `${label(dashboard, panel)}: ${t.expr}`).toContain(range);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('every Prometheus selector honours $job, and Wowza series also $server', () => {
    for (const { dashboard, panel } of everyPanel) {
      for (const t of panel.targets ?? []) {
        if (targetDatasourceType(panel, t) !== 'prometheus') continue;
        const sels = selectors(t.expr ?? '');
        expect(sels.length, t.expr).toBeGreaterThan(0);
        for (const s of sels) {
          expect(s.matchers, `${label(dashboard, panel)}: ${s.name} in ${t.expr}`).toContain('job=~"$job"');
          // Wowza Video schedules belong to the hosted account, not to a server.
          if (!s.name.startsWith('wowza_video_')) expect(s.matchers, `${label(dashboard, panel)}: ${s.name}`).toContain('server=~"$server"');
        }
      }
    }
  });

  it('links only to dashboards that exist', () => {
    const text = files.map((f) => JSON.stringify(f.dashboard)).join('\n');
    const targets = [...text.matchAll(/\/d\/([\w-]+)/g)].map((m) => m[1]);
    expect(targets.length).toBeGreaterThan(0);
    for (const uid of targets) expect(byUid.has(uid!), uid).toBe(true);
  });

  it('lays panels out on the 24-column grid without overlaps, with unique ids', () => {
    for (const { dashboard } of files) {
      const ids = new Set<number>();
      const cells = new Map<string, string>();
      const place = (p: Panel) => {
        expect(ids.has(p.id!), `${dashboard.uid}: duplicate id ${p.id}`).toBe(false);
        ids.add(p.id!);
        const g = p.gridPos!;
        expect(g.x + g.w, label(dashboard, p)).toBeLessThanOrEqual(24);
        for (let x = g.x; x < g.x + g.w; x++) {
          for (let y = g.y; y < g.y + g.h; y++) {
            const key = `${x},${y}`;
            expect(cells.get(key), `${label(dashboard, p)} overlaps`).toBeUndefined();
            cells.set(key, p.title ?? '');
          }
        }
      };
      for (const p of dashboard.panels) {
        place(p);
        // Collapsed rows keep their panels inside and show them below the row once opened.
        for (const inner of p.panels ?? []) {
          expect(ids.has(inner.id!)).toBe(false);
          ids.add(inner.id!);
        }
      }
    }
  });

  it('shows what the issue asks for on each dashboard', () => {
    const titles = (uid: string) => allPanels(byUid.get(uid)!).map((p) => p.title);
    expect(titles('wowza-fleet')).toEqual(
      expect.arrayContaining(['Server availability', 'CPU busy', 'Java heap used of maximum', 'Memory used', 'Disk used', 'Connections and limit', 'Licence expires in', 'Transcoder licences', 'Upcoming schedule actions']),
    );
    expect(titles('wowza-server')).toEqual(
      expect.arrayContaining(['CPU by mode', 'Java heap', 'Disk', 'Connections per virtual host', 'Connections per application', 'Connections by protocol', 'Bandwidth per virtual host', 'Bandwidth per application']),
    );
    expect(titles('wowza-streams')).toEqual(expect.arrayContaining(['Connected', 'Ingest bitrate per stream', 'Egress bitrate per stream', 'Viewers by protocol', 'Top $topn streams by viewers']));
    expect(titles('wowza-logs')).toEqual(expect.arrayContaining(['Lines by severity', 'Follower lag', 'Queue per sink', 'Log lines']));
  });

  it('joins the upcoming Wowza Video schedule actions with the schedule info', () => {
    const panel = allPanels(byUid.get('wowza-fleet')!).find((p) => p.title === 'Upcoming schedule actions')!;
    const exprs = panel.targets!.map((t) => t.expr);
    expect(exprs[0]).toMatch(/wowza_video_schedule_next_start_timestamp_seconds.*group_left.*wowza_video_schedule_info/);
    expect(exprs[1]).toMatch(/wowza_video_schedule_next_stop_timestamp_seconds.*group_left.*wowza_video_schedule_info/);
  });
});

describe('Loki panels', () => {
  const panels = lokiPanels(files);

  it('are listed and documented as needing Loki', () => {
    expect(panels.map((p) => `${p.dashboard} / ${p.panel}`)).toEqual(['wowza-logs / Log lines']);
    for (const p of panels) expect(p.description).toMatch(/^Needs Loki/);
  });

  it('select streams only by the labels the loki sink sets (server, log_type, severity)', () => {
    for (const { dashboard, panel } of everyPanel) {
      for (const t of panel.targets ?? []) {
        if (targetDatasourceType(panel, t) !== 'loki') continue;
        const streamSelector = /^\{([^}]*)\}/.exec(t.expr ?? '')?.[1] ?? '';
        const names = [...streamSelector.matchAll(/(\w+)\s*=~?/g)].map((m) => m[1]);
        expect(names.length).toBeGreaterThan(0);
        for (const n of names) expect(['server', 'log_type', 'severity'], label(dashboard, panel)).toContain(n);
      }
    }
  });
});

describe('test/helpers/dashboards.ts', () => {
  it('substitutes every variable and built-in', () => {
    const queries = panelQueries();
    expect(queries.length).toBeGreaterThan(40);
    for (const q of queries) expect(q.query, `${q.dashboard} / ${q.panel}`).not.toMatch(/\$|\[\[/);
    const rate = queries.find((q) => q.expr.includes('$__rate_interval'))!;
    expect(rate.query).toContain('[1m]');
    expect(panelQueries({ rateInterval: '30s', range: '2h', values: { server: 'wse-1' } }).find((q) => q.expr === rate.expr)!.query).toMatch(/server=~"wse-1".*\[30s\]/);
  });

  it('names an unknown variable instead of sending it to Prometheus', () => {
    expect(() => substituteVariables('up{job=~"$nope"}', byUid.get('wowza-fleet')!)).toThrow(/unknown variable \$nope/);
  });
});

describe('dashboard PromQL (parsed by @prometheus-io/lezer-promql, the grammar of Prometheus\' UI)', () => {
  it.each(panelQueries().map((q) => [`${q.dashboard} / ${q.panel}`, q.query] as const))('%s', (_where, query) => {
    expect(promqlSyntaxErrors(query), query).toEqual([]);
  });

  it('the parser finds errors where there are some', () => {
    expect(promqlSyntaxErrors('sum by (server (rate(x[5m]))')).not.toEqual([]);
    expect(promqlSyntaxErrors('rate(wowza_log_lines_total{severity=~"error"}[5m]) > 0.1 unless')).not.toEqual([]);
    expect(promqlSyntaxErrors('sum by (server) (rate(wowza_log_lines_total{severity=~"(?i)error"}[5m]))')).toEqual([]);
  });
});

describe.skipIf(missingTool('promtool', promtoolPath(), 'PromQL syntax check of the dashboard queries'))('dashboard PromQL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wowza-dashboards-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every query parses (checked by promtool as recording rules)', () => {
    const queries = panelQueries();
    const file = join(dir, 'queries.yml');
    writeFileSync(file, stringify({ groups: [{ name: 'dashboard-queries', rules: queries.map((q, i) => ({ record: `dashboard_query_${i}`, expr: q.query })) }] }));
    try {
      execFileSync(promtoolPath()!, ['check', 'rules', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      const out = `${e.stdout ?? ''}${e.stderr ?? ''}`;
      // promtool names the failing rule by its index: map it back to the panel.
      const described = out.replace(/dashboard_query_(\d+)/g, (m, i: string) => `${m} (${queries[Number(i)]!.dashboard} / ${queries[Number(i)]!.panel})`);
      throw new Error(`promtool rejected a dashboard query:\n${described}`);
    }
  });
});
