#!/usr/bin/env node
/**
 * Writes grafana-dashboards.yaml: one ConfigMap per dashboard of dashboards/, labelled for the Grafana sidecar of
 * kube-prometheus-stack (`grafana_dashboard: "1"`), holding nothing but the dashboard's JSON.
 *
 * dashboards/generate.mjs rewrites it with the dashboards.
 *   node deploy/kubernetes/components/kube-prometheus-stack/generate-dashboards.mjs          rewrite it
 *   node deploy/kubernetes/components/kube-prometheus-stack/generate-dashboards.mjs --check  exit 1 when out of date
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

const dashboardsDir = fileURLToPath(new URL('../../../../dashboards/', import.meta.url));
const outPath = fileURLToPath(new URL('grafana-dashboards.yaml', import.meta.url));

/** The file's text: one ConfigMap per dashboards/*.json as it is on disk now. */
export function dashboardConfigMaps() {
  const files = readdirSync(dashboardsDir).filter((f) => f.endsWith('.json')).sort();
  const documents = files.map((file) =>
    stringify(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          // wowza-fleet.json -> wowza-dashboard-fleet
          name: `wowza-dashboard-${file.replace(/^wowza-/, '').replace(/\.json$/, '')}`,
          labels: { grafana_dashboard: '1', 'app.kubernetes.io/name': 'wowza-exporter', 'app.kubernetes.io/component': 'dashboard' },
          // Read only when the chart sets sidecar.dashboards.folderAnnotation to grafana_folder.
          annotations: { grafana_folder: 'Wowza' },
        },
        data: { [file]: readFileSync(`${dashboardsDir}/${file}`, 'utf8') },
      },
      { lineWidth: 0 },
    ),
  );
  return ['# Generated from dashboards/*.json by generate-dashboards.mjs: do not edit.', documents.join('---\n')].join('\n');
}

/** Rewrites the file (dashboards/generate.mjs calls this after writing the dashboards). */
export function writeDashboardConfigMaps() {
  writeFileSync(outPath, dashboardConfigMaps());
}

function main() {
  const text = dashboardConfigMaps();
  if (!process.argv.includes('--check')) return writeFileSync(outPath, text);
  let current = '';
  try {
    current = readFileSync(outPath, 'utf8');
  } catch {
    // missing counts as out of date
  }
  if (current !== text) {
    process.stderr.write('deploy/kubernetes/components/kube-prometheus-stack/grafana-dashboards.yaml is out of date: run `node dashboards/generate.mjs`\n');
    process.exit(1);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
