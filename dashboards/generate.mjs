#!/usr/bin/env node
/**
 * Generates the Grafana dashboards in this folder (Grafana JSON model, Grafana 11 and later).
 *
 *   node dashboards/generate.mjs          rewrite the JSON files
 *   node dashboards/generate.mjs --check  exit 1 when a JSON file differs from what this script makes
 *
 * The JSON is committed so Grafana can import or provision it as is; this script keeps the four
 * dashboards consistent (datasource variable on every query, a unit and a description on every panel,
 * $__rate_interval in rates) instead of four hand-edited files drifting apart. Edit the modules, not the JSON:
 * lib/kit.mjs holds the shared panel kit (variables, panel builders, the grid layout), lib/<dashboard>.mjs one
 * dashboard each, so adding a row is a change to one file.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';
import { writeDashboardConfigMaps } from '../deploy/kubernetes/components/kube-prometheus-stack/generate-dashboards.mjs';

import { fleet } from './lib/fleet.mjs';
import { logsDashboard } from './lib/logs.mjs';
import { server } from './lib/server.mjs';
import { streams } from './lib/streams.mjs';

// ---------------------------------------------------------------------------------------------------

export const DASHBOARDS = {
  'wowza-fleet.json': fleet,
  'wowza-server.json': server,
  'wowza-streams.json': streams,
  'wowza-logs.json': logsDashboard,
};

const PLUGIN_NAMES = { prometheus: 'Prometheus', loki: 'Loki' };
const PANEL_NAMES = { timeseries: 'Time series', stat: 'Stat', table: 'Table', logs: 'Logs', gauge: 'Gauge', bargauge: 'Bar gauge', text: 'Text', 'state-timeline': 'State timeline', row: 'Row' };

/**
 * The dashboard as Grafana's "Export for sharing externally" writes it, for grafana.com and Import: `__inputs` make the
 * import ask for a Prometheus (and Loki) datasource, `__requires` say what it needs, and each datasource variable
 * starts at the datasource picked there.
 */
function forSharing(model) {
  const inputs = [];
  const variables = model.templating.list.map((v) => {
    if (v.type !== 'datasource') return v;
    const input = `DS_${v.query.toUpperCase()}`;
    inputs.push({ name: input, label: PLUGIN_NAMES[v.query] ?? v.query, description: v.label, type: 'datasource', pluginId: v.query, pluginName: PLUGIN_NAMES[v.query] ?? v.query });
    return { ...v, current: { selected: false, text: `\${${input}}`, value: `\${${input}}` } };
  });
  const panelTypes = new Set();
  const walk = (panels) => {
    for (const p of panels ?? []) {
      panelTypes.add(p.type);
      walk(p.panels);
    }
  };
  walk(model.panels);
  const requires = [
    { type: 'grafana', id: 'grafana', name: 'Grafana', version: '11.0.0' },
    ...inputs.map((i) => ({ type: 'datasource', id: i.pluginId, name: i.pluginName, version: '1.0.0' })),
    ...[...panelTypes].filter((t) => t !== 'row').sort().map((t) => ({ type: 'panel', id: t, name: PANEL_NAMES[t] ?? t, version: '' })),
  ];
  const { id: _id, ...rest } = model;
  return { __inputs: inputs, __elements: {}, __requires: requires, ...rest, id: null, templating: { list: variables } };
}

/** Every file the generator writes, path relative to this directory -> text. */
function outputs() {
  const out = new Map();
  for (const [file, model] of Object.entries(DASHBOARDS)) {
    out.set(file, `${JSON.stringify(model, null, 2)}\n`);
    out.set(`grafana.com/${file}`, `${JSON.stringify(forSharing(model), null, 2)}\n`);
  }
  return out;
}

function main(argv) {
  const check = argv.includes('--check');
  const stale = [];
  mkdirSync(fileURLToPath(new URL('grafana.com/', import.meta.url)), { recursive: true });
  for (const [file, text] of outputs()) {
    const path = fileURLToPath(new URL(file, import.meta.url));
    if (check) {
      let current = '';
      try {
        current = readFileSync(path, 'utf8');
      } catch {
        // missing counts as stale
      }
      if (current !== text) stale.push(file);
    } else {
      writeFileSync(path, text);
    }
  }
  if (stale.length > 0) {
    process.stderr.write(`dashboards out of date: ${stale.join(', ')}; run \`node dashboards/generate.mjs\`\n`);
    process.exit(1);
  }
  // The kube-prometheus-stack component ships them as ConfigMaps: kept in step here.
  if (!check) writeDashboardConfigMaps();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main(process.argv.slice(2));
