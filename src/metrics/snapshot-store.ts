import type { MetricSet } from './metric-set.js';
import { mergeRendered, renderSet, type RenderedSet } from './exposition.js';

/**
 * The latest successful poll of every (server, collector), already rendered. Scrapes read from here and
 * never wait on Wowza; a failed poll deletes its entry so no stale series survive.
 */
export class SnapshotStore {
  private readonly sets = new Map<string, RenderedSet>();
  private cached: string | undefined;

  put(server: string, collector: string, set: MetricSet): void {
    this.sets.set(`${server}\u0000${collector}`, renderSet(set));
    this.cached = undefined;
  }

  delete(server: string, collector: string): void {
    if (this.sets.delete(`${server}\u0000${collector}`)) this.cached = undefined;
  }

  /** The exposition text of all sets; rebuilt only after a change. */
  render(): string {
    this.cached ??= mergeRendered(this.sets.values());
    return this.cached;
  }
}
