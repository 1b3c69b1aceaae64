import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The Grafana dashboards in dashboards/ as data for tests: every panel (rows flattened, collapsed or
 * not) and every query with the dashboard variables replaced, ready to send to a real Prometheus.
 */

export const DASHBOARDS_DIR = fileURLToPath(new URL('../../dashboards/', import.meta.url));

export interface DatasourceRef {
  type?: string;
  uid?: string;
}

export interface Target {
  refId?: string;
  expr?: string;
  datasource?: DatasourceRef;
  instant?: boolean;
  range?: boolean;
  format?: string;
  legendFormat?: string;
}

export interface Panel {
  id?: number;
  type: string;
  title?: string;
  description?: string;
  datasource?: DatasourceRef;
  targets?: Target[];
  fieldConfig?: { defaults?: { unit?: string } & Record<string, unknown>; overrides?: unknown[] };
  gridPos?: { x: number; y: number; w: number; h: number };
  collapsed?: boolean;
  panels?: Panel[];
}

export interface Variable {
  name: string;
  type: string;
  query?: unknown;
  includeAll?: boolean;
  allValue?: string;
  current?: { value?: string | string[] };
}

export interface Dashboard {
  uid: string;
  title: string;
  templating: { list: Variable[] };
  panels: Panel[];
}

export interface DashboardFile {
  file: string;
  dashboard: Dashboard;
}

export interface PanelQuery {
  dashboard: string;
  panel: string;
  refId: string;
  /** The query as the dashboard holds it. */
  expr: string;
  /** The query with every variable replaced. */
  query: string;
  instant: boolean;
}

export interface SubstituteOptions {
  /** Values for dashboard variables (by name, without `$`); others get their `All` or current value. */
  values?: Record<string, string>;
  /** Replaces `$__rate_interval` and `$__interval` (default `1m`). */
  rateInterval?: string;
  /** Replaces `$__range` (default `1h`). */
  range?: string;
}

/** Every dashboard JSON file, parsed. Throws naming the file when one is not valid JSON. */
export function loadDashboards(dir = DASHBOARDS_DIR): DashboardFile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      const text = readFileSync(join(dir, file), 'utf8');
      try {
        return { file, dashboard: JSON.parse(text) as Dashboard };
      } catch (err) {
        throw new Error(`dashboards/${file}: invalid JSON: ${(err as Error).message}`);
      }
    });
}

/** Every panel of a dashboard, including the panels inside rows (collapsed rows hold theirs). Rows themselves are not listed. */
export function allPanels(dashboard: Dashboard): Panel[] {
  const out: Panel[] = [];
  const walk = (panels: Panel[]) => {
    for (const p of panels) {
      if (p.type === 'row') walk(p.panels ?? []);
      else out.push(p);
    }
  };
  walk(dashboard.panels);
  return out;
}

/** The datasource type a target queries (its own datasource, else the panel's). */
export function targetDatasourceType(panel: Panel, target: Target): string | undefined {
  return target.datasource?.type ?? panel.datasource?.type;
}

/** The value a variable takes when a test does not choose one: `All` (`.+`) where allowed, else its current value or `.+`. */
function defaultValue(v: Variable): string {
  if (v.includeAll) return v.allValue ?? '.+';
  const current = v.current?.value;
  if (typeof current === 'string') return current;
  if (v.type === 'textbox') return typeof v.query === 'string' ? v.query : '';
  return '.+';
}

/**
 * Replaces `$name`, `${name}`, `${name:format}` and `[[name]]` in `text` with variable values and the
 * Grafana built-ins used here. Throws naming the variable when one is unknown.
 */
export function substituteVariables(text: string, dashboard: Dashboard, options: SubstituteOptions = {}): string {
  const values: Record<string, string> = {
    __rate_interval: options.rateInterval ?? '1m',
    __interval: options.rateInterval ?? '1m',
    __range: options.range ?? '1h',
  };
  for (const v of dashboard.templating.list) values[v.name] = defaultValue(v);
  Object.assign(values, options.values);
  return text.replace(/\$\{(\w+)(?::[^}]*)?\}|\[\[(\w+)(?::[^\]]*)?\]\]|\$(\w+)/g, (match, a?: string, b?: string, c?: string) => {
    const name = (a ?? b ?? c)!;
    const value = values[name];
    if (value === undefined) throw new Error(`dashboard ${dashboard.uid}: unknown variable ${match}`);
    return value;
  });
}

/** Every Prometheus query of every dashboard, with variables replaced (see {@link SubstituteOptions}). */
export function panelQueries(options: SubstituteOptions = {}, files: DashboardFile[] = loadDashboards()): PanelQuery[] {
  const out: PanelQuery[] = [];
  for (const { dashboard } of files) {
    for (const panel of allPanels(dashboard)) {
      for (const target of panel.targets ?? []) {
        if (targetDatasourceType(panel, target) !== 'prometheus' || target.expr === undefined) continue;
        out.push({
          dashboard: dashboard.uid,
          panel: panel.title ?? '(untitled)',
          refId: target.refId ?? '',
          expr: target.expr,
          query: substituteVariables(target.expr, dashboard, options),
          instant: target.instant === true,
        });
      }
    }
  }
  return out;
}

/** The panels that query Loki (their descriptions say "Needs Loki"); a Prometheus-only setup leaves them empty. */
export function lokiPanels(files: DashboardFile[] = loadDashboards()): Array<{ dashboard: string; panel: string; description: string }> {
  const out: Array<{ dashboard: string; panel: string; description: string }> = [];
  for (const { dashboard } of files) {
    for (const panel of allPanels(dashboard)) {
      if ((panel.targets ?? []).some((t) => targetDatasourceType(panel, t) === 'loki')) {
        out.push({ dashboard: dashboard.uid, panel: panel.title ?? '(untitled)', description: panel.description ?? '' });
      }
    }
  }
  return out;
}
