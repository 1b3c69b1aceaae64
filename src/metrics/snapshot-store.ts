import { EncodedText } from './metrics-body.js';
import type { MetricSet } from './metric-set.js';
import { mergeRenderedChunks, renderedBytes, renderSet, renderSetInSlices, type RenderedSet } from './exposition.js';
import type { SeriesCap } from './series-cap.js';

/** The key of a server's own series among its sets (no collector has this name). */
const OWN = '\u0000own';

/**
 * The latest successful poll of every (server, collector), already rendered. Scrapes read from here and
 * never wait on Wowza; a failed poll deletes its entry so no stale series survive.
 */
export class SnapshotStore {
  private readonly sets = new Map<string, RenderedSet>();
  /** Per server, its labels from a target file, formatted. */
  private readonly labels = new Map<string, string>();
  private readonly generations = new Map<string, number>();
  /** Per (server, collector), the bytes a series took in its last render: the next one's buffer is sized by it. */
  private readonly bytesPerSeries = new Map<string, number>();
  private cached: EncodedText | undefined;
  /** The exposition being put together for a scrape; cleared by any change, so it is current while it is this. */
  private building: Promise<EncodedText> | undefined;

  /** `cap` bounds each server's series over all its sets: every set is stored through it. */
  constructor(private readonly cap?: SeriesCap) {}

  /**
   * Stores a poll's set once it is rendered. Rendering goes in slices, so scrapes in between are answered
   * from the sets before this one (older by one poll, never stale beyond it); a delete or a newer put of
   * the same collector meanwhile wins over this one.
   */
  async put(server: string, collector: string, set: MetricSet): Promise<void> {
    const key = `${server}\u0000${collector}`;
    const generation = this.bump(key);
    const fitted = this.cap ? this.cap.fit(server, collector, set) : set;
    const rendered = await renderSetInSlices(fitted, this.labels.get(server) ?? '', undefined, this.bytesPerSeries.get(key));
    if (this.generations.get(key) !== generation) return;
    if (fitted.size > 0) this.bytesPerSeries.set(key, renderedBytes(rendered) / fitted.size);
    this.sets.set(key, rendered);
    this.changed();
  }

  /**
   * Stores a server's own series (server-metrics.ts), rendered now: they are few per server, changed ones are
   * rendered at a scrape, and they are not the server's Wowza series, so the series cap does not count them.
   */
  putOwn(server: string, set: MetricSet): void {
    const key = `${server}\u0000${OWN}`;
    this.bump(key);
    if (set.size === 0) {
      if (this.sets.delete(key)) this.changed();
      return;
    }
    this.sets.set(key, renderSet(set, this.labels.get(server) ?? ''));
    this.changed();
  }

  delete(server: string, collector: string): void {
    const key = `${server}\u0000${collector}`;
    this.bump(key);
    this.cap?.forget(server, collector);
    this.bytesPerSeries.delete(key);
    if (this.sets.delete(key)) this.changed();
  }

  /** Labels (`k="v",...`) every series of `server` carries from now on; empty for none. */
  setServerLabels(server: string, formatted: string): void {
    if (formatted) this.labels.set(server, formatted);
    else this.labels.delete(server);
  }

  /** Removes every set of a server (it is no longer polled). */
  deleteServer(server: string): void {
    this.labels.delete(server);
    this.cap?.forgetServer(server);
    const prefix = `${server}\u0000`;
    for (const key of [...this.generations.keys()]) {
      if (!key.startsWith(prefix)) continue;
      this.bump(key);
      this.bytesPerSeries.delete(key);
      if (this.sets.delete(key)) this.changed();
    }
  }

  /** The sets changed: the exposition is built again at the next scrape (a build under way is not reused). */
  private changed(): void {
    this.cached = undefined;
    this.building = undefined;
  }

  private bump(key: string): number {
    const generation = (this.generations.get(key) ?? 0) + 1;
    this.generations.set(key, generation);
    return generation;
  }

  /**
   * The exposition of all sets as UTF-8 bytes (and their gzip, made on demand); rebuilt only after a
   * change, so a scrape between polls neither merges, encodes nor compresses megabytes of text.
   */
  encoded(): EncodedText {
    this.cached ??= EncodedText.fromChunks(mergeRenderedChunks(this.sets.values()));
    return this.cached;
  }

  /**
   * encoded(), put together a slice at a time (a scrape's way): at a fleet's size the merge copies hundreds of
   * thousands of pieces, hundreds of milliseconds on one go. Scrapes meanwhile share the one being made; a change
   * meanwhile makes the next scrape build again, and this one answers with what it had. For a `gzip` scrape the
   * deflate runs beside the building (see EncodedText.fromChunksInSlices).
   */
  encodedInSlices(gzip = false): Promise<EncodedText> {
    if (this.cached) return Promise.resolve(this.cached);
    if (this.building) return this.building;
    const building: Promise<EncodedText> = EncodedText.fromChunksInSlices(mergeRenderedChunks(this.sets.values()), gzip).then(
      (text) => {
        // Still the build in progress: nothing changed since it started, so it is the exposition until the next change.
        if (this.building === building) {
          this.building = undefined;
          this.cached = text;
        }
        return text;
      },
      (err: unknown) => {
        if (this.building === building) this.building = undefined;
        throw err;
      },
    );
    this.building = building;
    return building;
  }

  /** The exposition text of all sets. */
  render(): string {
    return this.encoded().toBuffer().toString('utf8');
  }
}
