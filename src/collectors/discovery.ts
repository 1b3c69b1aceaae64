import type { Config } from '../config/schema.js';
import type { Logger } from '../base/logger.js';
import type { Limit } from './collector.js';
import type { WowzaClient } from '../wowza/client.js';
import { WowzaHttpError } from '../wowza/errors.js';
import { labelValueTooLong, MAX_LABEL_VALUE_BYTES } from '../metrics/label-bounds.js';
import type { ApplicationList, IncomingStream, InstanceList } from '../wowza/schemas.js';

type DiscoveryConfig = Config['discovery'];
export type AppItem = ApplicationList['applications'][number];
export type InstanceItem = InstanceList['instanceList'][number];

export interface AppRef {
  vhost: string;
  app: AppItem;
}
export interface InstanceRef {
  vhost: string;
  app: string;
  instance: InstanceItem;
}
export interface StreamRef {
  vhost: string;
  app: string;
  instance: string;
  /** Name as the API knows it (`cam1_720p`). */
  name: string;
  /** The `stream` label: the base stream for a rendition in `label` mode, else the name. */
  label: string;
  /** Rendition suffix (`720p`) when reported under its base stream. */
  rendition?: string;
  item: IncomingStream;
}

/** What exists on one server right now, after filters, rendition handling and the stream cap. */
export interface Topology {
  vhosts: string[];
  apps: AppRef[];
  instances: InstanceRef[];
  streams: StreamRef[];
  /** Streams left out by the per-server cap. */
  droppedStreams: number;
  /** Objects left out because their name is over MAX_LABEL_VALUE_BYTES, by the label the name would fill. */
  tooLong: ReadonlyMap<string, number>;
  takenAt: number;
}

function matcher(f: { include?: string; exclude?: string }): (name: string) => boolean {
  const inc = f.include ? new RegExp(`^(?:${f.include})$`) : undefined;
  const exc = f.exclude ? new RegExp(`^(?:${f.exclude})$`) : undefined;
  return (name) => (!inc || inc.test(name)) && !(exc && exc.test(name));
}

/**
 * Walks vhosts -> applications -> instances (whose lists carry the incoming streams) once per cycle and
 * shares the result between collectors. One walk at a time: concurrent callers share it. A webhook's invalidate()
 * does not start another beside it (under a request budget a walk takes long, and one per event would queue behind
 * each other for ever): the running walk is kept, and the next get() after it walks again.
 */
export class Discovery {
  private current: Topology | undefined;
  /** The generation the current topology's walk started in: behind `generation` when an event came since. */
  private currentGeneration = 0;
  private inflight: Promise<Topology> | undefined;
  /** Bumped by invalidate(): what a walk found before it is no longer fresh. */
  private generation = 0;
  /** The last walk's failure, met again by callers of the same generation until the walk is due again. */
  private failure: { at: number; generation: number; err: unknown } | undefined;
  private readonly keepVhost: (n: string) => boolean;
  private readonly keepApp: (n: string) => boolean;
  private readonly keepStream: (n: string) => boolean;
  private readonly suffix: RegExp;
  private lastDropped = 0;
  private lastTooLong = 0;

  constructor(
    private readonly client: WowzaClient,
    private readonly limit: Limit,
    private readonly config: DiscoveryConfig,
    private readonly maxAgeMs: number,
    private readonly log: Logger,
  ) {
    this.keepVhost = matcher(config.vhosts);
    this.keepApp = matcher(config.applications);
    this.keepStream = matcher(config.streams);
    this.suffix = new RegExp(config.renditions.suffix_pattern);
  }

  /** The topology, refreshed when older than the discovery age or invalidated. */
  get(signal: AbortSignal): Promise<Topology> {
    if (this.isFresh(this.maxAgeMs)) return Promise.resolve(this.current!);
    return this.walkOnce(signal, this.maxAgeMs);
  }

  /** The topology of the last walk that succeeded, without asking the server (undefined before the first). */
  get known(): Topology | undefined {
    return this.current;
  }

  /** Forces a walk at the next get() (a webhook said something changed); a walk under way is not started again. */
  invalidate(): void {
    this.generation++;
  }

  /** A topology younger than `ageMs` and not invalidated since its walk started. */
  protected isFresh(ageMs: number): boolean {
    const c = this.current;
    return c !== undefined && this.currentGeneration === this.generation && Date.now() - c.takenAt < ageMs;
  }

  /**
   * The walk under way, or a new one. A walk that failed is not tried again by the next caller of the same
   * generation within `retryMs`: a poll that waited for the walk and then asks for the topology meets that failure
   * instead of sending a second walk to a server that just failed one.
   */
  protected walkOnce(signal: AbortSignal, retryMs: number): Promise<Topology> {
    if (this.inflight) return this.inflight;
    const failed = this.failure;
    if (failed && failed.generation === this.generation && Date.now() - failed.at < retryMs) {
      return Promise.reject(failed.err instanceof Error ? failed.err : new Error(String(failed.err)));
    }
    const generation = this.generation;
    const walk = this.walk(signal);
    this.inflight = walk;
    walk.then(
      (t) => {
        this.current = t;
        this.currentGeneration = generation;
        this.failure = undefined;
      },
      (err: unknown) => {
        this.failure = { at: Date.now(), generation, err };
      },
    );
    void walk
      .finally(() => {
        if (this.inflight === walk) this.inflight = undefined;
      })
      .catch(() => undefined);
    return walk;
  }

  private async walk(signal: AbortSignal): Promise<Topology> {
    const c = this.client;
    // An object whose name cannot be a label is left out with everything under it: it costs no request either.
    const tooLong = new Map<string, number>();
    const named = (label: string, name: string) => {
      if (!labelValueTooLong(name)) return true;
      tooLong.set(label, (tooLong.get(label) ?? 0) + 1);
      return false;
    };
    const vhostList = await this.limit(() => c.vhosts(signal));
    const vhosts = vhostList.vhosts.map((v) => v.id).filter((v) => this.keepVhost(v) && named('vhost', v));

    const appLists = await Promise.all(vhosts.map((v) => this.limit(() => c.applications(v, signal)).then((l) => ({ v, l }))));
    const apps: AppRef[] = [];
    for (const { v, l } of appLists) for (const app of l.applications) if (this.keepApp(app.id) && named('application', app.id)) apps.push({ vhost: v, app });

    const instanceLists = await Promise.all(
      apps.map(({ vhost, app }) =>
        this.limit(() => c.instances(vhost, app.id, signal)).then(
          (l) => ({ vhost, app: app.id, list: l.instanceList }),
          (err: unknown) => {
            // An application removed between the list and this call answers 404: it is gone, not an error.
            if (err instanceof WowzaHttpError && err.status === 404) return { vhost, app: app.id, list: [] };
            throw err;
          },
        ),
      ),
    );
    const instances: InstanceRef[] = [];
    for (const { vhost, app, list } of instanceLists) for (const instance of list) if (named('app_instance', instance.name)) instances.push({ vhost, app, instance });

    const streams = this.streamsOf(instances, named);
    this.sayTooLong(tooLong);
    return { vhosts, apps, instances, ...streams, tooLong, takenAt: Date.now() };
  }

  /** Said when the number of objects left out for their names changes, not every walk. */
  private sayTooLong(tooLong: ReadonlyMap<string, number>): void {
    let total = 0;
    for (const n of tooLong.values()) total += n;
    if (total === this.lastTooLong) return;
    if (total > 0) {
      this.log.warn(
        { objects: total, by_label: Object.fromEntries(tooLong), max_bytes: MAX_LABEL_VALUE_BYTES },
        'objects left out of metrics: their names are longer than a label value may be (counted in wowza_exporter_dropped_values_total, reason too_long)',
      );
    } else this.log.info('no object name over the label length cap any more');
    this.lastTooLong = total;
  }

  private streamsOf(instances: InstanceRef[], named: (label: string, name: string) => boolean): { streams: StreamRef[]; droppedStreams: number } {
    const mode = this.config.renditions.mode;
    const all: StreamRef[] = [];
    for (const { vhost, app, instance } of instances) {
      const names = new Set(instance.incomingStreams.map((s) => s.name));
      for (const item of instance.incomingStreams) {
        if (!named('stream', item.name)) continue;
        const rendition = this.renditionOf(item.name, names);
        const baseName = rendition ? item.name.slice(0, item.name.length - rendition.length - 1) : item.name;
        if (!this.keepStream(baseName)) continue;
        if (rendition && mode === 'drop') continue;
        const labelled = rendition !== undefined && mode === 'label';
        all.push({
          vhost,
          app,
          instance: instance.name,
          name: item.name,
          label: labelled ? baseName : item.name,
          ...(labelled ? { rendition } : {}),
          item,
        });
      }
    }
    const cap = this.config.max_streams_per_server;
    let dropped = 0;
    let kept = all;
    if (all.length > cap) {
      // Keep a stable subset so the same streams stay visible from one poll to the next. Keys are built
      // once per stream, not twice per comparison: over the cap this sort runs on every walk. Code-unit order,
      // not a locale's: the same streams on every machine, and no collation data loaded (3.7 MB of RSS).
      kept = all
        .map((s) => ({ s, k: key(s) }))
        .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))
        .slice(0, cap)
        .map((x) => x.s);
      dropped = all.length - cap;
    }
    if (dropped !== this.lastDropped) {
      if (dropped > 0) this.log.warn({ dropped, cap, streams: all.length }, 'stream cap reached: streams left out of metrics (raise discovery.max_streams_per_server or filter streams)');
      else this.log.info({ cap }, 'stream count back under the cap');
      this.lastDropped = dropped;
    }
    return { streams: kept, droppedStreams: dropped };
  }

  private renditionOf(name: string, siblings: Set<string>): string | undefined {
    for (let i = name.lastIndexOf('_'); i > 0; i = name.lastIndexOf('_', i - 1)) {
      const base = name.slice(0, i);
      const suffix = name.slice(i + 1);
      if (siblings.has(base) && this.suffix.test(suffix)) return suffix;
    }
    return undefined;
  }
}

function key(s: StreamRef): string {
  return `${s.vhost}\u0000${s.app}\u0000${s.instance}\u0000${s.name}`;
}
