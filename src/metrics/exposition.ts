import type { MetricDef } from './definitions.js';
import type { Labels, MetricSet } from './metric-set.js';
import { runAtOnce, runInSlices } from '../base/time-slices.js';
import { Utf8Builder, Utf8Writer } from '../base/utf8-builder.js';

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

/**
 * Sample lines of one family, rendered once when a poll's set is stored and reused by every scrape: UTF-8 bytes
 * (views of one buffer per set), outside the JavaScript heap.
 */
export type RenderedSet = Map<string, { def: MetricDef; lines: Uint8Array }>;

export function renderSet(set: MetricSet, extraLabels = ''): RenderedSet {
  return runAtOnce(renderSteps(set, extraLabels, undefined));
}

/**
 * renderSet a slice at a time: a poll of 20,000 series takes milliseconds to render, and a scrape
 * arriving meanwhile is answered between two slices (from the sets stored before) instead of waiting.
 * `bytesPerSeries`, from the render of the same collector before, sizes the buffer to what the text will take.
 */
export function renderSetInSlices(set: MetricSet, extraLabels = '', sliceMs = 4, bytesPerSeries?: number): Promise<RenderedSet> {
  return runInSlices(renderSteps(set, extraLabels, bytesPerSeries), sliceMs);
}

/** The bytes of a rendered set's sample lines. */
export function renderedBytes(rendered: RenderedSet): number {
  let n = 0;
  for (const { lines } of rendered.values()) n += lines.length;
  return n;
}

/** Bytes a sample line takes on average (a stream's labels and a counter), to size the buffer once. */
const LINE_BYTES_GUESS = 160;
/** Room over the previous render's bytes per series: values and label values vary in length between polls. */
const SIZE_HINT_MARGIN = 1.1;
/** A label set's bytes are remembered (to copy, not format again) when its offset and length fit this packing. */
const RANGE_LENGTH = 0x10000;

/**
 * Renders the set straight into UTF-8, pausing (yielding) every few hundred samples so a caller may hand the
 * event loop back. `extraLabels` (`k="v",...`, already escaped) go on every sample: a server's labels from its
 * target file. Strings per line (or a string per family, joined from pieces) would be garbage by the next poll,
 * several times the size of the text: at 20,000 series they were most of what a poll allocated, and most of the
 * exporter's peak memory (bench/RESULTS.md).
 */
function* renderSteps(set: MetricSet, extraLabels: string, bytesPerSeries: number | undefined): Generator<void, RenderedSet> {
  // Sized from the previous render when there was one: a buffer of the text's size is kept as it is, where one of the
  // guess's size is copied into one that fits (a poll of 14,000 series allocated 2.2 MB and copied 1.6 MB of it).
  const expected = bytesPerSeries !== undefined && bytesPerSeries > 0 ? Math.ceil(set.size * bytesPerSeries * SIZE_HINT_MARGIN) : set.size * LINE_BYTES_GUESS;
  const out = new Utf8Writer(Math.max(4096, expected));
  const families: Array<[string, MetricDef, number, number]> = [];
  // Collectors share one label object between the families of an object (a stream's uptime, bytes, rates...):
  // its `{...}` is formatted once per set and copied after that.
  const written = new Map<Labels, number>();
  // A histogram series' labels without the closing brace, for its buckets (each adds its `le`).
  const bucketLabels = new Map<Labels, Buffer>();
  let count = 0;
  for (const [name, family] of set.families) {
    const start = out.pos;
    for (const s of family.samples) {
      writeAscii(out, name);
      if (s.suffix !== undefined) writeAscii(out, s.suffix);
      if (s.le !== undefined) {
        writeBucketLabels(out, s.labels, s.le, extraLabels, bucketLabels);
        out.byte(SPACE);
        writeValue(out, s.value);
        out.byte(NEWLINE);
        if (++count % 512 === 0) yield;
        continue;
      }
      const range = written.get(s.labels);
      if (range !== undefined) {
        const from = Math.floor(range / RANGE_LENGTH);
        const length = range % RANGE_LENGTH;
        out.ensure(length);
        out.buf.copyWithin(out.pos, from, from + length);
        out.pos += length;
      } else {
        const from = out.pos;
        writeLabels(out, s.labels, extraLabels);
        if (out.pos - from < RANGE_LENGTH) written.set(s.labels, from * RANGE_LENGTH + (out.pos - from));
      }

      out.byte(SPACE);
      writeValue(out, s.value);
      out.byte(NEWLINE);
      if (++count % 512 === 0) yield;
    }
    families.push([name, family.def, start, out.pos]);
  }
  const bytes = out.pos < out.buf.length * 0.75 ? out.take() : out.buf.subarray(0, out.pos);
  const rendered: RenderedSet = new Map();
  for (const [name, def, start, end] of families) rendered.set(name, { def, lines: bytes.subarray(start, end) });
  return rendered;
}

const SPACE = 0x20;
const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Writes `text`, byte by byte while it is ASCII (names, label keys, numbers), the rest in one encoder call. */
function writeAscii(out: Utf8Writer, text: string): void {
  out.ensure(text.length);
  const buf = out.buf;
  let p = out.pos;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) {
      out.pos = p;
      out.string(text.slice(i));
      return;
    }
    buf[p++] = c;
  }
  out.pos = p;
}

/** A label value as the text format escapes it (`\\`, `\"`, `\n`), in UTF-8. */
function writeLabelValue(out: Utf8Writer, v: string): void {
  out.ensure(v.length * 2);
  const buf = out.buf;
  let p = out.pos;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c >= 0x80) {
      out.pos = p;
      out.string(escapeLabel(v.slice(i)));
      return;
    }
    if (c === BACKSLASH || c === QUOTE) {
      buf[p++] = BACKSLASH;
      buf[p++] = c;
    } else if (c === NEWLINE) {
      buf[p++] = BACKSLASH;
      buf[p++] = 0x6e; // n
    } else buf[p++] = c;
  }
  out.pos = p;
}

/** `{extra,k="v",...}`, or nothing when there are no labels; an empty value is the same as no label. */
function writeLabels(out: Utf8Writer, labels: Labels, extra: string): void {
  let any = extra !== '';
  if (any) {
    out.byte(0x7b); // {
    writeAscii(out, extra);
  }
  for (const k in labels) {
    const v = labels[k]!;
    if (v === '') continue;
    out.byte(any ? 0x2c : 0x7b); // , or {
    any = true;
    writeAscii(out, k);
    out.byte(0x3d); // =
    out.byte(QUOTE);
    writeLabelValue(out, v);
    out.byte(QUOTE);
  }
  if (any) out.byte(0x7d); // }
}

/** Where a bucket's labels are formatted before they are kept (rendering is synchronous: one is enough). */
const SCRATCH = new Utf8Writer(4096);

/**
 * `{labels,le="<bound>"}` of a histogram bucket: the series' labels are formatted once (into `cache`, without their
 * closing brace) and copied for each of its buckets.
 */
function writeBucketLabels(out: Utf8Writer, labels: Labels, le: string, extra: string, cache: Map<Labels, Buffer>): void {
  let open = cache.get(labels);
  if (!open) {
    const scratch = SCRATCH;
    scratch.pos = 0;
    writeLabels(scratch, labels, extra);
    const closed = scratch.pos > 0;
    open = Buffer.from(scratch.buf.subarray(0, closed ? scratch.pos - 1 : 0));
    cache.set(labels, open);
  }
  out.ensure(open.length);
  open.copy(out.buf, out.pos);
  out.pos += open.length;
  writeAscii(out, open.length > 0 ? ',le="' : '{le="');
  writeAscii(out, le);
  writeAscii(out, '"}');
}

/** The value as formatValue gives it; a safe integer digit by digit, without a string. */
function writeValue(out: Utf8Writer, v: number): void {
  if (!Number.isSafeInteger(v)) {
    writeAscii(out, formatValue(v));
    return;
  }
  out.ensure(17);
  const buf = out.buf;
  if (v < 0) {
    buf[out.pos++] = 0x2d; // -
    v = -v;
  }
  let digits = 1;
  for (let t = v; t >= 10; t = Math.floor(t / 10)) digits++;
  let p = out.pos + digits;
  out.pos = p;
  do {
    buf[--p] = 0x30 + (v % 10);
    v = Math.floor(v / 10);
  } while (v > 0);
}

/**
 * Merges rendered sets into one exposition: each family's HELP and TYPE once, followed by its samples from
 * every set (several servers and collectors feed the same family).
 */
export function mergeRendered(sets: Iterable<RenderedSet>): string {
  const out = new Utf8Builder();
  for (const chunk of mergeRenderedChunks(sets)) out.add(chunk);
  return out.toBuffer().toString('utf8');
}

/** The pieces of `mergeRendered`'s text in order (HELP and TYPE as text, samples as bytes), for writing them out without joining them first. */
export function mergeRenderedChunks(sets: Iterable<RenderedSet>): Array<string | Uint8Array> {
  const byName = new Map<string, { def: MetricDef; parts: Uint8Array[] }>();
  for (const set of sets) {
    for (const [name, { def, lines }] of set) {
      let entry = byName.get(name);
      if (!entry) byName.set(name, (entry = { def, parts: [] }));
      entry.parts.push(lines);
    }
  }
  const chunks: Array<string | Uint8Array> = [];
  for (const [name, { def, parts }] of [...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    chunks.push(`# HELP ${name} ${escapeHelp(def.help)}\n# TYPE ${name} ${def.type}\n`, ...parts);
  }
  return chunks;
}
