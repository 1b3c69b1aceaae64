import { EncodedText } from '../http/metrics-body.js';
import type { MetricSet } from './metric-set.js';
import { mergeRenderedChunks, renderSet, type RenderedSet } from './exposition.js';

/**
 * The latest successful poll of every (server, collector), already rendered. Scrapes read from here and
 * never wait on Wowza; a failed poll deletes its entry so no stale series survive.
 */
export class SnapshotStore {
  private readonly sets = new Map<string, RenderedSet>();
  private cached: EncodedText | undefined;

  put(server: string, collector: string, set: MetricSet): void {
    this.sets.set(`${server}\u0000${collector}`, renderSet(set));
    this.cached = undefined;
  }

  delete(server: string, collector: string): void {
    if (this.sets.delete(`${server}\u0000${collector}`)) this.cached = undefined;
  }

  /**
   * The exposition of all sets as UTF-8 bytes (and their gzip, made on demand); rebuilt only after a
   * change, so a scrape between polls neither merges, encodes nor compresses megabytes of text.
   */
  encoded(): EncodedText {
    this.cached ??= EncodedText.fromChunks(mergeRenderedChunks(this.sets.values()));
    return this.cached;
  }

  /** The exposition text of all sets. */
  render(): string {
    return this.encoded().bytes.toString('utf8');
  }
}
