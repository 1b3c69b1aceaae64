import { ConfigError } from '../config/errors.js';
import { fileTarget, type RuntimeConfig } from '../config/load.js';
import { ServersFiles } from '../config/servers-files.js';
import { checkTargetTextOnThread } from '../config/target-file-thread.js';
import { inShard } from '../config/shard.js';
import type { Logger } from '../base/logger.js';
import { formatServerLabels } from '../metrics/server-labels.js';
import type { WowzaTarget } from '../wowza/client.js';
import type { ConnectionCountsFinder } from './connection-counts-finder.js';

/** A server this exporter polls: how the collectors reach it, and how the log followers do. */
export interface PolledServer {
  target: WowzaTarget;
  logTarget: WowzaTarget;
  /** Everything that, when it changes, means the server must be polled anew. */
  settings: string;
}

export interface ServerSetOptions {
  runtime: () => RuntimeConfig;
  finder: ConnectionCountsFinder;
  logger: Logger;
  /** A target file that cannot be read, or a target in it the exporter cannot poll (counted per file). */
  onFileError: (file: string) => void;
  /** Starts polling a server (and following its logs). */
  added: (name: string, server: PolledServer) => void;
  /** Stops everything of a server. */
  removed: (name: string) => Promise<void>;
  /** After each change (and each batch of one): how many servers are polled, and how many max_servers leaves out. */
  applied: (count: number, overLimit: number) => void;
}

/**
 * Servers started together, then a pause: a target file of thousands starts polling in steps, each server within its
 * own request budget, instead of thousands of connections and polls in the same second; and the event loop answers
 * /metrics and the health checks between steps.
 */
const BATCH = 10;
const BATCH_PAUSE_MS = 20;
/** Servers added with a line each; past these, one line says how many more. */
const SAID = 50;

/**
 * The servers polled now, brought in line with the ones wanted (the configuration's, the target files', this
 * shard's) by difference, as Prometheus' scrape manager applies a configuration: a server whose settings did not
 * change keeps running untouched.
 */
export class ServerSet {
  readonly #polled = new Map<string, PolledServer>();
  /** Formatted labels of the servers that have any, for the exporter's own series. */
  readonly labels = new Map<string, string>();
  /** Duplicate names already warned about, per source. */
  readonly #skipped = new Set<string>();
  /** Changes are applied one at a time, in order. */
  #applying: Promise<void> = Promise.resolve();
  #files: ServersFiles | undefined;
  /** The exporter is stopping: an apply under way adds no more servers. */
  #stopped = false;

  constructor(private readonly o: ServerSetOptions) {}

  get polled(): ReadonlyMap<string, PolledServer> {
    return this.#polled;
  }

  /** The targets polled now, by name. */
  targets(): Map<string, WowzaTarget> {
    return new Map([...this.#polled].map(([name, s]) => [name, s.target]));
  }

  /** Where each polled server's logs are read. */
  logTargets(): [string, WowzaTarget][] {
    return [...this.#polled].map(([name, s]) => [name, s.logTarget]);
  }

  /** Resolves when every change asked for so far is applied. */
  settled(): Promise<void> {
    return this.#applying;
  }

  /**
   * The servers the configuration and the target files name, this shard's only, the first of each name, at most
   * max_servers of them (the configuration's first, then the files' in order: the same ones every time).
   */
  desired(): Map<string, Omit<PolledServer, 'settings'>> {
    const runtime = this.o.runtime();
    const out = new Map<string, Omit<PolledServer, 'settings'>>();
    const take = (name: string, entry: Omit<PolledServer, 'settings'>, from: string) => {
      if (!inShard(name, runtime.config.shard)) return;
      if (out.has(name)) {
        const key = `${name}\u0000${from}`;
        if (!this.#skipped.has(key)) this.o.logger.warn({ server: name, from }, 'a server of this name is listed already: this one is left out');
        this.#skipped.add(key);
        return;
      }
      out.set(name, entry);
    };
    runtime.servers.forEach((t, i) => take(t.name, { target: this.o.finder.withFound(t), logTarget: runtime.logServers[i]! }, 'servers'));
    for (const g of this.#files?.groups() ?? []) {
      for (const url of g.targets) {
        try {
          const { target, logTarget } = fileTarget(runtime, g.module, url, g.labels, g.expectedStreams);
          take(target.name, { target, logTarget }, g.file);
        } catch (err) {
          if (!(err instanceof ConfigError)) throw err;
          this.o.onFileError(g.file);
          this.o.logger.warn({ file: g.file, target: url, err: err.message }, 'cannot poll a target of a target file');
        }
      }
    }
    this.#sayLimit(out.size, runtime.config.max_servers);
    if (out.size > runtime.config.max_servers) return new Map([...out].slice(0, runtime.config.max_servers));
    return out;
  }

  /** How many servers max_servers left out at the last look. */
  #overLimit = 0;

  #sayLimit(wanted: number, max: number): void {
    const over = Math.max(0, wanted - max);
    if (over === this.#overLimit) return;
    this.#overLimit = over;
    if (over > 0) {
      this.o.logger.warn(
        { wanted, max_servers: max, left_out: over },
        `more servers than max_servers: ${over} of ${wanted} are not polled (wowza_exporter_servers_over_limit); split them over replicas with --shard i/N, or raise max_servers`,
      );
    } else this.o.logger.info({ wanted, max_servers: max }, 'every server is polled again: the servers fit max_servers');
  }

  /** Brings the polled servers in line with `desired()`. */
  apply(): Promise<void> {
    this.#applying = this.#applying.then(async () => {
      // A server seen for the first time: its default connectioncounts provider is asked once before it is polled.
      await this.o.finder.findNew([...this.desired().values()].map((w) => w.target));
      const want = this.desired();
      for (const name of [...this.#polled.keys()]) {
        const w = want.get(name);
        if (!w || JSON.stringify(w) !== this.#polled.get(name)!.settings) {
          if (!w) this.o.finder.forget(name);
          await this.#remove(name);
          this.o.logger.info({ server: name }, w ? 'server settings changed: polling it anew' : 'server removed: no longer polled');
        }
      }
      let added = 0;
      for (const [name, w] of want) {
        if (this.#polled.has(name)) continue;
        if (added > 0 && added % BATCH === 0) {
          this.o.applied(this.#polled.size, this.#overLimit);
          await new Promise((resolve) => setTimeout(resolve, BATCH_PAUSE_MS));
          // Shutting down: the rest are not started (close waits for this apply).
          if (this.#stopped) break;
        }
        this.#add(name, { ...w, settings: JSON.stringify(w) });
        added++;
        if (added <= SAID) this.o.logger.info({ server: name, url: w.target.url }, 'server added: polling it');
      }
      // A fleet's start is one line per server for the first few, then one for the rest.
      if (added > SAID) this.o.logger.info({ servers: added - SAID }, 'more servers added: polling them');
      this.o.applied(this.#polled.size, this.#overLimit);
    });
    return this.#applying;
  }

  /** Reads the target files (`servers_files`) and watches them; a change is applied like a reload. Resolves once they are read. */
  startFiles(): Promise<void> {
    const runtime = this.o.runtime();
    if (runtime.config.servers_files.length === 0) return Promise.resolve();
    this.#files = new ServersFiles({
      patterns: runtime.config.servers_files,
      refreshMs: runtime.config.servers_files_refresh_interval,
      modules: new Set(runtime.modules.keys()),
      logger: this.o.logger.child({ component: 'servers_files' }),
      onError: (file) => this.o.onFileError(file),
      onChange: () => void this.apply(),
      checkAway: checkTargetTextOnThread,
    });
    this.#files.start();
    return this.#files.scan();
  }

  /** Stops watching the target files, keeping the servers they named (shutdown: an apply in flight keeps them). */
  stopWatching(): void {
    this.#stopped = true;
    this.#files?.stop();
  }

  /** Stops watching and forgets the target files (a reload reads them anew). */
  stopFiles(): void {
    this.#files?.stop();
    this.#files = undefined;
  }

  #add(name: string, s: PolledServer): void {
    this.#polled.set(name, s);
    const labels = s.target.labels ? formatServerLabels(s.target.labels) : '';
    if (labels) this.labels.set(name, labels);
    this.o.added(name, s);
  }

  async #remove(name: string): Promise<void> {
    this.#polled.delete(name);
    this.labels.delete(name);
    await this.o.removed(name);
  }
}
