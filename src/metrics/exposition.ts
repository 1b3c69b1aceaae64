import type { MetricDef } from './definitions.js';
import type { Labels, MetricSet } from './metric-set.js';

const NEEDS_ESCAPE = /[\\\n"]/;

export function escapeLabel(v: string): string {
  // Almost no label value needs escaping: one scan instead of three replaces for those.
  if (!NEEDS_ESCAPE.test(v)) return v;
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function formatLabels(labels: Labels, extra = ''): string {
  let out = extra;
  for (const k in labels) {
    const v = labels[k]!;
    if (v === '') continue; // an empty label value is the same as no label
    out += (out ? ',' : '') + k + '="' + escapeLabel(v) + '"';
  }
  return out ? '{' + out + '}' : '';
}

/** Sample lines of one family, rendered once when a poll's set is stored and reused by every scrape. */
export type RenderedSet = Map<string, { def: MetricDef; lines: string }>;

export function renderSet(set: MetricSet, extraLabels = ''): RenderedSet {
  const steps = renderSteps(set, extraLabels);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * renderSet a slice at a time: a poll of 20,000 series takes tens of milliseconds to render, and a scrape
 * arriving meanwhile is answered between two slices (from the sets stored before) instead of waiting.
 */
export async function renderSetInSlices(set: MetricSet, extraLabels = '', sliceMs = 4): Promise<RenderedSet> {
  const steps = renderSteps(set, extraLabels);
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - sliceStart >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
}

/**
 * Renders the set, pausing (yielding) every few hundred samples so a caller may hand the event loop back.
 * `extraLabels` (`k="v",...`, already escaped) go on every sample: a server's labels from its target file.
 */
function* renderSteps(set: MetricSet, extraLabels: string): Generator<void, RenderedSet> {
  const out: RenderedSet = new Map();
  // Collectors share one label object between the families of an object (a stream's uptime, bytes,
  // rates...): each is formatted once per set, not once per sample.
  const formatted = new Map<Labels, string>();
  let count = 0;
  for (const [name, family] of set.families) {
    // Pieces joined once give one flat string; `+=` per line would build a tree of thousands of small
    // strings that lives until the next poll and costs the garbage collector more than the rendering.
    const parts: string[] = [];
    for (const s of family.samples) {
      let labels = formatted.get(s.labels);
      if (labels === undefined) {
        labels = formatLabels(s.labels, extraLabels);
        formatted.set(s.labels, labels);
      }
      parts.push(name, labels, ' ', formatValue(s.value), '\n');
      if (++count % 512 === 0) yield;
    }
    out.set(name, { def: family.def, lines: parts.join('') });
  }
  return out;
}

/**
 * Merges rendered sets into one exposition: each family's HELP and TYPE once, followed by its samples from
 * every set (several servers and collectors feed the same family).
 */
export function mergeRendered(sets: Iterable<RenderedSet>): string {
  return mergeRenderedChunks(sets).join('');
}

/** The pieces of `mergeRendered`'s text in order, for writing them out without joining them first. */
export function mergeRenderedChunks(sets: Iterable<RenderedSet>): string[] {
  const byName = new Map<string, { def: MetricDef; parts: string[] }>();
  for (const set of sets) {
    for (const [name, { def, lines }] of set) {
      let entry = byName.get(name);
      if (!entry) byName.set(name, (entry = { def, parts: [] }));
      entry.parts.push(lines);
    }
  }
  const chunks: string[] = [];
  for (const [name, { def, parts }] of [...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    chunks.push(`# HELP ${name} ${escapeHelp(def.help)}\n# TYPE ${name} ${def.type}\n`, ...parts);
  }
  return chunks;
}
