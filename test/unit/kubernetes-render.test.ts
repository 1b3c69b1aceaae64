import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { kubectlPath, missingTool } from '../helpers/prometheus.js';

const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));
const DASHBOARDS = fileURLToPath(new URL('../../dashboards/', import.meta.url));
const KUBECTL = kubectlPath();
/** `kubectl apply` keeps the object in an annotation, which the API server caps at 256 KiB. */
const ANNOTATION_LIMIT = 262_144;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kubernetes objects, read as they come
type Obj = Record<string, any>;

function generatorCheck(script: string): void {
  execFileSync(process.execPath, [fileURLToPath(new URL(`../../deploy/${script}`, import.meta.url)), '--check'], { stdio: 'pipe' });
}

/** kubectl's own kustomize, when new enough for components (kustomize v4+; Debian bookworm's 1.20 client is not). */
function kustomizeUsable(): boolean {
  if (missingTool('kubectl', KUBECTL, 'rendering the kustomizations')) return false;
  const out = execFileSync(KUBECTL!, ['version', '--client'], { encoding: 'utf8' });
  const major = Number(/Kustomize Version: v(\d+)/.exec(out)?.[1] ?? 0);
  if (major >= 4) return true;
  console.warn(`\n!!! SKIPPED: rendering the kustomizations — kubectl's kustomize is older than v4 (${out.replace(/\s+/g, ' ').trim()}) !!!\n`);
  return false;
}

describe('generated Kubernetes material is current', () => {
  it('the PrometheusRule holds the rules file', () => generatorCheck('kubernetes/generate-prometheusrule.mjs'));
  it('the dashboard ConfigMaps hold the dashboards', () => generatorCheck('kubernetes/components/kube-prometheus-stack/generate-dashboards.mjs'));
});

describe.skipIf(!kustomizeUsable())('kubectl kustomize of every kustomization', () => {
  const render = (dir: string): Obj[] =>
    parseAllDocuments(execFileSync(KUBECTL!, ['kustomize', `${DEPLOY}${dir}`], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })).map((d) => {
      expect(d.errors, dir).toEqual([]);
      return d.toJS() as Obj;
    });
  const base = render('kubernetes');
  const stack = render('kube-prometheus-stack');

  it.each([
    ['kubernetes', base],
    ['kube-prometheus-stack', stack],
  ])('%s renders well-formed objects, each small enough for kubectl apply', (_dir, objects) => {
    expect(objects.length).toBeGreaterThanOrEqual(5);
    for (const o of objects) {
      expect(o.apiVersion, JSON.stringify(o).slice(0, 100)).toMatch(/^([a-z0-9.-]+\/)?v\d+(alpha\d+|beta\d+)?$/);
      expect(o.kind).toMatch(/^[A-Z][A-Za-z]+$/);
      expect(o.metadata.name).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
      expect(o.metadata.namespace).toBe('monitoring');
      expect(Buffer.byteLength(JSON.stringify(o)), `${o.kind}/${o.metadata.name}`).toBeLessThan(ANNOTATION_LIMIT / 2);
    }
  });

  it('kube-prometheus-stack: the ServiceMonitor and the PrometheusRule carry the chart\'s default release label', () => {
    for (const kind of ['ServiceMonitor', 'PrometheusRule']) {
      const o = stack.find((x) => x.kind === kind)!;
      expect(o.metadata.labels.release, kind).toBe('kube-prometheus-stack');
    }
    // The plain base leaves the choice to the user.
    for (const o of base) expect(o.metadata.labels?.release).toBeUndefined();
  });

  it('kube-prometheus-stack: one ConfigMap per dashboard, labelled for the Grafana sidecar, holding nothing but its JSON', () => {
    const maps = stack.filter((o) => o.kind === 'ConfigMap' && o.metadata.labels?.grafana_dashboard === '1');
    const files = ['wowza-fleet.json', 'wowza-logs.json', 'wowza-server.json', 'wowza-streams.json'];
    expect(maps.flatMap((m) => Object.keys(m.data)).sort()).toEqual(files);
    for (const m of maps) {
      const [file] = Object.keys(m.data);
      expect(m.data[file!]).toBe(readFileSync(`${DASHBOARDS}${file}`, 'utf8'));
      expect(m.binaryData).toBeUndefined();
    }
  });
});
