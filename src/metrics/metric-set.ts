import type { MetricDef } from './definitions.js';
import { labelValueTooLong } from './label-bounds.js';

export type Labels = Readonly<Record<string, string>>;

/**
 * `labels` and one more label, last: a new object built a property at a time, not `{ ...labels, [name]: value }`.
 * V8 (Node 20) gives each object a spread makes and then adds to a hidden class of its own: the 14,000 viewer label
 * sets of 2,000 streams were 14,000 hidden classes, each with its own descriptors and enum cache (about 5 MB that
 * the connectioncounts join kept), and every `for...in` and keyed load over them (the series cap, the renderer)
 * missed V8's caches. Built this way, all sets of one key order share one.
 */
export function withLabel(labels: Labels, name: string, value: string): Labels {
  const out: Record<string, string> = {};
  for (const k in labels) out[k] = labels[k]!;
  out[name] = value;
  return out;
}

export interface Sample {
  readonly labels: Labels;
  readonly value: number;
  /** Written after the family's name: a histogram's `_bucket`, `_sum` and `_count`. */
  readonly suffix?: string;
  /**
   * A histogram bucket's bound, written as the last label: its series' labels are one object for every bucket, whose
   * bytes are written once and copied for the others.
   */
  readonly le?: string;
}

export interface Family {
  readonly def: MetricDef;
  readonly samples: Sample[];
}

/**
 * The values one poll produced. A collector fills a fresh set on every poll and the scheduler swaps it in
 * whole, so a series whose object vanished (or whose poll failed) simply is not there any more: no stale
 * values by construction, nothing to delete.
 */
/**
 * Why a value was left out: absent where needed, in a form not understood, below 0, NaN/Inf/outside 0-1, or a label
 * value from the server over MAX_LABEL_VALUE_BYTES (the field is then the label's name).
 */
export type DropReason = 'missing' | 'unreadable' | 'negative' | 'out_of_range' | 'too_long';

export class MetricSet {
  readonly families = new Map<string, Family>();
  /** Values left out of this set, by `field\0reason`: counted and logged by whoever ran the poll. */
  readonly drops = new Map<string, number>();
  /** Text that goes with this poll's series but never into them (a recorder's error message), for the status page. */
  readonly notes = new Map<string, string>();
  /** Values kept that the exporter does not know (a new recorder state), by field: counted and logged once each. */
  readonly unknowns = new Map<string, Map<string, number>>();

  /**
   * Adds a sample. An absent value adds nothing (an optional field); one no Wowza metric can hold (NaN, ±Inf, below
   * 0, a ratio outside 0-1) is left out and recorded as a drop of `field` (the API's field name; the metric's name
   * when not given), never exported as nonsense. A sample with a label value over MAX_LABEL_VALUE_BYTES is left out
   * and recorded as a `too_long` drop of that label, whichever collector made it: the last guard of every label value
   * a server sends (`server` is the configured name, not the server's).
   */
  add(def: MetricDef, labels: Labels, value: number | null | undefined, field?: string): void {
    if (value === null || value === undefined) return;
    const problem = !Number.isFinite(value) ? 'out_of_range' : value < 0 ? 'negative' : def.ratio && value > 1 ? 'out_of_range' : undefined;
    if (problem) {
      this.drop(field ?? def.name, problem);
      return;
    }
    for (const k in labels) {
      if (k !== 'server' && labelValueTooLong(labels[k]!)) {
        this.drop(k, 'too_long');
        return;
      }
    }
    let family = this.families.get(def.name);
    if (!family) {
      family = { def, samples: [] };
      this.families.set(def.name, family);
    }
    family.samples.push({ labels, value });
  }

  /** Like add, for a field the server's model requires and the exporter needs: its absence is a `missing` drop. */
  addRequired(def: MetricDef, labels: Labels, value: number | null | undefined, field: string): void {
    if (value === null || value === undefined) this.drop(field, 'missing');
    else this.add(def, labels, value, field);
  }

  /** Records `n` values left out: `field` (the API's name for it, or a label's) for `reason`. */
  drop(field: string, reason: DropReason, n = 1): void {
    const key = `${field}\u0000${reason}`;
    this.drops.set(key, (this.drops.get(key) ?? 0) + n);
  }

  /** Records a value of `field` the exporter does not know but keeps (it is exported as it came, bounded). */
  unknown(field: string, value: string): void {
    let values = this.unknowns.get(field);
    if (!values) this.unknowns.set(field, (values = new Map()));
    values.set(value, (values.get(value) ?? 0) + 1);
  }

  get size(): number {
    let n = 0;
    for (const f of this.families.values()) n += f.samples.length;
    return n;
  }

  /** Samples of one metric, for tests and tools. */
  samples(name: string): Sample[] {
    return this.families.get(name)?.samples ?? [];
  }
}
