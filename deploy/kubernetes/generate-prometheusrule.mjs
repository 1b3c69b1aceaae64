#!/usr/bin/env node
/**
 * Writes prometheusrule.yaml (a Prometheus Operator PrometheusRule) from ../prometheus/rules/wowza.rules.yml,
 * so that Kubernetes and plain Prometheus load the same rules. For another job selector or runbook location, use
 * ../prometheus/render-rules.mjs --prometheusrule.
 *
 *   node deploy/kubernetes/generate-prometheusrule.mjs          rewrite prometheusrule.yaml
 *   node deploy/kubernetes/generate-prometheusrule.mjs --check  exit 1 when it is out of date
 */
import { readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { prometheusRule, renderRules } from '../prometheus/render-rules.mjs';

const outPath = fileURLToPath(new URL('prometheusrule.yaml', import.meta.url));

const text = [
  '# Generated from deploy/prometheus/rules/wowza.rules.yml by generate-prometheusrule.mjs: do not edit.',
  '# Your Prometheus must select it (ruleSelector; kube-prometheus-stack: components/kube-prometheus-stack).',
  stringify(prometheusRule(renderRules()), { lineWidth: 0 }),
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
