import { between, hash32, unit } from './seeded.js';
import { DEFAULT_INSTANCE, SERVER_NAME, type AppNode, type StreamNode, type Topology, type TopologyListener } from './topology.js';
import type { ValueClock } from './value-clock.js';

/**
 * The numbers the simulated API serves, as a pure function of the seed, the topology and the value clock.
 * Rates are smooth curves and byte counters are their exact integrals, so counters only grow and
 * `Δcounter / Δt` matches the reported rates. Totals are sums of the level below plus what departed
 * streams had already counted, so application and vhost counters never go backwards.
 */

/** Protocol keys of a stream's `connectionCount` (no WEBM/DVRCHUNKS, as on real servers). */
export const STREAM_PROTOCOLS = ['RTMP', 'MPEGDASH', 'CUPERTINO', 'SANJOSE', 'SMOOTH', 'RTP', 'WEBRTC'] as const;
/** Protocol keys of application and vhost maps; WEBRTC is a newer key clients must keep. */
export const HOST_PROTOCOLS = ['RTMP', 'MPEGDASH', 'CUPERTINO', 'SANJOSE', 'SMOOTH', 'RTP', 'WEBM', 'DVRCHUNKS', 'WEBRTC'] as const;

export const JAVA_MAX_HEAP = '3160MB';
const JAVA_MAX_HEAP_BYTES = 3160 * 1024 * 1024;

export interface MachineCurrentBody {
  serverUptime: number;
  cpuIdle: number;
  cpuUser: number;
  cpuSystem: number;
  memoryFree: number;
  memoryUsed: number;
  heapFree: number;
  heapUsed: number;
  diskFree: number;
  diskUsed: number;
  connectionCount: number;
}

/**
 * `{S}/status`: the fields of the server's own ServerStatusConfig model (test/fixtures/reference/wse-swagger-4.9.0,
 * MODELS.md), nothing else: feature state is `*Licensed` / `*InUse` / `*Available` booleans and the lists of
 * applications using a feature, not `*Enabled` flags.
 */
export interface ServerStatusBody {
  wseName: string;
  serverVersion: string;
  serverBuild: string;
  licenseType: string;
  licenseExpireDate: string;
  serverMode: string;
  osName: string;
  osVersion: string;
  osArchitecture: string;
  osBitness: string;
  totalMemory: number;
  availableMemory: number;
  processorCores: number;
  gpuAcceleration: string;
  javaVersion: string;
  javaVMVersion: string;
  javaBitness: string;
  javaName: string;
  javaVendor: string;
  javaHome: string;
  javaMaxHeapSize: string;
  timeRunning: number;
  currentConnections: number;
  maxConnections: number;
  maxIncommingStreams: number;
  restAPIAvailable: boolean;
  httpOriginAvailable: boolean;
  transcoderLicensed: boolean;
  transcoderAvailable: boolean;
  transcoderWatermark: boolean;
  transcoderLicenses: number;
  transcoderLicensesInUse: number;
  transcoderApplications: string[];
  dvrLicensed: boolean;
  dvrInUse: boolean;
  dvrApplications: string[];
  drmLicensed: boolean;
  drmInUse: boolean;
  drmApplications: string[];
  nativeBase: string;
}

export interface CurrentStatsBody {
  serverName: string;
  uptime: number;
  bytesIn: number;
  bytesOut: number;
  bytesInRate?: number;
  bytesOutRate?: number;
  totalConnections: number;
  connectionCount: Record<string, number>;
}

export interface StreamCurrentBody extends CurrentStatsBody {
  applicationInstance: string;
  name: string;
  bytesInRate: number;
  bytesOutRate: number;
}

export interface IncomingStreamItem {
  applicationInstance: string;
  name: string;
  sourceIp: string;
  isRecordingSet: boolean;
  isStreamManagerStream: boolean;
  isPublishedToVOD: boolean;
  isConnected: boolean;
  isPTZEnabled: boolean;
  ptzPollingInterval: number;
  ptzPollingIntervalMinimum: number;
}

/** StreamRecorderConfig (MODELS.md), the items of an instance's `recorders` and of `{I}/streamrecorders`. */
export interface RecorderItem {
  recorderName: string;
  instanceName: string;
  applicationName: string;
  recorderState: string;
  recorderErrorString: string;
  defaultRecorder: boolean;
  segmentationType: string;
  outputPath: string;
  baseFile: string;
  fileFormat: string;
  fileVersionDelegateName: string;
  fileTemplate: string;
  segmentDuration: number;
  segmentSize: number;
  segmentSchedule: string;
  recordData: boolean;
  startOnKeyFrame: boolean;
  splitOnTcDiscontinuity: boolean;
  backBufferTime: number;
  option: string;
  moveFirstVideoFrameToZero: boolean;
  /** Bytes. */
  currentSize: number;
  /** Milliseconds (wowza-api.md). */
  currentDuration: number;
  currentFile: string;
  /** Empty when not recording. */
  recordingStartTime: string;
  timeScale: number;
  defaultAudioSearchPosition: boolean;
  skipKeyFrameUntilAudioTimeout: number;
}

export interface InstanceBody {
  name: string;
  incomingStreams: IncomingStreamItem[];
  outgoingStreams: unknown[];
  recorders: RecorderItem[];
  streamGroups: unknown[];
}

export interface VHostListBody {
  serverName: string;
  vhosts: Array<{ id: string; href: string; connectingIPAddress: string; connectingPort: number; connectingSSLEnable: boolean }>;
}

export interface ApplicationListBody {
  serverName: string;
  applications: Array<{
    id: string;
    href: string;
    appType: string | null;
    dvrEnabled: boolean;
    drmEnabled: boolean;
    transcoderEnabled: boolean;
    streamTargetsEnabled: boolean;
  }>;
}

export interface ValueSettings {
  seed: number;
  serverVersion: string;
  licenseExpireDate: string;
  /** `maxConnections` of the status; 0 = unlimited. */
  maxConnections?: number;
  /** `maxIncommingStreams` of the status; 0 = unlimited. */
  maxIncomingStreams?: number;
  /** Value-clock second the simulated server started (negative: it has been up for a while). */
  serverStartedAt: number;
  /** Wall-clock epoch ms of value-clock second 0, for timestamps. */
  epochMsAtZero: number;
}

/** A curve `base * (1 + amp * sin(omega * t + phase))` and its integral. */
interface Wave {
  base: number;
  amp: number;
  omega: number;
  phase: number;
}

const at = (w: Wave, t: number) => w.base * (1 + w.amp * Math.sin(w.omega * t + w.phase));
const integral = (w: Wave, from: number, to: number) =>
  to <= from ? 0 : w.base * (to - from - (w.amp / w.omega) * (Math.cos(w.omega * to + w.phase) - Math.cos(w.omega * from + w.phase)));

function wave(seed: number, base: number, ampMin: number, ampMax: number, ...key: string[]): Wave {
  const period = between(90, 900, seed, 'period', ...key);
  return { base, amp: between(ampMin, ampMax, seed, 'amp', ...key), omega: (2 * Math.PI) / period, phase: between(0, 2 * Math.PI, seed, 'phase', ...key) };
}

/** Splits `total` across weights into integers that add up exactly (largest remainder). */
function apportion(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0) || 1;
  const exact = weights.map((w) => (total * w) / sum);
  const out = exact.map(Math.floor);
  let left = total - out.reduce((a, b) => a + b, 0);
  const order = exact.map((e, i) => [e - Math.floor(e), i] as const).sort((a, b) => b[0] - a[0]);
  for (const [, i] of order) {
    if (left <= 0) break;
    out[i]! += 1;
    left--;
  }
  return out;
}

/** `160p` -> share of the source bitrate a rendition of that height carries. */
function renditionShare(suffix: string): number {
  const m = /(\d+)p/.exec(suffix);
  if (!m) return 0.3;
  return Math.min(1, (Number(m[1]) / 1080) ** 1.5);
}

interface StreamProfile {
  bytesIn: Wave;
  /** Mean viewers times the curve; its integral times the mean input rate is the output counter. */
  viewers: Wave;
  weights: number[];
}

interface Bytes {
  in: number;
  out: number;
}

export class ValueModel implements TopologyListener {
  private readonly profiles = new Map<string, StreamProfile>();
  /** Bytes counted by sessions that ended, per application and per vhost. */
  private readonly retiredApp = new Map<string, Bytes>();
  private readonly retiredVHost = new Map<string, Bytes>();
  /** Set while sampling the past for `historic`. */
  private sampleTime: number | undefined;

  constructor(
    private readonly topology: Topology,
    private readonly clock: ValueClock,
    private readonly settings: ValueSettings,
  ) {
    topology.setListener(this);
  }

  // ---- topology listener: keep the bytes of what goes away

  sessionEnding(vhost: string, app: string, stream: StreamNode): void {
    const b = this.streamBytes(vhost, app, stream, this.time());
    add(this.retiredApp, `${vhost}\u0000${app}`, b);
  }

  appEnding(vhost: string, app: AppNode): void {
    const key = `${vhost}\u0000${app.name}`;
    const appBytes = this.appBytes(vhost, app, this.time());
    add(this.retiredVHost, vhost, appBytes);
    this.retiredApp.delete(key);
  }

  // ---- server level

  machine(): MachineCurrentBody {
    const t = this.time();
    const seed = this.settings.seed;
    const connections = this.serverConnections(t);
    const cpuUser = Math.min(90, Math.round(at(wave(seed, 14, 0.4, 0.6, 'cpu-user'), t) + Math.min(30, connections / 40)));
    const cpuSystem = Math.round(at(wave(seed, 4, 0.3, 0.5, 'cpu-system'), t));
    const iowait = hash32(seed, 'iowait', Math.floor(t)) % 3;
    const total = this.totalMemory();
    const memoryUsed = Math.floor(total * at(wave(seed, 0.45, 0.1, 0.2, 'memory'), t));
    const heapUsed = Math.floor(JAVA_MAX_HEAP_BYTES * at(wave(seed, 0.4, 0.2, 0.4, 'heap'), t));
    const disk = this.diskTotal();
    const diskUsed = Math.floor(disk * 0.3 + 2048 * (t - this.settings.serverStartedAt));
    return {
      serverUptime: Math.floor(t - this.settings.serverStartedAt),
      cpuIdle: 100 - cpuUser - cpuSystem - iowait,
      cpuUser,
      cpuSystem,
      memoryFree: total - memoryUsed,
      memoryUsed,
      heapFree: JAVA_MAX_HEAP_BYTES - heapUsed,
      heapUsed,
      diskFree: disk - diskUsed,
      diskUsed,
      connectionCount: connections,
    };
  }

  status(): ServerStatusBody {
    const t = this.time();
    const machine = this.machine();
    const version = this.settings.serverVersion;
    let transcoding = 0;
    // The feature lists name the applications configured with the feature (once, whatever the vhost); a
    // feature is in use while one of them runs.
    const apps = { transcoder: new Set<string>(), dvr: new Set<string>(), drm: new Set<string>() };
    const inUse = { dvr: false, drm: false };
    for (const v of this.topology.vhostNodes()) {
      for (const a of v.apps.values()) {
        const running = a.startedAt !== undefined;
        if (a.dvrEnabled) apps.dvr.add(a.name);
        if (a.drmEnabled) apps.drm.add(a.name);
        inUse.dvr ||= a.dvrEnabled && running;
        inUse.drm ||= a.drmEnabled && running;
        if (!a.transcoderEnabled) continue;
        apps.transcoder.add(a.name);
        for (const s of a.streams.values()) if (s.connected && s.renditionOf === undefined) transcoding++;
      }
    }
    const licenses = 4 + (hash32(this.settings.seed, 'licenses') % 4) * 4;
    const wse = /\d+(?:\.\d+)+/.exec(version)?.[0] ?? '4.9.4';
    return {
      wseName: 'Wowza Streaming Engine',
      serverVersion: version,
      serverBuild: /build(\d+)/.exec(version)?.[1] ?? '',
      licenseType: 'Subscription',
      licenseExpireDate: this.settings.licenseExpireDate,
      serverMode: 'standalone',
      osName: 'Linux',
      osVersion: '5.15.0-105-generic',
      osArchitecture: 'amd64',
      osBitness: '64',
      totalMemory: this.totalMemory(),
      availableMemory: machine.memoryFree,
      processorCores: [4, 8, 16, 32][hash32(this.settings.seed, 'cores') % 4]!,
      gpuAcceleration: 'none',
      javaVersion: '11.0.23',
      javaVMVersion: '11.0.23+9',
      javaBitness: '64',
      javaName: 'OpenJDK 64-Bit Server VM',
      javaVendor: 'Eclipse Adoptium',
      javaHome: `/usr/local/WowzaStreamingEngine-${wse}/java`,
      javaMaxHeapSize: JAVA_MAX_HEAP,
      timeRunning: Math.round((t - this.settings.serverStartedAt) * 1000) / 1000,
      currentConnections: machine.connectionCount,
      maxConnections: this.settings.maxConnections ?? 0,
      maxIncommingStreams: this.settings.maxIncomingStreams ?? 0,
      restAPIAvailable: true,
      httpOriginAvailable: false,
      transcoderLicensed: true,
      transcoderAvailable: true,
      transcoderWatermark: false,
      transcoderLicenses: licenses,
      transcoderLicensesInUse: Math.min(licenses, transcoding),
      transcoderApplications: [...apps.transcoder],
      dvrLicensed: true,
      dvrInUse: inUse.dvr,
      dvrApplications: [...apps.dvr],
      // DRM needs an add-on licence: licensed only where an application is configured with it.
      drmLicensed: apps.drm.size > 0,
      drmInUse: inUse.drm,
      drmApplications: [...apps.drm],
      nativeBase: `/usr/local/WowzaStreamingEngine-${wse}/lib-native/linux64`,
    };
  }

  vhostList(): VHostListBody {
    return {
      serverName: SERVER_NAME,
      vhosts: this.topology.vhostNodes().map((v) => ({
        id: v.name,
        href: `/v2/servers/${SERVER_NAME}/vhosts/${encodeURIComponent(v.name)}`,
        connectingIPAddress: '*',
        connectingPort: v.port,
        connectingSSLEnable: false,
      })),
    };
  }

  // ---- vhost level

  /** `{V}/monitoring/current`; undefined for an unknown vhost. Rates are absent at this level. */
  vhost(vhost: string): CurrentStatsBody | undefined {
    const v = this.topology.vhost(vhost);
    if (!v) return undefined;
    const t = this.time();
    const bytes = { ...(this.retiredVHost.get(vhost) ?? { in: 0, out: 0 }) };
    const counts = zeroCounts(HOST_PROTOCOLS);
    for (const a of v.apps.values()) {
      const b = this.appBytes(vhost, a, t);
      bytes.in += b.in;
      bytes.out += b.out;
      addCounts(counts, this.appConnections(vhost, a, t));
    }
    return {
      serverName: SERVER_NAME,
      uptime: Math.max(0, Math.floor(t - v.startedAt)),
      bytesIn: bytes.in,
      bytesOut: bytes.out,
      totalConnections: sumCounts(counts),
      connectionCount: counts,
    };
  }

  applicationList(vhost: string): ApplicationListBody | undefined {
    const v = this.topology.vhost(vhost);
    if (!v) return undefined;
    return {
      serverName: SERVER_NAME,
      applications: [...v.apps.values()].map((a) => ({
        id: a.name,
        href: `/v2/servers/${SERVER_NAME}/vhosts/${encodeURIComponent(vhost)}/applications/${encodeURIComponent(a.name)}`,
        appType: a.appType,
        dvrEnabled: a.dvrEnabled,
        drmEnabled: a.drmEnabled,
        transcoderEnabled: a.transcoderEnabled,
        streamTargetsEnabled: a.streamTargetsEnabled,
      })),
    };
  }

  // ---- application level

  /** `{A}/monitoring/current`; undefined for an unknown vhost or application (the API's 404). */
  application(vhost: string, app: string): CurrentStatsBody | undefined {
    const a = this.topology.app(vhost, app);
    if (!a) return undefined;
    const t = this.time();
    const bytes = this.appBytes(vhost, a, t);
    let inRate = 0;
    let outRate = 0;
    for (const s of a.streams.values()) {
      const r = this.streamRates(vhost, app, s, t);
      inRate += r.in;
      outRate += r.out;
    }
    const counts = this.appConnections(vhost, a, t);
    return {
      serverName: SERVER_NAME,
      uptime: a.startedAt === undefined ? 0 : Math.max(0, Math.floor(t - a.startedAt)),
      bytesIn: bytes.in,
      bytesOut: bytes.out,
      bytesInRate: inRate,
      bytesOutRate: outRate,
      totalConnections: sumCounts(counts),
      connectionCount: counts,
    };
  }

  /** `{A}/instances`: one `_definst_` while the application runs, an empty list otherwise. */
  instances(vhost: string, app: string): { serverName: string; instanceList: InstanceBody[] } | undefined {
    const a = this.topology.app(vhost, app);
    if (!a) return undefined;
    return { serverName: SERVER_NAME, instanceList: a.startedAt === undefined ? [] : [this.instanceOf(vhost, a, DEFAULT_INSTANCE)] };
  }

  /** `{A}/instances/{instance}`: an unknown (or not running) instance is 200 with empty arrays. */
  instance(vhost: string, app: string, instance: string): (InstanceBody & { serverName: string }) | undefined {
    const a = this.topology.app(vhost, app);
    if (!a) return undefined;
    const body = instance === DEFAULT_INSTANCE && a.startedAt !== undefined ? this.instanceOf(vhost, a, instance) : emptyInstance(instance);
    return { serverName: SERVER_NAME, ...body };
  }

  // ---- stream level

  /**
   * `{I}/incomingstreams/{stream}/monitoring/current`. Like real servers, a stream (or instance) that does not
   * exist in an existing application is 200 with zeros; only an unknown application is undefined (404).
   */
  stream(vhost: string, app: string, instance: string, stream: string): StreamCurrentBody | undefined {
    const a = this.topology.app(vhost, app);
    if (!a) return undefined;
    const s = instance === DEFAULT_INSTANCE ? a.streams.get(stream) : undefined;
    const base = { serverName: SERVER_NAME, applicationInstance: instance, name: stream };
    if (!s) return { ...base, uptime: 0, bytesIn: 0, bytesOut: 0, bytesInRate: 0, bytesOutRate: 0, totalConnections: 0, connectionCount: zeroCounts(STREAM_PROTOCOLS) };
    const t = this.time();
    const bytes = this.streamBytes(vhost, app, s, t);
    const rates = this.streamRates(vhost, app, s, t);
    const counts = this.streamConnections(vhost, app, s, t);
    return {
      ...base,
      uptime: s.connected ? Math.max(0, Math.floor(t - s.sessionStart)) : 0,
      bytesIn: bytes.in,
      bytesOut: bytes.out,
      bytesInRate: rates.in,
      bytesOutRate: rates.out,
      totalConnections: sumCounts(counts),
      connectionCount: counts,
    };
  }

  // ---- history

  /**
   * `monitoring/historic`: an `entries` envelope (its shape is undocumented on real servers) with one sample
   * a minute over the last `count` minutes, oldest first. Past samples are recomputed from the curves for
   * the objects that exist now.
   */
  history<T extends object>(current: () => T | undefined, count = 5, stepSeconds = 60): { serverName: string; entries: Array<T & { timestamp: number }> } | undefined {
    if (current() === undefined) return undefined;
    const now = this.time();
    const entries: Array<T & { timestamp: number }> = [];
    for (let k = count - 1; k >= 0; k--) {
      const t = Math.max(this.settings.serverStartedAt, now - k * stepSeconds);
      this.sampleTime = t;
      try {
        const sample = current();
        if (sample) entries.push({ timestamp: Math.round(this.settings.epochMsAtZero + t * 1000), ...sample });
      } finally {
        this.sampleTime = undefined;
      }
    }
    return { serverName: SERVER_NAME, entries };
  }

  // ---- internals

  private time(): number {
    return this.sampleTime ?? this.clock.now();
  }

  /**
   * `{I}/streamrecorders`: the recorders of the instance (as in its `recorders`); an unknown or not running
   * instance has none. Undefined for an unknown vhost or application (the API's 404).
   */
  streamRecorders(vhost: string, app: string, instance: string): { serverName: string; instanceName: string; streamrecorder: RecorderItem[] } | undefined {
    const a = this.topology.app(vhost, app);
    if (!a) return undefined;
    const running = instance === DEFAULT_INSTANCE && a.startedAt !== undefined;
    return { serverName: SERVER_NAME, instanceName: instance, streamrecorder: running ? this.recordersOf(vhost, a, instance) : [] };
  }

  private instanceOf(vhost: string, a: AppNode, instance: string): InstanceBody {
    const streams = [...a.streams.values()];
    return {
      name: instance,
      incomingStreams: streams.map((s) => ({
        applicationInstance: instance,
        name: s.name,
        sourceIp: s.sourceIp,
        isRecordingSet: s.recording,
        isStreamManagerStream: s.streamManager,
        isPublishedToVOD: false,
        isConnected: s.connected,
        isPTZEnabled: false,
        ptzPollingInterval: 2000,
        ptzPollingIntervalMinimum: 1000,
      })),
      outgoingStreams: [],
      recorders: this.recordersOf(vhost, a, instance),
      streamGroups: [],
    };
  }

  /** One default recorder per recording stream; it has written what the stream received this session. */
  private recordersOf(vhost: string, a: AppNode, instance: string): RecorderItem[] {
    const t = this.time();
    return [...a.streams.values()]
      .filter((s) => s.recording)
      .map((s) => ({ s, on: s.connected && (s.recorderState === undefined || /^recording/i.test(s.recorderState)) }))
      .map(({ s, on }) => ({
        recorderName: s.name,
        instanceName: instance,
        applicationName: a.name,
        // A real 4.7 server's case (wowza-api.md).
        recorderState: s.recorderState ?? (s.connected ? 'Recording in Progress' : 'Waiting for stream'),
        recorderErrorString: s.recorderError ?? '',
        defaultRecorder: true,
        segmentationType: 'None',
        outputPath: '/usr/local/WowzaStreamingEngine/content',
        baseFile: `${s.name}.mp4`,
        fileFormat: 'MP4',
        fileVersionDelegateName: 'com.wowza.wms.livestreamrecord.manager.StreamRecorderFileVersionDelegate',
        fileTemplate: '${BaseFileName}_${RecordingStartTime}_${SegmentNumber}',
        segmentDuration: 900_000,
        segmentSize: 10_485_760,
        segmentSchedule: '0 * * * * *',
        recordData: false,
        startOnKeyFrame: true,
        splitOnTcDiscontinuity: false,
        backBufferTime: 3000,
        option: 'Version existing file',
        moveFirstVideoFrameToZero: true,
        currentSize: on ? this.streamBytes(vhost, a.name, s, t).in : 0,
        currentDuration: on ? Math.max(0, Math.floor((t - s.sessionStart) * 1000)) : 0,
        currentFile: on ? `/usr/local/WowzaStreamingEngine/content/${s.name}.mp4` : '',
        recordingStartTime: on ? wowzaRecorderTime(this.settings.epochMsAtZero + s.sessionStart * 1000) : '',
        timeScale: 1000,
        defaultAudioSearchPosition: true,
        skipKeyFrameUntilAudioTimeout: 10,
      }));
  }

  private profile(vhost: string, app: string, s: StreamNode): StreamProfile {
    const key = `${vhost}/${app}/${s.name}`;
    let p = this.profiles.get(key);
    if (p) return p;
    const seed = this.settings.seed;
    // A rendition carries a share of its source's bitrate; its audience is its own.
    const sourceKey = s.renditionOf === undefined ? key : `${vhost}/${app}/${s.renditionOf}`;
    const sourceRate = Math.round(between(100_000, 800_000, seed, 'bitrate', sourceKey));
    const rate = s.renditionOf === undefined ? sourceRate : Math.round(sourceRate * renditionShare(s.name.slice(s.renditionOf.length + 1)));
    const meanViewers = unit(seed, 'audience', key) < 0.15 ? 0 : Math.round(between(1, 40, seed, 'viewers', key));
    // Profiles are recomputable, so a topology that churns through many names just starts the cache over.
    if (this.profiles.size >= 200_000) this.profiles.clear();
    p = {
      bytesIn: wave(seed, rate, 0.05, 0.25, 'in', key),
      viewers: wave(seed, meanViewers, 0.2, 0.6, 'viewers', key),
      weights: STREAM_PROTOCOLS.map((proto) => between(0, 1, seed, 'weight', key, proto) ** 2 * (proto === 'CUPERTINO' ? 4 : 1)),
    };
    this.profiles.set(key, p);
    return p;
  }

  private streamBytes(vhost: string, app: string, s: StreamNode, t: number): Bytes {
    const p = this.profile(vhost, app, s);
    const end = s.connected ? t : Math.min(t, s.stoppedAt ?? t);
    return {
      in: Math.floor(integral(p.bytesIn, s.sessionStart, end)),
      out: Math.floor(p.bytesIn.base * integral(p.viewers, s.sessionStart, end)),
    };
  }

  private streamRates(vhost: string, app: string, s: StreamNode, t: number): Bytes {
    if (!s.connected) return { in: 0, out: 0 };
    const p = this.profile(vhost, app, s);
    return { in: Math.round(at(p.bytesIn, t)), out: Math.round(p.bytesIn.base * at(p.viewers, t)) };
  }

  private streamConnections(vhost: string, app: string, s: StreamNode, t: number): Record<string, number> {
    const p = this.profile(vhost, app, s);
    const total = s.connected ? Math.max(0, Math.round(at(p.viewers, t))) : 0;
    const split = apportion(total, p.weights);
    return Object.fromEntries(STREAM_PROTOCOLS.map((proto, i) => [proto, split[i]!]));
  }

  private appBytes(vhost: string, a: AppNode, t: number): Bytes {
    if (a.startedAt === undefined) return { in: 0, out: 0 };
    const bytes = { ...(this.retiredApp.get(`${vhost}\u0000${a.name}`) ?? { in: 0, out: 0 }) };
    for (const s of a.streams.values()) {
      const b = this.streamBytes(vhost, a.name, s, t);
      bytes.in += b.in;
      bytes.out += b.out;
    }
    return bytes;
  }

  private appConnections(vhost: string, a: AppNode, t: number): Record<string, number> {
    const counts = zeroCounts(HOST_PROTOCOLS);
    for (const s of a.streams.values()) addCounts(counts, this.streamConnections(vhost, a.name, s, t));
    return counts;
  }

  private serverConnections(t: number): number {
    let n = 0;
    for (const v of this.topology.vhostNodes()) for (const a of v.apps.values()) n += sumCounts(this.appConnections(v.name, a, t));
    return n;
  }

  private totalMemory(): number {
    return 2 ** (34 + (hash32(this.settings.seed, 'memory-size') % 3)); // 16, 32 or 64 GiB
  }

  private diskTotal(): number {
    return 500 * 1000 ** 3;
  }
}

function emptyInstance(name: string): InstanceBody {
  return { name, incomingStreams: [], outgoingStreams: [], recorders: [], streamGroups: [] };
}

function add(map: Map<string, Bytes>, key: string, b: Bytes): void {
  const cur = map.get(key) ?? { in: 0, out: 0 };
  map.set(key, { in: cur.in + b.in, out: cur.out + b.out });
}

function zeroCounts(keys: readonly string[]): Record<string, number> {
  return Object.fromEntries(keys.map((k) => [k, 0]));
}

function addCounts(into: Record<string, number>, from: Record<string, number>): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

function sumCounts(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

/**
 * A recorder's start time as a real server writes it: `yyyy-MM-dd-HH.mm.ss.SSS-zzz` (a 4.7 server:
 * `2019-06-07-18.15.28.934-+08:00`); the simulated server's zone is UTC.
 */
function wowzaRecorderTime(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2019-06-07T18:15:28.934Z
  return `${iso.slice(0, 10)}-${iso.slice(11, 13)}.${iso.slice(14, 16)}.${iso.slice(17, 23)}-+00:00`;
}
