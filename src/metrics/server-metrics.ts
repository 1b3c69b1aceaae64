import type { MetricDef } from './definitions.js';
import { MetricSet, type Family, type Labels, type Sample } from './metric-set.js';

/**
 * The exporter's own series of each server (wowza_up, request counts and latencies, collector success...), kept per
 * server and rendered with that server's Wowza series. In one prom-client registry they were rendered whole at every
 * scrape: at 1,000 servers 158,000 lines, about a second of the event loop per scrape. Here a scrape renders only the
 * servers whose values changed since the last one, with the exporter's own renderer, and the rest is reused.
 */

type Values<L extends string> = Readonly<Record<L, string>> & { readonly server: string };

/** Where a family keeps its series: per server, by label values. */
abstract class ServerFamily<L extends string, V> {
  protected readonly byServer = new Map<string, Map<string, { labels: Labels; v: V }>>();

  constructor(
    readonly def: MetricDef,
    private readonly labelNames: readonly L[],
    protected readonly owner: ServerMetrics,
  ) {
    owner.families.push(this as unknown as ServerFamily<string, unknown>);
  }

  /** The series of these labels, made when first asked for. */
  protected series(labels: Values<L>, make: () => V): { labels: Labels; v: V } {
    // A request of a removed server that ends after it (its limiter, its counters) writes nowhere.
    if (this.owner.isGone(labels.server)) return { labels, v: make() };
    let mine = this.byServer.get(labels.server);
    if (!mine) this.byServer.set(labels.server, (mine = new Map()));
    const key = this.key(labels);
    let s = mine.get(key);
    if (!s) {
      // Label order as declared, only the declared ones: the same series whatever object the caller passed.
      const own: Record<string, string> = {};
      for (const n of this.labelNames) own[n] = String(labels[n]);
      s = { labels: own, v: make() };
      mine.set(key, s);
    }
    this.owner.touch(labels.server);
    return s;
  }

  private key(labels: Values<L>): string {
    let k = '';
    for (const n of this.labelNames) k += `${labels[n]}\u0000`;
    return k;
  }

  remove(labels: Values<L>): void {
    if (this.byServer.get(labels.server)?.delete(this.key(labels))) this.owner.touch(labels.server);
  }

  removeServer(server: string): void {
    this.byServer.delete(server);
  }

  /** The samples of one server, added to `set`. */
  abstract addTo(set: MetricSet, server: string): void;
}

export class ServerGauge<L extends string> extends ServerFamily<L, { value: number }> {
  set(labels: Values<L>, value: number): void {
    this.series(labels, () => ({ value: 0 })).v.value = value;
  }

  addTo(set: MetricSet, server: string): void {
    const mine = this.byServer.get(server);
    if (!mine || mine.size === 0) return;
    const samples: Sample[] = [];
    for (const s of mine.values()) samples.push({ labels: s.labels, value: s.v.value });
    set.families.set(this.def.name, { def: this.def, samples } satisfies Family);
  }
}

export class ServerCounter<L extends string> extends ServerGauge<L> {
  inc(labels: Values<L>, by = 1): void {
    this.series(labels, () => ({ value: 0 })).v.value += by;
  }
}

interface Buckets {
  counts: Float64Array;
  sum: number;
  count: number;
}

export class ServerHistogram<L extends string> extends ServerFamily<L, Buckets> {
  /** `le` of each bucket, as the text format writes it. */
  private readonly les: string[];

  constructor(
    def: MetricDef,
    labelNames: readonly L[],
    owner: ServerMetrics,
    private readonly buckets: readonly number[],
  ) {
    super(def, labelNames, owner);
    this.les = [...buckets.map(String), '+Inf'];
  }

  observe(labels: Values<L>, value: number): void {
    const s = this.series(labels, () => ({ counts: new Float64Array(this.buckets.length), sum: 0, count: 0 })).v;
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  addTo(set: MetricSet, server: string): void {
    const mine = this.byServer.get(server);
    if (!mine || mine.size === 0) return;
    const samples: Sample[] = [];
    for (const s of mine.values()) {
      this.les.forEach((le, i) => samples.push({ labels: s.labels, le, value: i < s.v.counts.length ? s.v.counts[i]! : s.v.count, suffix: '_bucket' }));
      samples.push({ labels: s.labels, value: s.v.sum, suffix: '_sum' }, { labels: s.labels, value: s.v.count, suffix: '_count' });
    }
    set.families.set(this.def.name, { def: this.def, samples } satisfies Family);
  }
}

/** Removed servers remembered, so that their late writes are dropped. */
const MAX_GONE = 10_000;

/** Every per-server family of the exporter's own, and which servers changed since they were last rendered. */
export class ServerMetrics {
  readonly families: Array<ServerFamily<string, unknown>> = [];
  private readonly changed = new Set<string>();
  /** Servers removed: writes that come after their removal are dropped. */
  private readonly gone = new Set<string>();

  gauge<L extends string>(def: MetricDef, labelNames: readonly L[]): ServerGauge<L> {
    return new ServerGauge(def, labelNames, this);
  }

  counter<L extends string>(def: MetricDef, labelNames: readonly L[]): ServerCounter<L> {
    return new ServerCounter(def, labelNames, this);
  }

  histogram<L extends string>(def: MetricDef, labelNames: readonly L[], buckets: readonly number[]): ServerHistogram<L> {
    return new ServerHistogram(def, labelNames, this, buckets);
  }

  touch(server: string): void {
    this.changed.add(server);
  }

  /** The servers whose series changed since the last call (and forgets them). */
  takeChanged(): string[] {
    const out = [...this.changed];
    this.changed.clear();
    return out;
  }

  /** The series of one server, as a set the snapshot store renders. */
  setOf(server: string): MetricSet {
    const set = new MetricSet();
    for (const f of this.families) f.addTo(set, server);
    return set;
  }

  /** Forgets every series of a server (it is no longer polled); what is written of it later is dropped until `revive`. */
  removeServer(server: string): void {
    for (const f of this.families) f.removeServer(server);
    this.changed.delete(server);
    this.gone.add(server);
    // Bounded: a name forgotten here long ago at worst shows a late series again until its next removal.
    if (this.gone.size > MAX_GONE) this.gone.delete(this.gone.values().next().value!);
  }

  /** The server is polled (again): its series are kept. */
  revive(server: string): void {
    this.gone.delete(server);
  }

  isGone(server: string): boolean {
    return this.gone.has(server);
  }
}
