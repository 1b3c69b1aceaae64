import { detectConnectionCounts } from '../collectors/connection-counts-detect.js';
import type { Logger } from '../base/logger.js';
import type { WowzaTarget } from '../wowza/client.js';

/** How often a server's default connectioncounts provider is asked again while it does not answer. */
const CONNECTION_COUNTS_RETRY_MS = 10 * 60_000;

/**
 * Finds the default connectioncounts provider of servers configured without `connectioncounts_url`: asked when the
 * server is first seen, and every 10 minutes after while it does not answer, quietly (one info line when it
 * changes). Nothing goes to `:8086` while the collector is off.
 */
export class ConnectionCountsFinder {
  /** Per server: the provider's URL once it answered, null while it does not. */
  readonly #found = new Map<string, string | null>();
  #retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly collectorOn: () => boolean,
    private readonly detect: (target: WowzaTarget) => Promise<string | undefined> = detectConnectionCounts,
  ) {}

  /** A server whose default provider is looked for. */
  looksFor(t: WowzaTarget): boolean {
    return t.connectionCountsAuto === true && this.collectorOn();
  }

  /** The target as it is polled: with the provider found for it, if any. */
  withFound(t: WowzaTarget): WowzaTarget {
    const found = t.connectionCountsAuto ? this.#found.get(t.name) : undefined;
    return found ? { ...t, connectionCountsUrl: found } : t;
  }

  /** Asks, once, the servers never asked before. */
  async findNew(targets: Iterable<WowzaTarget>): Promise<void> {
    const unknown = [...targets].filter((t) => this.looksFor(t) && !this.#found.has(t.name));
    await Promise.all(unknown.map(async (t) => this.#note(t.name, await this.detect(t))));
  }

  /** A removed server is asked again if it comes back. */
  forget(name: string): void {
    this.#found.delete(name);
  }

  /** Every 10 minutes, asks again the servers whose provider did not answer; `onFound` when one does. */
  startRetries(targets: () => readonly WowzaTarget[], onFound: () => Promise<void>, everyMs = CONNECTION_COUNTS_RETRY_MS): void {
    this.#retry = setInterval(() => {
      void (async () => {
        const waiting = targets().filter((t) => this.looksFor(t) && this.#found.get(t.name) === null);
        const found = await Promise.all(waiting.map(async (t) => [t.name, await this.detect(t)] as const));
        let changed = false;
        for (const [name, url] of found) {
          if (!url) continue;
          this.#note(name, url);
          changed = true;
        }
        if (changed) await onFound();
      })().catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'looking for connectioncounts providers failed'));
    }, everyMs);
    this.#retry.unref();
  }

  stop(): void {
    clearInterval(this.#retry);
  }

  #note(name: string, url: string | undefined): void {
    const before = this.#found.get(name);
    this.#found.set(name, url ?? null);
    if (url && before !== url) this.logger.info({ server: name, connectioncounts_url: url }, 'connectioncounts provider found: per-stream viewers come from it in one request (set connectioncounts_url: off to keep to REST)');
    else if (!url && before === undefined) this.logger.debug({ server: name }, 'no connectioncounts provider at the default address: viewers come from REST, asked again every 10 minutes');
  }
}
