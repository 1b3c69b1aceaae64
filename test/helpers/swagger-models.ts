import { loadSwaggerModels, type Endpoint, type JsonType, type ObjectType, type SwaggerModels } from './swagger-documents.js';

/**
 * Answers of a WSE 4.9.0 server made from its own Swagger models (swagger-documents.ts loads them), for the
 * official-answers server and the end-to-end test of the exporter against the official shapes:
 *
 * - `extreme`: every number is Number.MIN_SAFE_INTEGER, every string "string", every boolean true, every array
 *   one item: what a server could send that the schema still allows, to see the exporter refuse the values
 *   and not the poll;
 * - `realistic`: values like a real server's (wowza-api.md, wse-rest-api.md): non-negative, CPU percentages
 *   that add up, totals that are sums of the level below.
 *
 * In both modes the names that walk the tree (vhost `id`, application `id`, instance `name`, incoming stream
 * `name`) come from the topology, so discovery finds the objects it then asks about.
 */

export * from './swagger-documents.js';

export type AnswerMode = 'extreme' | 'realistic';

export interface OfficialApp {
  name: string;
  transcoder?: boolean;
  dvr?: boolean;
  streamTargets?: boolean;
  /** Source streams of the `_definst_` instance. */
  streams: string[];
  /** Streams with a recorder. */
  recording?: string[];
}
export interface OfficialTopology {
  vhosts: Array<{ name: string; apps: OfficialApp[] }>;
}

export const DEFAULT_INSTANCE = '_definst_';
export const DEFAULT_SERVER = '_defaultServer_';
export const DEFAULT_TOPOLOGY: OfficialTopology = {
  vhosts: [{ name: '_defaultVHost_', apps: [{ name: 'live', transcoder: true, dvr: true, streamTargets: true, streams: ['cam1'], recording: ['cam1'] }] }],
};

/** The path parameters of the request (MODELS.md's names) and the objects that exist. */
export interface AnswerVars {
  serverName?: string;
  vhostName?: string;
  appName?: string;
  instanceName?: string;
  streamName?: string;
  logType?: string;
  logName?: string;
  topology?: OfficialTopology;
}

/** Keys real servers send in `connectionCount` (MODELS.md); applications and vhosts add WEBM and DVRCHUNKS. */
const STREAM_PROTOCOLS = ['RTMP', 'CUPERTINO', 'MPEGDASH', 'SANJOSE', 'SMOOTH', 'RTP', 'WEBRTC'] as const;
const HOST_PROTOCOLS = [...STREAM_PROTOCOLS, 'WEBM', 'DVRCHUNKS'] as const;

const EXTREME_NUMBER = Number.MIN_SAFE_INTEGER;
const LOG_TYPES = ['wowzastreamingengine_access', 'wowzastreamingengine_error', 'wowzastreamingengine_stats'];
const SERVER_VERSION = 'Wowza Streaming Engine 4.9.0 build20240806164318';
const HEAP_MAX_MB = 3160;
/** `version` of the envelope: real servers send a string of digits that changes when the configuration is saved. */
const VERSION = '1718291745000';

let loaded: SwaggerModels | undefined;
/** The documents of test/fixtures/reference, read once. */
export function swaggerModels(): SwaggerModels {
  return (loaded ??= loadSwaggerModels());
}

type Json = Record<string, unknown>;

/**
 * The answer of `endpoint` for `vars`, or undefined where a server answers 404 (an unknown server, vhost or
 * application). A stream unknown to an existing application is answered, as real servers do (with values).
 */
export function answerFor(endpoint: Endpoint, mode: AnswerMode, vars: AnswerVars = {}, models: SwaggerModels = swaggerModels()): Json | undefined {
  const topology = vars.topology ?? DEFAULT_TOPOLOGY;
  const server = vars.serverName ?? DEFAULT_SERVER;
  if (endpoint !== 'machineCurrent' && server !== DEFAULT_SERVER) return undefined;
  const vhost = vars.vhostName === undefined ? undefined : topology.vhosts.find((v) => v.name === vars.vhostName);
  const app = vars.appName === undefined ? undefined : vhost?.apps.find((a) => a.name === vars.appName);
  if (vars.vhostName !== undefined && !vhost) return undefined;
  if (vars.appName !== undefined && !app) return undefined;

  const model = models.response(endpoint);
  const g = new Generator(mode);
  const body = g.object(model);
  const instance = vars.instanceName ?? DEFAULT_INSTANCE;

  switch (endpoint) {
    case 'machineCurrent':
      g.realistic(body, model, machine(topology));
      break;
    case 'serverStatus':
      g.realistic(body, model, status(topology));
      break;
    case 'vhosts': {
      const item = itemModel(model, 'vhosts');
      body.vhosts = topology.vhosts.map((v, i) => {
        const o = g.object(item);
        g.identity(o, item, { id: v.name });
        g.realistic(o, item, { href: `/v2/servers/${server}/vhosts/${v.name}`, connectingIPAddress: '*', connectingPort: 1935 + i, connectingSSLEnable: false });
        return o;
      });
      break;
    }
    case 'vhostCurrent':
      g.realistic(body, model, vhostStats(vhost!));
      break;
    case 'applications': {
      const item = itemModel(model, 'applications');
      body.applications = vhost!.apps.map((a) => {
        const o = g.object(item);
        g.identity(o, item, { id: a.name });
        g.realistic(o, item, {
          href: `/v2/servers/${server}/vhosts/${vhost!.name}/applications/${a.name}`,
          appType: 'Live',
          dvrEnabled: !!a.dvr,
          drmEnabled: false,
          transcoderEnabled: !!a.transcoder,
          streamTargetsEnabled: !!a.streamTargets,
        });
        return o;
      });
      break;
    }
    case 'applicationCurrent':
      g.realistic(body, model, appStats(vhost!.name, app!));
      break;
    case 'instances': {
      // An application with no stream has no running instance: an empty list, as on real servers.
      const item = itemModel(model, 'instanceList');
      body.instanceList = app!.streams.length === 0 ? [] : [g.instance(item, vhost!.name, app!, DEFAULT_INSTANCE)];
      break;
    }
    case 'streamCurrent':
      g.identity(body, model, { name: vars.streamName ?? '' });
      g.realistic(body, model, { applicationInstance: instance, ...streamStats(vhost!.name, app!.name, vars.streamName ?? '') });
      break;
    case 'streamRecorders': {
      const item = itemModel(model, 'streamrecorder');
      g.realistic(body, model, { instanceName: instance });
      if (mode === 'realistic') body.streamrecorder = (app!.recording ?? []).map((s) => g.recorder(item, app!.name, instance, s));
      break;
    }
    case 'pushPublishMapEntries': {
      const item = itemModel(model, 'mapEntries');
      if (mode === 'realistic') body.mapEntries = app!.streamTargets ? app!.streams.slice(0, 1).map((s) => g.mapEntry(item, s)) : [];
      break;
    }
    case 'logTypes':
      g.realistic(body, model, { serverLogType: LOG_TYPES });
      break;
    case 'logFiles': {
      const item = itemModel(model, 'serverLogFiles');
      if (mode === 'realistic') {
        body.serverLogFiles = LOG_TYPES.map((t, i) => {
          const o = g.object(item);
          g.realistic(o, item, { id: `${t}.log`, href: `/v2/servers/${server}/logfiles/${t}.log`, fileSize: 20_480 * (i + 1), startDateMS: Date.UTC(2025, 0, 14) });
          return o;
        });
      }
      break;
    }
    case 'logCurrent':
    case 'logFile':
      g.realistic(body, model, logPage());
      break;
  }
  return body;
}

/** The object type of the items of `model.field` (an array of objects in the documents). */
function itemModel(model: ObjectType, field: string): ObjectType {
  const t = model.fields[field];
  if (t?.kind !== 'array' || t.items.kind !== 'object') throw new Error(`${model.model}.${field} is not an array of objects in the documents`);
  return t.items;
}

/** Fills values by type in the mode, then sets named fields, refusing any the model does not have. */
class Generator {
  constructor(readonly mode: AnswerMode) {}

  /**
   * An object with every field of the model. Realistic: zeros, empty strings, false, empty lists, and the
   * envelope as servers send it on every object: the server's name, a `version`, no `saveFieldList`.
   */
  object(t: ObjectType): Json {
    const o = Object.fromEntries(Object.entries(t.fields).map(([k, v]) => [k, this.value(v)]));
    if (this.mode === 'realistic') {
      delete o.saveFieldList;
      if ('serverName' in o) o.serverName = DEFAULT_SERVER;
      if ('version' in o) o.version = VERSION;
    }
    return o;
  }

  value(t: JsonType): unknown {
    const extreme = this.mode === 'extreme';
    switch (t.kind) {
      case 'integer':
      case 'number':
        return extreme ? EXTREME_NUMBER : 0;
      case 'string':
        return extreme ? 'string' : '';
      case 'boolean':
        return extreme;
      case 'array':
        return extreme ? [this.value(t.items)] : [];
      case 'map':
        return Object.fromEntries(STREAM_PROTOCOLS.slice(0, 6).map((p) => [p, extreme ? EXTREME_NUMBER : 0]));
      case 'object':
        return this.object(t);
    }
  }

  /** Names that walk the tree: set in both modes. */
  identity(o: Json, t: ObjectType, values: object): void {
    set(o, t, values);
  }

  /** Plausible values: set in realistic mode only (extreme keeps what value() made). */
  realistic(o: Json, t: ObjectType, values: object): void {
    if (this.mode === 'realistic') set(o, t, values);
  }

  instance(t: ObjectType, vhost: string, app: OfficialApp, instance: string): Json {
    const o = this.object(t);
    this.identity(o, t, { name: instance });
    const streamItem = itemModel(t, 'incomingStreams');
    o.incomingStreams = app.streams.map((s, i) => {
      const item = this.object(streamItem);
      this.identity(item, streamItem, { name: s });
      this.realistic(item, streamItem, {
        applicationInstance: instance,
        sourceIp: `wowz://198.51.100.${(hash(vhost, app.name, s) % 250) + 1}:${50_000 + i}`,
        isRecordingSet: (app.recording ?? []).includes(s),
        isStreamManagerStream: false,
        isPublishedToVOD: false,
        isConnected: true,
        isPTZEnabled: false,
        ptzPollingInterval: 2000,
        ptzPollingIntervalMinimum: 1000,
      });
      return item;
    });
    if (this.mode === 'realistic') o.recorders = (app.recording ?? []).map((s) => this.recorder(itemModel(t, 'recorders'), app.name, instance, s));
    return o;
  }

  /** StreamRecorderConfig; `currentDuration` is in milliseconds, `recorderErrorString` empty when fine (wowza-api.md). */
  recorder(t: ObjectType, app: string, instance: string, stream: string): Json {
    const o = this.object(t);
    this.realistic(o, t, {
      recorderName: stream,
      instanceName: instance,
      applicationName: app,
      recorderState: 'Recording in progress',
      recorderErrorString: '',
      defaultRecorder: true,
      segmentationType: 'None',
      outputPath: '/usr/local/WowzaStreamingEngine/content',
      baseFile: `${stream}.mp4`,
      fileFormat: 'MP4',
      fileVersionDelegateName: 'com.wowza.wms.livestreamrecord.manager.StreamRecorderFileVersionDelegate',
      fileTemplate: '${BaseFileName}_${RecordingStartTime}_${SegmentNumber}',
      segmentDuration: 900_000,
      segmentSize: 10_485_760,
      segmentSchedule: '0 * * * * *',
      recordData: true,
      startOnKeyFrame: true,
      splitOnTcDiscontinuity: false,
      backBufferTime: 3000,
      option: 'Version existing file',
      moveFirstVideoFrameToZero: true,
      currentSize: 734_003_200,
      currentDuration: 3_600_000,
      currentFile: `/usr/local/WowzaStreamingEngine/content/${stream}.mp4`,
      // Its format is not documented; any non-empty string says "recording".
      recordingStartTime: '2025-01-14T12:45:22.000Z',
      timeScale: 90_000,
      defaultAudioSearchPosition: true,
      skipKeyFrameUntilAudioTimeout: 10,
    });
    return o;
  }

  /** PushPublishStreamAppConfig of an RTMP stream target; `streamName` and `password` are secrets (wowza-api.md). */
  mapEntry(t: ObjectType, stream: string): Json {
    const o = this.object(t);
    this.realistic(o, t, {
      entryName: `${stream}-youtube`,
      sessionStatus: 'Active',
      enabled: true,
      sourceStreamName: stream,
      profile: 'rtmp',
      streamName: 'abcd-efgh-ijkl-mnop',
      application: 'live2',
      host: 'a.rtmp.youtube.com',
      port: 1935,
      userName: 'publisher',
      password: 'not-for-metrics',
      appInstance: DEFAULT_INSTANCE,
      originalTimecodeThreshold: '0x100000',
      connectionFlashVersion: 'LNX 9,0,124,2',
    });
    return o;
  }
}

function set(o: Json, t: ObjectType, values: object): void {
  for (const [k, v] of Object.entries(values)) {
    // The generator may only fill the model's fields: what it sends is what the documents say a server sends.
    if (!(k in t.fields)) throw new Error(`${t.model} has no field ${k}`);
    o[k] = v;
  }
}

/** FNV-1a: varied but repeatable values per object. */
function hash(...parts: string[]): number {
  let h = 0x811c9dc5;
  for (const c of parts.join('/')) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

/** The `monitoring/current` answer of an application or an incoming stream (CurrentIncomingStreamStatistics). */
export interface Stats {
  uptime: number;
  bytesIn: number;
  bytesOut: number;
  bytesInRate: number;
  bytesOutRate: number;
  totalConnections: number;
  connectionCount: Record<string, number>;
}

function streamStats(vhost: string, app: string, stream: string): Stats {
  const h = hash(vhost, app, stream);
  const uptime = 600 + (h % 86_400);
  const connectionCount: Record<string, number> = { RTMP: h % 3, CUPERTINO: 5 + (h % 20), MPEGDASH: h % 4, SANJOSE: 0, SMOOTH: 0, RTP: (h >>> 4) % 2, WEBRTC: (h >>> 8) % 3 };
  const viewers = sum(connectionCount);
  const bytesInRate = 250_000 + (h % 500_000);
  return { uptime, bytesIn: bytesInRate * uptime, bytesOut: bytesInRate * viewers * uptime, bytesInRate, bytesOutRate: bytesInRate * viewers, totalConnections: viewers, connectionCount };
}

function appStats(vhost: string, app: OfficialApp): Stats {
  const total: Stats = { uptime: 0, bytesIn: 0, bytesOut: 0, bytesInRate: 0, bytesOutRate: 0, totalConnections: 0, connectionCount: Object.fromEntries(HOST_PROTOCOLS.map((p) => [p, 0])) };
  for (const s of app.streams) {
    const st = streamStats(vhost, app.name, s);
    total.uptime = Math.max(total.uptime, st.uptime + 60);
    for (const k of ['bytesIn', 'bytesOut', 'bytesInRate', 'bytesOutRate', 'totalConnections'] as const) total[k] += st[k];
    for (const [p, n] of Object.entries(st.connectionCount)) total.connectionCount[p]! += n;
  }
  return total;
}

/** CurrentVHostStatistics has no rates (MODELS.md). */
function vhostStats(vhost: { name: string; apps: OfficialApp[] }): Omit<Stats, 'bytesInRate' | 'bytesOutRate'> {
  const apps = vhost.apps.map((a) => appStats(vhost.name, a));
  const connectionCount = Object.fromEntries(HOST_PROTOCOLS.map((p) => [p, apps.reduce((n, a) => n + a.connectionCount[p]!, 0)]));
  return {
    uptime: SERVER_UPTIME,
    bytesIn: apps.reduce((n, a) => n + a.bytesIn, 0),
    bytesOut: apps.reduce((n, a) => n + a.bytesOut, 0),
    totalConnections: sum(connectionCount),
    connectionCount,
  };
}

const SERVER_UPTIME = 1_209_600;
const TOTAL_MEMORY = 34_359_738_368;
const MEMORY_USED = 13_958_643_712;
const HEAP_USED = 1_288_490_189;

function serverConnections(topology: OfficialTopology): number {
  return topology.vhosts.reduce((n, v) => n + vhostStats(v).totalConnections, 0);
}

/** Integer CPU percentages that add up to 100, bytes that add up to their totals (wowza-api.md). */
function machine(topology: OfficialTopology): Json {
  return {
    serverUptime: SERVER_UPTIME,
    cpuIdle: 78,
    cpuUser: 16,
    cpuSystem: 6,
    memoryFree: TOTAL_MEMORY - MEMORY_USED,
    memoryUsed: MEMORY_USED,
    heapFree: HEAP_MAX_MB * 1024 * 1024 - HEAP_USED,
    heapUsed: HEAP_USED,
    diskFree: 348_127_985_664,
    diskUsed: 151_872_014_336,
    connectionCount: serverConnections(topology),
  };
}

/** ServerStatusConfig: formats from wowza-api.md (`javaMaxHeapSize` like `3160MB`, `licenseExpireDate` `YYYY-MM-DD`). */
function status(topology: OfficialTopology): Json {
  const apps = topology.vhosts.flatMap((v) => v.apps);
  const transcoding = apps.filter((a) => a.transcoder);
  return {
    wseName: 'Wowza Streaming Engine',
    serverVersion: SERVER_VERSION,
    serverBuild: '20240806164318',
    licenseType: 'Subscription',
    licenseExpireDate: `${new Date().getUTCFullYear() + 1}-06-30`,
    serverMode: 'standalone',
    osName: 'Linux',
    osVersion: '5.15.0-105-generic',
    osArchitecture: 'amd64',
    osBitness: '64',
    totalMemory: TOTAL_MEMORY,
    availableMemory: TOTAL_MEMORY - MEMORY_USED,
    processorCores: 8,
    gpuAcceleration: 'none',
    javaVersion: '11.0.23',
    javaVMVersion: '11.0.23+9',
    javaBitness: '64',
    javaName: 'OpenJDK 64-Bit Server VM',
    javaVendor: 'Eclipse Adoptium',
    javaHome: '/usr/local/WowzaStreamingEngine-4.9.0/java',
    javaMaxHeapSize: `${HEAP_MAX_MB}MB`,
    timeRunning: SERVER_UPTIME + 0.125,
    currentConnections: serverConnections(topology),
    maxConnections: 0,
    maxIncommingStreams: 0,
    restAPIAvailable: true,
    httpOriginAvailable: false,
    transcoderLicensed: true,
    transcoderAvailable: true,
    transcoderWatermark: false,
    transcoderLicenses: 8,
    transcoderLicensesInUse: Math.min(8, transcoding.reduce((n, a) => n + a.streams.length, 0)),
    transcoderApplications: transcoding.map((a) => a.name),
    dvrLicensed: true,
    dvrInUse: apps.some((a) => a.dvr),
    dvrApplications: apps.filter((a) => a.dvr).map((a) => a.name),
    drmLicensed: false,
    drmInUse: false,
    drmApplications: [],
    nativeBase: '/usr/local/WowzaStreamingEngine-4.9.0/lib-native/linux64',
  };
}

/** A page of a log file: the W3C headers and one line (wowza-api.md, Logs). */
function logPage(): Json {
  const fields = 'date\ttime\ttz\tx-event\tx-category\tx-severity\tx-status\tx-ctx\tx-comment';
  const lines = [
    '#Version: 1.0',
    '#Start-Date: 2025-01-14 12:00:00 UTC',
    `#Software: ${SERVER_VERSION}`,
    '#Date: 2025-01-14',
    `#Fields: ${fields}`,
    '2025-01-14\t12:00:01\tUTC\tcomment\tserver\tINFO\t200\t-\tWowza Streaming Engine is started!',
  ];
  const length = Buffer.byteLength(lines.join('\n') + '\n');
  return {
    logLines: lines,
    retLineCount: lines.length,
    startOffset: 0,
    endOffset: length,
    fileLength: length,
    filterStr: '',
    logFields: fields,
    logVersion: '1.0',
    logStartDate: '2025-01-14 12:00:00 UTC',
    logSoftware: SERVER_VERSION,
    logDate: '2025-01-14',
    searchStr: '',
    regexSearch: false,
    startDate: '',
    endDate: '',
  };
}

function sum(m: Record<string, number>): number {
  return Object.values(m).reduce((a, b) => a + b, 0);
}
