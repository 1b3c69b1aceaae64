#!/usr/bin/env node
/**
 * Writes prometheusrule.yaml (a Prometheus Operator PrometheusRule) from ../prometheus/rules/wowza.rules.yml,
 * so that Kubernetes and plain Prometheus load the same rules.
 *
 *   node deploy/kubernetes/generate-prometheusrule.mjs          rewrite prometheusrule.yaml
 *   node deploy/kubernetes/generate-prometheusrule.mjs --check  exit 1 when it is out of date
 */
import { readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

const rulesPath = fileURLToPath(new URL('../prometheus/rules/wowza.rules.yml', import.meta.url));
const outPath = fileURLToPath(new URL('prometheusrule.yaml', import.meta.url));

const rules = parse(readFileSync(rulesPath, 'utf8'));
const resource = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PrometheusRule',
  metadata: {
    name: 'wowza-exporter',
    labels: { 'app.kubernetes.io/name': 'wowza-exporter', 'app.kubernetes.io/component': 'exporter' },
  },
  spec: { groups: rules.groups },
};
const text = [
  '# Generated from deploy/prometheus/rules/wowza.rules.yml by generate-prometheusrule.mjs: do not edit.',
  '# Your Prometheus must select it (ruleSelector, often a `release` label).',
  stringify(resource, { lineWidth: 0 }),
].join('\n');

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(outPath, 'utf8');
  } catch {
    // missing counts as out of date
  }
  if (current !== text) {
    process.stderr.write('deploy/kubernetes/prometheusrule.yaml is out of date: run `node deploy/kubernetes/generate-prometheusrule.mjs`\n');
    process.exit(1);
  }
} else {
  writeFileSync(outPath, text);
}
