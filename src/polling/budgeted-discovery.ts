import type { Config } from '../config/schema.js';
import type { Logger } from '../base/logger.js';
import type { WowzaClient } from '../wowza/client.js';
import type { Limit } from '../collectors/collector.js';
import { Discovery, type Topology } from '../collectors/discovery.js';

/** A poll's deadline passed while the walk it needed was still paced through the server's budget. */
export class DiscoveryWaitError extends Error {
  readonly kind = 'timeout';
  constructor() {
    super('the discovery walk had not finished by the poll deadline (its requests are paced by poll.max_requests_per_second)');
  }
}

/**
 * Discovery under a request budget. The walk's age is the plan's (request-budget.ts), which grows with the server; and
 * the walk runs under the server's own signal, not the deadline of the poll that happened to start it: paced, a walk
 * of thousands of applications takes minutes, and cutting it at one poll's deadline would throw it away every time.
 * A poll waits for it until its own deadline; the walk goes on for the next one.
 */
export class BudgetedDiscovery extends Discovery {
  constructor(
    client: WowzaClient,
    limit: Limit,
    config: Config['discovery'],
    private readonly ageMs: () => number,
    log: Logger,
    private readonly walkSignal: AbortSignal,
  ) {
    // Age 0: the parent walks whenever asked; this class decides when to ask.
    super(client, limit, config, 0, log);
  }

  /** Whether a topology younger than the planned age, and not invalidated since, is at hand. */
  get fresh(): boolean {
    return this.isFresh(this.ageMs());
  }

  override get(signal: AbortSignal): Promise<Topology> {
    if (this.fresh) return Promise.resolve(this.known!);
    const walk = this.walkOnce(this.walkSignal, this.ageMs());
    return new Promise<Topology>((resolve, reject) => {
      if (signal.aborted) return reject(new DiscoveryWaitError());
      const onAbort = () => reject(new DiscoveryWaitError());
      signal.addEventListener('abort', onAbort, { once: true });
      walk.then(
        (t) => {
          signal.removeEventListener('abort', onAbort);
          resolve(t);
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }
}
