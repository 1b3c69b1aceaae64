import { between, hash32 } from './seeded.js';
import type { ValueClock } from './value-clock.js';

/** The simulated server's objects: vhosts, applications, their single `_definst_` instance, and streams. */

export const SERVER_NAME = '_defaultServer_';
export const DEFAULT_VHOST = '_defaultVHost_';
export const DEFAULT_INSTANCE = '_definst_';

export interface StreamNode {
  readonly name: string;
  /** How the stream arrives: published to the server, pulled from a source URL, or made by the transcoder. */
  readonly origin: 'push' | 'pull' | 'transcoder';
  /** What the API reports as `sourceIp`: the publisher's address or, for pulled streams, the source URL. */
  readonly sourceIp: string;
  /** For transcoder renditions, the source stream's name. */
  readonly renditionOf?: string;
  readonly recording: boolean;
  readonly streamManager: boolean;
  connected: boolean;
  /** Value-clock second the current session began (negative for streams already up at start). */
  sessionStart: number;
  /** Value-clock second the stream disconnected; counters stand still from then on. */
  stoppedAt?: number;
  /** Set by stopRecording/failRecorder: what its recorder reports instead of following the stream. */
  recorderState?: string;
  recorderError?: string;
  /** Set by setTargetStatus: its stream target's sessionStatus instead of Active/Waiting from the stream. */
  targetStatus?: string;
}

export interface AppNode {
  readonly name: string;
  readonly appType: string | null;
  readonly dvrEnabled: boolean;
  readonly drmEnabled: boolean;
  readonly transcoderEnabled: boolean;
  readonly streamTargetsEnabled: boolean;
  /** Prefix for generated stream names (`scale`). */
  readonly streamPrefix: string;
  /** Undefined while the application has no running instance. */
  startedAt: number | undefined;
  readonly streams: Map<string, StreamNode>;
}

export interface VHostNode {
  readonly name: string;
  readonly port: number;
  readonly startedAt: number;
  readonly apps: Map<string, AppNode>;
}

export interface AppOptions {
  appType?: string | null;
  dvrEnabled?: boolean;
  drmEnabled?: boolean;
  transcoderEnabled?: boolean;
  streamTargetsEnabled?: boolean;
  /** Start the `_definst_` instance now, even without streams (default false: it starts with its first stream). */
  running?: boolean;
  streamPrefix?: string;
}

export interface StreamOptions {
  /** Source URL of a pulled stream (may carry credentials, like real ones: `rtsp://user:pass@cam/live`). */
  pulledFrom?: string;
  recording?: boolean;
  /** Started by the Stream Manager (default: true for pulled streams). */
  streamManager?: boolean;
}

export interface StreamListing {
  vhost: string;
  app: string;
  instance: string;
  stream: string;
  connected: boolean;
  origin: StreamNode['origin'];
  sourceIp: string;
  renditionOf?: string;
}

export interface TopologyListing {
  vhosts: Array<{
    name: string;
    apps: Array<{
      name: string;
      appType: string | null;
      running: boolean;
      transcoderEnabled: boolean;
      dvrEnabled: boolean;
      instances: Array<{ name: string; streams: StreamListing[] }>;
    }>;
  }>;
}

/** Told when a stream session's counters are about to be dropped, so totals above it can keep them. */
export interface TopologyListener {
  sessionEnding(vhost: string, app: string, stream: StreamNode): void;
  /** The application's instance stops (or the application goes): its own counters restart from zero. */
  appEnding(vhost: string, app: AppNode): void;
}

/**
 * What a real server announces (through webhooks) when the topology changes. Observers are told after the
 * change is made, so whoever reacts to an event and asks the API sees the new state.
 */
export interface TopologyEvent {
  name: 'app.started' | 'app.shutdown' | 'stream.started' | 'stream.stopped';
  vhost: string;
  app: string;
  instance: string;
  stream?: string;
}

export type TopologyObserver = (event: TopologyEvent) => void;

export class TopologyError extends Error {}

function checkName(kind: string, name: string): void {
  // Stream names may hold a "/" on a real server (`294/294/294_content_lq.mp4`, `mp4:live/feed`): the REST API takes
  // it escaped in the path segment. Vhost and application names may not.
  if (typeof name !== 'string' || name === '' || (kind !== 'stream' && name.includes('/'))) throw new TopologyError(`invalid ${kind} name ${JSON.stringify(name)}: must be non-empty${kind === 'stream' ? '' : ' without "/"'}`);
}

export class Topology {
  private readonly hosts = new Map<string, VHostNode>();
  private listener: TopologyListener | undefined;
  private readonly observers = new Set<TopologyObserver>();

  constructor(
    private readonly clock: ValueClock,
    private readonly seed: number,
    /** Rendition suffixes a transcoder application adds for each source stream. */
    readonly renditions: readonly string[],
  ) {}

  setListener(listener: TopologyListener): void {
    this.listener = listener;
  }

  /** Calls `observer` after every change a server would announce; returns the unsubscribe function. */
  observe(observer: TopologyObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /** An observer's failure must not undo or break the change that was already made. */
  private emit(events: TopologyEvent[]): void {
    for (const e of events) {
      for (const o of this.observers) {
        try {
          o(e);
        } catch {
          // observers report their own errors
        }
      }
    }
  }

  private streamEvent(name: 'stream.started' | 'stream.stopped', vhost: string, app: string, stream: string): TopologyEvent {
    return { name, vhost, app, instance: DEFAULT_INSTANCE, stream };
  }

  private appEvent(name: 'app.started' | 'app.shutdown', vhost: string, app: string): TopologyEvent {
    return { name, vhost, app, instance: DEFAULT_INSTANCE };
  }

  // ---- reading

  vhostNodes(): VHostNode[] {
    return [...this.hosts.values()];
  }

  vhost(name: string): VHostNode | undefined {
    return this.hosts.get(name);
  }

  app(vhost: string, app: string): AppNode | undefined {
    return this.hosts.get(vhost)?.apps.get(app);
  }

  stream(vhost: string, app: string, stream: string): StreamNode | undefined {
    return this.app(vhost, app)?.streams.get(stream);
  }

  /** Every stream as a flat list (renditions included). */
  streams(): StreamListing[] {
    const out: StreamListing[] = [];
    for (const v of this.hosts.values()) {
      for (const a of v.apps.values()) {
        for (const s of a.streams.values()) {
          const item: StreamListing = { vhost: v.name, app: a.name, instance: DEFAULT_INSTANCE, stream: s.name, connected: s.connected, origin: s.origin, sourceIp: s.sourceIp };
          if (s.renditionOf !== undefined) item.renditionOf = s.renditionOf;
          out.push(item);
        }
      }
    }
    return out;
  }

  list(): TopologyListing {
    const streams = this.streams();
    return {
      vhosts: this.vhostNodes().map((v) => ({
        name: v.name,
        apps: [...v.apps.values()].map((a) => ({
          name: a.name,
          appType: a.appType,
          running: a.startedAt !== undefined,
          transcoderEnabled: a.transcoderEnabled,
          dvrEnabled: a.dvrEnabled,
          instances:
            a.startedAt === undefined ? [] : [{ name: DEFAULT_INSTANCE, streams: streams.filter((s) => s.vhost === v.name && s.app === a.name) }],
        })),
      })),
    };
  }

  // ---- changing

  addVHost(name: string, opts: { port?: number; startedAt?: number } = {}): void {
    checkName('vhost', name);
    if (this.hosts.has(name)) throw new TopologyError(`vhost "${name}" already exists`);
    this.hosts.set(name, { name, port: opts.port ?? 1935 + this.hosts.size, startedAt: opts.startedAt ?? this.clock.now(), apps: new Map() });
  }

  removeVHost(name: string): void {
    const v = this.requireVHost(name);
    for (const app of [...v.apps.keys()]) this.removeApp(name, app);
    this.hosts.delete(name);
  }

  addApp(vhost: string, name: string, opts: AppOptions = {}): void {
    checkName('application', name);
    const v = this.requireVHost(vhost);
    if (v.apps.has(name)) throw new TopologyError(`application "${name}" already exists in vhost "${vhost}"`);
    v.apps.set(name, {
      name,
      appType: opts.appType === undefined ? 'Live' : opts.appType,
      dvrEnabled: opts.dvrEnabled ?? false,
      drmEnabled: opts.drmEnabled ?? false,
      transcoderEnabled: opts.transcoderEnabled ?? false,
      streamTargetsEnabled: opts.streamTargetsEnabled ?? false,
      streamPrefix: opts.streamPrefix ?? 'stream',
      startedAt: opts.running ? this.clock.now() : undefined,
      streams: new Map(),
    });
    if (opts.running) this.emit([this.appEvent('app.started', vhost, name)]);
  }

  /** Shuts the application's instance down: its streams go, the application stays configured. */
  stopApp(vhost: string, app: string): void {
    const a = this.requireApp(vhost, app);
    for (const s of [...a.streams.values()]) if (s.renditionOf === undefined) this.removeStream(vhost, app, s.name);
    const wasRunning = a.startedAt !== undefined;
    if (wasRunning) this.listener?.appEnding(vhost, a);
    a.startedAt = undefined;
    if (wasRunning) this.emit([this.appEvent('app.shutdown', vhost, app)]);
  }

  removeApp(vhost: string, app: string): void {
    const v = this.requireVHost(vhost);
    const a = this.requireApp(vhost, app);
    const events = [...a.streams.values()].filter((s) => s.connected).map((s) => this.streamEvent('stream.stopped', vhost, app, s.name));
    for (const s of a.streams.values()) this.listener?.sessionEnding(vhost, app, s);
    a.streams.clear();
    if (a.startedAt !== undefined) {
      this.listener?.appEnding(vhost, a);
      events.push(this.appEvent('app.shutdown', vhost, app));
    }
    v.apps.delete(app);
    this.emit(events);
  }

  /**
   * Adds a connected stream (and its renditions in a transcoder application); starts the instance if needed.
   * `sessionStart` (value-clock seconds, default now) backdates a stream that has been up for a while.
   */
  addStream(vhost: string, app: string, name: string, opts: StreamOptions = {}, sessionStart?: number): void {
    checkName('stream', name);
    const a = this.requireApp(vhost, app);
    const names = [name, ...(a.transcoderEnabled ? this.renditions.map((r) => `${name}_${r}`) : [])];
    for (const n of names) if (a.streams.has(n)) throw new TopologyError(`stream "${n}" already exists in ${vhost}/${app}`);
    const now = this.clock.now();
    const start = sessionStart ?? now;
    const events: TopologyEvent[] = a.startedAt === undefined ? [this.appEvent('app.started', vhost, app)] : [];
    if (a.startedAt === undefined || a.startedAt > start) a.startedAt = Math.min(start, now);
    const pulled = opts.pulledFrom !== undefined;
    const h = hash32(this.seed, 'source', vhost, app, name);
    a.streams.set(name, {
      name,
      origin: pulled ? 'pull' : 'push',
      sourceIp: pulled ? opts.pulledFrom! : `wowz://198.51.100.${(h % 250) + 1}:${49152 + ((h >>> 8) % 16000)}`,
      recording: opts.recording ?? false,
      streamManager: opts.streamManager ?? pulled,
      connected: true,
      sessionStart: start,
    });
    for (const n of names.slice(1)) {
      a.streams.set(n, { name: n, origin: 'transcoder', sourceIp: 'local (Transcoder)', renditionOf: name, recording: false, streamManager: false, connected: true, sessionStart: start });
    }
    this.emit([...events, ...names.map((n) => this.streamEvent('stream.started', vhost, app, n))]);
  }

  /**
   * The recording of a stream stops while the stream stays connected (the operator's nightmare): its recorder reports
   * `state` (default `Waiting for stream`) and, with `error`, that recorderErrorString. `undefined` state resumes.
   */
  stopRecording(vhost: string, app: string, name: string, state: string | undefined = 'Waiting for stream', error?: string): void {
    const s = this.requireStream(vhost, app, name);
    s.recorderState = state;
    s.recorderError = error;
  }

  /** The stream target of a stream reports `status` (e.g. `Error`) as its sessionStatus; undefined follows the stream again. */
  setTargetStatus(vhost: string, app: string, name: string, status: string | undefined): void {
    this.requireStream(vhost, app, name).targetStatus = status;
  }

  /** The stream (and its renditions) disconnects but stays listed with `isConnected: false`. */
  stopStream(vhost: string, app: string, name: string): void {
    const now = this.clock.now();
    const events: TopologyEvent[] = [];
    for (const s of this.family(vhost, app, name)) {
      if (!s.connected) continue;
      s.connected = false;
      s.stoppedAt = now;
      events.push(this.streamEvent('stream.stopped', vhost, app, s.name));
    }
    this.emit(events);
  }

  /** A stopped stream reconnects: a new session whose counters start from zero. */
  startStream(vhost: string, app: string, name: string): void {
    const now = this.clock.now();
    const events: TopologyEvent[] = [];
    for (const s of this.family(vhost, app, name)) {
      if (s.connected) continue;
      this.listener?.sessionEnding(vhost, app, s);
      s.connected = true;
      s.sessionStart = now;
      delete s.stoppedAt;
      events.push(this.streamEvent('stream.started', vhost, app, s.name));
    }
    this.emit(events);
  }

  removeStream(vhost: string, app: string, name: string): void {
    const a = this.requireApp(vhost, app);
    const events: TopologyEvent[] = [];
    for (const s of this.family(vhost, app, name)) {
      this.listener?.sessionEnding(vhost, app, s);
      a.streams.delete(s.name);
      // A connected stream that goes away was unpublished.
      if (s.connected) events.push(this.streamEvent('stream.stopped', vhost, app, s.name));
    }
    this.emit(events);
  }

  /**
   * Multiplies the source streams of every application that has some (renditions follow): `scale(10)` is a
   * topology spike, `scale(0.5)` halves it again, removing the newest streams first.
   */
  scale(factor: number): void {
    if (!Number.isFinite(factor) || factor < 0) throw new TopologyError(`scale factor must be a non-negative number, got ${factor}`);
    for (const v of this.hosts.values()) {
      for (const a of v.apps.values()) {
        const sources = [...a.streams.values()].filter((s) => s.renditionOf === undefined);
        if (sources.length === 0) continue;
        const target = Math.round(sources.length * factor);
        for (let n = sources.length + 1, added = sources.length; added < target; n++) {
          const name = `${a.streamPrefix}${n}`;
          if (a.streams.has(name)) continue;
          this.addStream(v.name, a.name, name);
          added++;
        }
        for (const s of sources.slice(target).reverse()) this.removeStream(v.name, a.name, s.name);
      }
    }
  }

  // ---- helpers

  private family(vhost: string, app: string, name: string): StreamNode[] {
    const a = this.requireApp(vhost, app);
    const s = a.streams.get(name);
    if (!s) throw new TopologyError(`stream "${name}" not found in ${vhost}/${app}`);
    return [s, ...[...a.streams.values()].filter((r) => r.renditionOf === name)];
  }

  private requireVHost(name: string): VHostNode {
    const v = this.hosts.get(name);
    if (!v) throw new TopologyError(`vhost "${name}" not found`);
    return v;
  }

  private requireStream(vhost: string, app: string, name: string): StreamNode {
    const s = this.requireApp(vhost, app).streams.get(name);
    if (!s) throw new TopologyError(`stream "${name}" not found in ${vhost}/${app}`);
    return s;
  }

  private requireApp(vhost: string, app: string): AppNode {
    const a = this.requireVHost(vhost).apps.get(app);
    if (!a) throw new TopologyError(`application "${app}" not found in vhost "${vhost}"`);
    return a;
  }
}

export interface TopologyShape {
  vhosts: number;
  apps: number;
  streams: number;
}

/** A credentialed RTSP source like the ones real deployments pull from; the exporter must never expose it. */
export const PULLED_SOURCE_WITH_CREDENTIALS = 'rtsp://camuser:campass@192.0.2.10:554/live';

/**
 * The starting layout, per vhost: `live` (Live, transcoder on: renditions), `cameras` (appType null, the
 * first stream pulled from a credentialed RTSP URL, the second from one without), `vod` (VOD, no running
 * instance), then `app4`, `app5`... (plain Live). Streams already running have been up for a while.
 */
export function buildDefaultTopology(t: Topology, shape: TopologyShape, seed: number, serverStartedAt: number): void {
  const layout = (i: number): [string, AppOptions] => {
    if (i === 0) return ['live', { appType: 'Live', transcoderEnabled: true, dvrEnabled: true, streamPrefix: 'stream' }];
    if (i === 1) return ['cameras', { appType: null, streamPrefix: 'cam' }];
    if (i === 2) return ['vod', { appType: 'VOD' }];
    return [`app${i + 1}`, { appType: 'Live', dvrEnabled: i % 2 === 0, streamTargetsEnabled: i % 3 === 0, streamPrefix: 'stream' }];
  };
  for (let v = 0; v < shape.vhosts; v++) {
    const vhost = v === 0 ? DEFAULT_VHOST : `vhost${v + 1}`;
    t.addVHost(vhost, { startedAt: serverStartedAt });
    for (let i = 0; i < shape.apps; i++) {
      const [app, opts] = layout(i);
      t.addApp(vhost, app, opts);
      if (app === 'vod') continue; // never started: no instance
      for (let s = 1; s <= shape.streams; s++) {
        const name = `${opts.streamPrefix}${s}`;
        const streamOpts: StreamOptions = {};
        if (app === 'cameras' && s === 1) streamOpts.pulledFrom = PULLED_SOURCE_WITH_CREDENTIALS;
        if (app === 'cameras' && s === 2) streamOpts.pulledFrom = 'rtsp://192.0.2.11:554/stream1';
        if (app === 'live' && s === 2) streamOpts.recording = true;
        // Already up for 10 minutes to 2 days when the simulator starts.
        const upFor = Math.round(between(600, 172_800, seed, 'uptime', vhost, app, name));
        t.addStream(vhost, app, name, streamOpts, -upFor);
      }
    }
  }
}
