import type { Field, Shape, Type } from './shape.js';

/**
 * The WSE REST API reference (test/fixtures/reference/wse-rest-api.md), transcribed for the conformance suite:
 * the resources of its section 2 and the rows of its section 4 that the simulator serves. Where the reference
 * says "not shown" (item fields of `vhosts[]` and `serverLogFiles[]`, monitoring statistics, instances, status),
 * the shapes come from docs/wowza-api-notes.md, what real servers send, and say so in `source`.
 *
 * Written from the documents, not from src/wowza/schemas.ts nor from the simulator.
 */

const FACTS = 'wowza-api.md';
const optional = (type: Type, source?: string): Field => ({ type, optional: true, ...(source ? { source } : {}) });
const facts = (type: Type): Field => ({ type, source: FACTS });

/** Section 1, convention 4: `serverName`, `version`, and optionally `saveFieldList`. */
const ENVELOPE: Shape = { serverName: 'string', version: 'string', saveFieldList: optional({ array: 'string' }) };

/** Section 2, Machine monitoring (current): the statistics are "each an object"; real servers send numbers. */
const MACHINE_STAT: Field = { type: ['object', 'number'], source: `reference: object; ${FACTS}: plain numbers` };
export const MACHINE_CURRENT: Shape = {
  ...ENVELOPE,
  heapUsed: MACHINE_STAT,
  heapFree: MACHINE_STAT,
  cpuSystem: MACHINE_STAT,
  cpuUser: MACHINE_STAT,
  cpuIdle: MACHINE_STAT,
  connectionCount: MACHINE_STAT,
  memoryFree: MACHINE_STAT,
  memoryUsed: MACHINE_STAT,
  diskFree: MACHINE_STAT,
  diskUsed: MACHINE_STAT,
  serverUptime: 'int',
};

/** Section 2: "The historic form carries only serverName, saveFieldList, version" (entries: wowza-api.md). */
export const HISTORIC: Shape = { ...ENVELOPE, entries: optional({ array: 'object' }, FACTS) };

/**
 * Status: fields not shown in the reference; wowza-api.md lists them. The feature fields follow the server's own
 * model (wse-swagger-4.9.0/MODELS.md, ServerStatusConfig), which wins over the `dvrEnabled` / `drmEnabled` /
 * `transcoderEnabled` this transcription had: the server sends `*Licensed` / `*InUse` / `*Available` booleans
 * and the lists of applications using each feature, and no `*Enabled` field.
 */
const MODELS = 'wse-swagger-4.9.0/MODELS.md, ServerStatusConfig';
const model = (type: Type): Field => ({ type, source: MODELS });
export const SERVER_STATUS: Shape = {
  serverVersion: facts('string'),
  serverBuild: facts('string'),
  licenseType: facts('string'),
  licenseExpireDate: facts('string'),
  serverMode: facts('string'),
  totalMemory: facts('number'),
  availableMemory: facts('number'),
  processorCores: facts('number'),
  javaMaxHeapSize: facts('string'),
  timeRunning: facts('number'),
  currentConnections: facts('number'),
  maxConnections: facts('number'),
  maxIncommingStreams: facts('number'),
  transcoderLicenses: facts('number'),
  transcoderLicensesInUse: facts('number'),
  transcoderLicensed: model('boolean'),
  transcoderAvailable: model('boolean'),
  transcoderWatermark: model('boolean'),
  transcoderApplications: model({ array: 'string' }),
  dvrLicensed: model('boolean'),
  dvrInUse: model('boolean'),
  dvrApplications: model({ array: 'string' }),
  drmLicensed: model('boolean'),
  drmInUse: model('boolean'),
  drmApplications: model({ array: 'string' }),
  restAPIAvailable: model('boolean'),
  httpOriginAvailable: model('boolean'),
};

/** Section 2, Vhost list: `vhosts`, `serverName`, `saveFieldList`, `version`; item fields from wowza-api.md. */
export const VHOST_LIST: Shape = {
  ...ENVELOPE,
  vhosts: {
    type: { array: { object: { id: 'string', href: 'string', connectingIPAddress: 'string', connectingPort: 'int', connectingSSLEnable: 'boolean' } } },
    source: `reference: array; items ${FACTS}`,
  },
};

/** Statistics of a vhost, application or stream (not shown in the reference; wowza-api.md). */
const STATS: Shape = {
  uptime: facts('number'),
  bytesIn: facts('number'),
  bytesOut: facts('number'),
  bytesInRate: optional('number', `${FACTS}: may be absent at vhost level`),
  bytesOutRate: optional('number', `${FACTS}: may be absent at vhost level`),
  totalConnections: facts('number'),
  connectionCount: facts({ map: 'number' }),
};
export const VHOST_CURRENT: Shape = { ...ENVELOPE, ...STATS };
export const APPLICATION_CURRENT: Shape = { ...ENVELOPE, ...STATS };
export const STREAM_CURRENT: Shape = {
  ...ENVELOPE,
  ...STATS,
  applicationInstance: facts('string'),
  name: facts('string'),
  bytesInRate: facts('number'),
  bytesOutRate: facts('number'),
};

/** Section 2, Application list and AppShortObject. `appType` may be null on real servers (wowza-api.md). */
export const APPLICATION_LIST: Shape = {
  ...ENVELOPE,
  applications: {
    array: {
      object: {
        drmEnabled: 'boolean',
        streamTargetsEnabled: 'boolean',
        appType: { type: ['string', 'null'], source: `reference: string; ${FACTS}: may be null` },
        transcoderEnabled: 'boolean',
        dvrEnabled: 'boolean',
        id: 'string',
        href: 'string',
      },
    },
  },
};

/** Incoming stream items (not shown in the reference; wowza-api.md). */
const INCOMING_STREAM: Shape = {
  name: facts('string'),
  applicationInstance: facts('string'),
  sourceIp: facts('string'),
  isConnected: facts('boolean'),
  isRecordingSet: facts('boolean'),
  isStreamManagerStream: facts('boolean'),
  isPublishedToVOD: facts('boolean'),
  isPTZEnabled: facts('boolean'),
  ptzPollingInterval: facts('number'),
};
const INSTANCE: Shape = {
  name: facts('string'),
  incomingStreams: facts({ array: { object: INCOMING_STREAM } }),
  outgoingStreams: facts({ array: 'any' }),
  recorders: facts({ array: 'any' }),
  streamGroups: facts({ array: 'any' }),
};
export const INSTANCE_LIST: Shape = { ...ENVELOPE, instanceList: facts({ array: { object: INSTANCE } }) };
export const INSTANCE_INFO: Shape = { ...ENVELOPE, ...INSTANCE };

/** Section 2, Log resources. */
export const LOG_TYPE_LIST: Shape = { ...ENVELOPE, serverLogType: { array: 'string' } };
export const LOG_FILE_LIST: Shape = {
  ...ENVELOPE,
  serverLogFiles: {
    type: { array: { object: { id: 'string', href: 'string', fileSize: 'number', startDateMS: 'number' } } },
    source: `reference: array; items ${FACTS}`,
  },
};
export const LOG_CONTENTS: Shape = {
  ...ENVELOPE,
  logLines: { array: 'string' },
  retLineCount: 'int',
  startOffset: 'int',
  endOffset: 'int',
  fileLength: 'int',
  startDate: 'string',
  endDate: 'string',
  logStartDate: 'string',
  logDate: 'string',
  logFields: 'string',
  logSoftware: 'string',
  logVersion: 'string',
  filterStr: 'string',
  searchStr: 'string',
  regexSearch: 'boolean',
};

/** Section 2, Server. */
const LISTENER: Shape = { baseClass: 'string', order: 'int', ...ENVELOPE };
export const SERVER: Shape = {
  ...ENVELOPE,
  name: 'string',
  description: 'string',
  ipAddress: 'string',
  serverId1: 'string',
  serverId2: 'string',
  defaultStreamPrefix: 'string',
  handlerThreadPool: 'string',
  handlerThreadPoolAutoValue: 'string',
  transportThreadPool: 'string',
  transportThreadPoolAutoValue: 'string',
  port: 'int',
  rtpDataPortSharingPort: 'int',
  serverTS: 'int',
  rtpDataPortSharing: 'boolean',
  serverListeners: { object: { ...ENVELOPE, serverListeners: { array: { object: LISTENER } } } },
};

/** Section 1, convention 6: what a successful save or delete answers on some endpoints. */
export const SAVE_RESULT: Shape = { success: 'boolean', message: 'string', data: 'null' };

/** The error envelope: not shown in the reference; wowza-api.md (note `code` is a string). */
export const ERROR_BODY: Shape = { success: facts('boolean'), message: facts('string'), code: facts('string'), data: facts('null') };

export interface Row {
  method: 'GET' | 'PUT';
  /** The path as section 4 writes it. */
  path: string;
  /** The same path with values the simulator knows. */
  example: string;
  status: number;
  shape: Shape;
}

const S = '/v2/servers/_defaultServer_';
const V = `${S}/vhosts/_defaultVHost_`;
const A = `${V}/applications/live`;
const I = `${A}/instances/_definst_`;
const ACCESS = 'wowzastreamingengine_access';

/** Section 4 rows the simulator serves, each with the resource of section 2 it answers. */
export const ROWS: Row[] = [
  { method: 'GET', path: '/v2/machine/monitoring/current', example: '/v2/machine/monitoring/current', status: 200, shape: MACHINE_CURRENT },
  { method: 'GET', path: '/v2/machine/monitoring/historic', example: '/v2/machine/monitoring/historic', status: 200, shape: HISTORIC },
  { method: 'GET', path: '{S}', example: S, status: 200, shape: SERVER },
  { method: 'GET', path: '{S}/status', example: `${S}/status`, status: 200, shape: SERVER_STATUS },
  { method: 'GET', path: '{S}/monitoring/historic', example: `${S}/monitoring/historic`, status: 200, shape: HISTORIC },
  { method: 'GET', path: '{S}/vhosts', example: `${S}/vhosts`, status: 200, shape: VHOST_LIST },
  { method: 'GET', path: '{V}/monitoring/current', example: `${V}/monitoring/current`, status: 200, shape: VHOST_CURRENT },
  { method: 'GET', path: '{V}/monitoring/historic', example: `${V}/monitoring/historic`, status: 200, shape: HISTORIC },
  { method: 'GET', path: '{V}/applications', example: `${V}/applications`, status: 200, shape: APPLICATION_LIST },
  { method: 'GET', path: '{A}/monitoring/current', example: `${A}/monitoring/current`, status: 200, shape: APPLICATION_CURRENT },
  { method: 'GET', path: '{A}/monitoring/historic', example: `${A}/monitoring/historic`, status: 200, shape: HISTORIC },
  { method: 'GET', path: '{A}/instances', example: `${A}/instances`, status: 200, shape: INSTANCE_LIST },
  { method: 'GET', path: '{I}', example: I, status: 200, shape: INSTANCE_INFO },
  {
    method: 'GET',
    path: '{I}/incomingstreams/{streamName}/monitoring/current',
    example: `${I}/incomingstreams/stream1/monitoring/current`,
    status: 200,
    shape: STREAM_CURRENT,
  },
  { method: 'GET', path: '{S}/logs', example: `${S}/logs`, status: 200, shape: LOG_TYPE_LIST },
  { method: 'GET', path: '{S}/logs/{logType}', example: `${S}/logs/${ACCESS}?lineCount=5`, status: 200, shape: LOG_CONTENTS },
  { method: 'GET', path: '{S}/logfiles', example: `${S}/logfiles?order=newestFirst`, status: 200, shape: LOG_FILE_LIST },
  { method: 'GET', path: '{S}/logfiles/{logName}', example: `${S}/logfiles/${ACCESS}.log?lineCount=5`, status: 200, shape: LOG_CONTENTS },
];

/**
 * Section 4 rows of the groups the exporter reads (server level, vhost level, application level monitoring)
 * that the simulator does not serve, and why: the walk covers every row, served or not.
 */
export const NOT_SERVED: Array<{ method: string; path: string; why: string }> = [
  { method: 'GET', path: '/restinfo', why: 'REST configuration information: the exporter never reads it' },
  { method: 'GET', path: '/v2/servers', why: 'server list: the exporter addresses {serverName} from its configuration' },
  { method: 'PUT', path: '{S}/actions/{action}', why: 'server actions: the exporter never acts on a server' },
  { method: 'GET, PUT', path: '{S}/adv', why: 'advanced configuration: never read' },
  { method: 'GET', path: '{S}/logfiles/{logName}/download', why: 'zipped log download: the follower reads lines' },
  { method: 'GET', path: '{S}/sourcecontrol/drivernames', why: 'never read' },
  { method: 'GET, PUT', path: '{S}/vhostlisteners', why: 'never read' },
  { method: 'GET', path: '{S}/transcoder', why: 'never read' },
  { method: 'GET, PUT', path: '{S}/tune', why: 'never read' },
  { method: 'GET, PUT', path: '{S}/monitoring', why: 'monitoring configuration: never read' },
  { method: 'GET', path: '{S}/mediacasters', why: 'never read' },
];
