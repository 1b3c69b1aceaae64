import type { MetricDef } from './definitions.js';

export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  readonly labels: Labels;
  readonly value: number;
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
export class MetricSet {
  readonly families = new Map<string, Family>();

  add(def: MetricDef, labels: Labels, value: number | null | undefined): void {
    if (value === null || value === undefined || Number.isNaN(value)) return;
    let family = this.families.get(def.name);
    if (!family) {
      family = { def, samples: [] };
      this.families.set(def.name, family);
    }
    family.samples.push({ labels, value });
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
