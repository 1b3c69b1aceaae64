import type { RuntimeConfig } from '../config/load.js';
import type { LogShipping } from '../logs/pipeline.js';
import type { RequestGate } from '../logs/source/rest-source.js';
import type { Logger } from '../base/logger.js';
import type { SelfMetrics } from '../metrics/self-metrics.js';
import type { WebhookEvent } from '../webhooks/event.js';
import { WowzaClient, type WowzaTarget } from '../wowza/client.js';

/** The `log_type` webhook events carry in the sinks (and Loki), beside the server's own logs. */
const WEBHOOK_LOG_TYPE = 'webhook';

/** A webhook event flattened into a log record (the sinks carry flat records). */
function eventRecord(e: WebhookEvent): Record<string, string | number | null> {
  const c = e.context;
  return {
    timestamp: new Date(e.timestamp).toISOString(),
    'x-event': e.name,
    'event-id': e.id,
    source: e.source ?? null,
    'x-vhost': c.vhost ?? null,
    'x-app': c.app ?? null,
    'x-appinst': c.appInstance ?? null,
    'x-sname': c.stream ?? null,
    state: c.state ?? null,
    data: e.data === undefined ? null : JSON.stringify(e.data),
  };
}

export interface LogHostOptions {
  self: Pick<SelfMetrics, 'registry' | 'observeRequest' | 'authChallenges'>;
  logger: Logger;
  /** Called when shipping starts: log volume is work worth V8's compilers. */
  onStart?: () => void;
  /**
   * The gate of a polled server's requests (its request budget, ServerSession.logLimit), looked up at each request:
   * a reload that restarts polling gives the server a new one.
   */
  budgetOf?: (server: string) => RequestGate | undefined;
}

/**
 * The log pipeline's lifecycle inside `serve`: started when logs are configured, one source per polled server,
 * webhook events into the same sinks, and stopped (delivering what is queued, saving positions) on reload or exit.
 * Its code is loaded only when logs are shipped (issue 27: a metrics-only `serve` does not carry it).
 */
export class LogHost {
  #shipping: LogShipping | undefined;
  /** The log source's class, loaded with the log pipeline. */
  #LogSource: typeof import('../logs/source/rest-source.js').WowzaLogSource | undefined;
  readonly #clients = new Map<string, WowzaClient>();

  constructor(private readonly o: LogHostOptions) {}

  get running(): boolean {
    return this.#shipping !== undefined;
  }

  /** Starts shipping, following the servers given; nothing while logs are off. */
  async start(runtime: RuntimeConfig, servers: Iterable<[string, WowzaTarget]>): Promise<void> {
    const config = runtime.collectors.logs.enabled ? runtime.config.logs : undefined;
    if (!config) return;
    const [{ startLogShipping }, { WowzaLogSource }] = await Promise.all([import('../logs/pipeline.js'), import('../logs/source/rest-source.js')]);
    this.#LogSource = WowzaLogSource;
    this.o.onStart?.();
    this.#shipping = await startLogShipping({ sources: [], config, registry: this.o.self.registry, logger: this.o.logger });
    for (const [name, logTarget] of servers) this.follow(name, logTarget);
  }

  /** Delivers what is queued (up to the drain timeout), saves positions, closes the sinks and the servers' clients. */
  async stop(): Promise<void> {
    await this.#shipping?.stop();
    this.#shipping = undefined;
    await Promise.all([...this.#clients.values()].map((c) => c.close()));
    this.#clients.clear();
  }

  /** Follows the logs of a server that is polled now. */
  follow(name: string, logTarget: WowzaTarget): void {
    if (!this.#shipping || !this.#LogSource) return;
    const self = this.o.self;
    const client = new WowzaClient(logTarget, {
      onRequest: (endpoint, code, seconds) => self.observeRequest(name, endpoint, code, seconds),
      onChallenge: (reason) => self.authChallenges.inc({ server: name, reason }),
    });
    this.#clients.set(name, client);
    const budgetOf = this.o.budgetOf;
    const gate: RequestGate = (fn) => {
      const limit = budgetOf?.(name);
      return limit ? limit(fn) : fn();
    };
    this.#shipping.addSource(new this.#LogSource(client, gate));
  }

  /** Stops following a server that is no longer polled. */
  async unfollow(name: string): Promise<void> {
    await this.#shipping?.removeSource(name);
    await this.#clients.get(name)?.close();
    this.#clients.delete(name);
  }

  /** A webhook event, into the sinks beside the server's logs (nothing while logs are off). */
  async publishEvent(server: string, event: WebhookEvent): Promise<void> {
    await this.#shipping?.publish(server, WEBHOOK_LOG_TYPE, eventRecord(event), event.timestamp);
  }

  /** The followers and sinks, for the status page; undefined while logs are off. */
  status(): { followers: ReturnType<LogShipping['followers']>; sinkNames: readonly string[] } | undefined {
    return this.#shipping ? { followers: this.#shipping.followers(), sinkNames: this.#shipping.sinkNames } : undefined;
  }
}
