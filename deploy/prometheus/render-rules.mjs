#!/usr/bin/env node
/**
 * Renders the shipped rules (rules/wowza.rules.yml) for your Prometheus: the job selector of the exporter's own `up`
 * check, where the runbook links point, and, for the Prometheus Operator, a PrometheusRule with the labels your
 * Prometheus selects rules by (kube-prometheus-stack: `release: <helm release>`).
 *
 *   node deploy/prometheus/render-rules.mjs [--job-selector 'job="wse-exporter"'] [--runbook-base-url URL]
 *                                           [--prometheusrule [--label release=kube-prometheus-stack]...]
 *
 * Prints to stdout. The shipped files are this script's output at its defaults; a test keeps them so.
 */
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

export const RULES_PATH = fileURLToPath(new URL('rules/wowza.rules.yml', import.meta.url));
/** What the shipped rules select the exporter's scrape jobs with: the shipped jobs and ServiceMonitor match it. */
export const DEFAULT_JOB_SELECTOR = 'job=~".*wowza.*"';
export const DEFAULT_RUNBOOK_BASE_URL = 'https://github.com/wowza-exporter/wowza-exporter/blob/main/docs/runbooks.md';

/** A label matcher list as PromQL takes it inside braces: `job="x"`, `job=~"a|b",env="prod"`. */
function checkSelector(selector) {
  if (!/^\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(=|!=|=~|!~)\s*"(?:[^"\\]|\\.)*"(\s*,\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(=|!=|=~|!~)\s*"(?:[^"\\]|\\.)*")*\s*$/.test(selector)) {
    throw new Error(`--job-selector: "${selector}" is not a list of label matchers such as job="wowza" or job=~"wowza|wse"`);
  }
  return selector.trim();
}

/** The rules document with the given job selector and runbook base. */
export function renderRules({ jobSelector = DEFAULT_JOB_SELECTOR, runbookBaseUrl = DEFAULT_RUNBOOK_BASE_URL } = {}) {
  const doc = parse(readFileSync(RULES_PATH, 'utf8'));
  const selector = checkSelector(jobSelector);
  let selected = 0;
  for (const group of doc.groups) {
    for (const rule of group.rules) {
      if (rule.expr.includes(`{${DEFAULT_JOB_SELECTOR}}`)) {
        rule.expr = rule.expr.replaceAll(`{${DEFAULT_JOB_SELECTOR}}`, `{${selector}}`);
        selected++;
      }
      const url = rule.annotations?.runbook_url;
      if (url) rule.annotations.runbook_url = `${runbookBaseUrl.replace(/#.*$/, '')}#${url.split('#')[1]}`;
    }
  }
  // The rules file and this script must agree on where the selector is, or a custom one would silently not apply.
  if (selected === 0) throw new Error(`no rule in ${RULES_PATH} selects ${DEFAULT_JOB_SELECTOR}: update render-rules.mjs`);
  return doc;
}

/** A Prometheus Operator PrometheusRule holding `rules`, with extra metadata labels. */
export function prometheusRule(rules, labels = {}) {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: {
      name: 'wowza-exporter',
      labels: { 'app.kubernetes.io/name': 'wowza-exporter', 'app.kubernetes.io/component': 'exporter', ...labels },
    },
    spec: { groups: rules.groups },
  };
}

function main(argv) {
  const opts = {};
  const labels = {};
  let asResource = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--job-selector') opts.jobSelector = value();
    else if (arg === '--runbook-base-url') opts.runbookBaseUrl = value();
    else if (arg === '--prometheusrule') asResource = true;
    else if (arg === '--label') {
      const [k, ...v] = value().split('=');
      if (!k || v.length === 0) throw new Error('--label takes name=value');
      labels[k] = v.join('=');
    } else throw new Error(`unknown option ${arg} (see the comment at the top of render-rules.mjs)`);
  }
  const rules = renderRules(opts);
  return stringify(asResource ? prometheusRule(rules, labels) : rules, { lineWidth: 0 });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.stdout.write(main(process.argv.slice(2)));
  } catch (err) {
    process.stderr.write(`render-rules: ${err.message}\n`);
    process.exit(2);
  }
}
