import { ConfigError } from '../config/errors.js';
import { fileTarget, type RuntimeConfig } from '../config/load.js';
import { ServersFiles } from '../config/servers-files.js';
import { inShard } from '../config/shard.js';
import type { Logger } from '../logger.js';
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
  /** After each change: how many servers are polled. */
  applied: (count: number) => void;
}

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

  /** The servers the configuration and the target files name, this shard's only, the first of each name. */
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
    return out;
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
      for (const [name, w] of want) {
        if (this.#polled.has(name)) continue;
        this.#add(name, { ...w, settings: JSON.stringify(w) });
        this.o.logger.info({ server: name, url: w.target.url }, 'server added: polling it');
      }
      this.o.applied(this.#polled.size);
    });
    return this.#applying;
  }

  /** Reads the target files (`servers_files`) and watches them; a change is applied like a reload. */
  startFiles(): void {
    const runtime = this.o.runtime();
    if (runtime.config.servers_files.length === 0) return;
    this.#files = new ServersFiles({
      patterns: runtime.config.servers_files,
      refreshMs: runtime.config.servers_files_refresh_interval,
      modules: new Set(runtime.modules.keys()),
      logger: this.o.logger.child({ component: 'servers_files' }),
      onError: (file) => this.o.onFileError(file),
      onChange: () => void this.apply(),
    });
    this.#files.scan();
    this.#files.start();
  }

  /** Stops watching the target files, keeping the servers they named (shutdown: an apply in flight keeps them). */
  stopWatching(): void {
    this.#files?.stop();
  }

  /** Stops watching and forgets the target files (a reload reads them anew). */
  stopFiles(): void {
    this.stopWatching();
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
