import { z } from 'zod';

/**
 * Response schemas for the WSE REST API (test/fixtures/reference/wse-rest-api.md, with what real servers do from
 * wowza-api.md): as strict as the reference and no stricter. A list wrapper without its key is an unreadable
 * answer; item fields the exporter does not need, or the reference does not show, may be absent or null;
 * numbers may arrive as strings. Unknown fields pass through the fixed-size answers; the lists (and their items),
 * which grow with the server and are kept between polls by discovery, keep only the fields named here: a server that
 * pads its items with megabytes of other fields costs one parse, not memory from one poll to the next.
 */

/** A number or a numeric string (`"bytesIn":"123"`, as some servers and proxies send). */
const toNumber = (v: unknown): unknown => (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v);
export const num = z.preprocess(toNumber, z.number());
const optNum = num.nullish();

const toBool = (v: unknown): unknown => {
  if (v === 'true' || v === 'TRUE' || v === 1) return true;
  if (v === 'false' || v === 'FALSE' || v === 0) return false;
  return v;
};
export const bool = z.preprocess(toBool, z.boolean());
const optBool = bool.nullish();
const optStr = z.string().nullish();

/**
 * A list a wrapper must carry (`vhosts`, `applications`, `instanceList`...): without its key the answer
 * cannot be read, which must fail loudly rather than pass as an empty server. `null` is an empty list.
 */
function requiredList<T extends z.ZodType>(key: string, item: T) {
  return z
    .array(item, { error: (issue) => (issue.input === undefined ? `missing: the answer has no "${key}" list` : undefined) })
    .nullable()
    .transform((v) => v ?? []);
}

/** An item list the reference does not promise: absent stays absent (its metric is left out, not 0). */
const optionalList = <T extends z.ZodType>(item: T) => z.array(item).nullish().transform((v) => v ?? undefined);

/**
 * A machine statistic. The reference calls each "an object" without showing its fields; real servers send
 * plain numbers (wowza-api.md). Only a plain number, a numeric string or an object's numeric `value` is
 * read: taking any numeric-looking member could pick `version` or a timestamp.
 */
const machineValue = z
  .preprocess((v) => (v !== null && typeof v === 'object' && !Array.isArray(v) && 'value' in v ? toNumber((v as { value: unknown }).value) : toNumber(v)), z.unknown())
  .pipe(
    z.number({
      error: (issue) =>
        `expected a number, or an object holding it in "value"; got ${JSON.stringify(issue.input)?.slice(0, 80) ?? String(issue.input)}`,
    }),
  )
  .nullish();

/** `/v2/machine/monitoring/current` (reference: Machine monitoring (current)). */
export const MachineCurrent = z.looseObject({
  serverUptime: optNum,
  cpuIdle: machineValue,
  cpuUser: machineValue,
  cpuSystem: machineValue,
  memoryFree: machineValue,
  memoryUsed: machineValue,
  heapFree: machineValue,
  heapUsed: machineValue,
  diskFree: machineValue,
  diskUsed: machineValue,
  connectionCount: machineValue,
});
export type MachineCurrent = z.infer<typeof MachineCurrent>;

export const ServerStatus = z.looseObject({
  serverVersion: optStr,
  serverBuild: optStr,
  licenseType: optStr,
  // The reference shows YYYY-MM-DD; other builds' forms (epoch ms among them) are read by the status collector.
  licenseExpireDate: z.union([z.string(), z.number()]).nullish(),
  serverMode: optStr,
  totalMemory: optNum,
  availableMemory: optNum,
  processorCores: optNum,
  javaMaxHeapSize: z.union([z.string(), z.number()]).nullish(),
  timeRunning: optNum,
  currentConnections: optNum,
  maxConnections: optNum,
  maxIncommingStreams: optNum,
  transcoderLicenses: optNum,
  transcoderLicensesInUse: optNum,
  // Feature facts as ServerStatusConfig (wse-swagger-4.9.0/MODELS.md) has them.
  transcoderLicensed: optBool,
  transcoderAvailable: optBool,
  transcoderWatermark: optBool,
  dvrLicensed: optBool,
  dvrInUse: optBool,
  drmLicensed: optBool,
  drmInUse: optBool,
  restAPIAvailable: optBool,
  httpOriginAvailable: optBool,
  transcoderApplications: z.array(z.unknown()).nullish(),
  dvrApplications: z.array(z.unknown()).nullish(),
  drmApplications: z.array(z.unknown()).nullish(),
});
export type ServerStatus = z.infer<typeof ServerStatus>;

/**
 * The name of a list item whose fields the reference does not show (`vhosts[]`, `serverLogFiles[]`): `id` as
 * real servers send it, else `name`, else the last segment of `href`.
 */
function itemName(o: { id?: unknown; name?: unknown; href?: unknown }): string | undefined {
  for (const v of [o.id, o.name]) if (typeof v === 'string' && v !== '') return v;
  if (typeof o.href === 'string') {
    const last = o.href.replace(/\/+$/, '').split('/').pop();
    if (last) {
      try {
        return decodeURIComponent(last);
      } catch {
        return last;
      }
    }
  }
  return undefined;
}

const namedItem = <S extends z.ZodRawShape>(shape: S) =>
  z.object({ id: optStr, name: optStr, href: optStr, ...shape }).transform((o, ctx) => {
    const id = itemName(o);
    if (id === undefined) {
      ctx.addIssue({ code: 'custom', path: ['id'], message: 'missing: the item has no id, name or href' });
      return z.NEVER;
    }
    return { ...o, id };
  });

/** `{S}/vhosts` (reference: Vhost list `vhosts`; item fields not shown there, wowza-api.md lists them). */
export const VHostList = z.object({
  vhosts: requiredList(
    'vhosts',
    namedItem({
      connectingIPAddress: optStr,
      connectingPort: optNum,
      connectingSSLEnable: optBool,
    }),
  ),
});
export type VHostList = z.infer<typeof VHostList>;

/** `monitoring/current` of a vhost, application or incoming stream: the same shape at each level. */
export const CurrentStats = z.looseObject({
  uptime: optNum,
  bytesIn: optNum,
  bytesOut: optNum,
  bytesInRate: optNum,
  bytesOutRate: optNum,
  totalConnections: optNum,
  // A map of protocol to count (MODELS.md: required, but Swagger 1.2 cannot describe it). Absent stays absent: the
  // collector counts it as a missing value instead of exporting no protocol at all without a word.
  connectionCount: z.record(z.string(), num.nullable()).nullish(),
});
export type CurrentStats = z.infer<typeof CurrentStats>;

/** `{V}/applications` (reference: Application list, AppShortObject). `appType` may be null on real servers. */
export const ApplicationList = z.object({
  applications: requiredList(
    'applications',
    z.object({
      id: z.string(),
      href: optStr,
      appType: optStr,
      dvrEnabled: optBool,
      drmEnabled: optBool,
      transcoderEnabled: optBool,
      streamTargetsEnabled: optBool,
    }),
  ),
});
export type ApplicationList = z.infer<typeof ApplicationList>;

export const IncomingStream = z.object({
  name: z.string(),
  applicationInstance: optStr,
  sourceIp: optStr,
  isConnected: optBool,
  isRecordingSet: optBool,
  isStreamManagerStream: optBool,
  isPublishedToVOD: optBool,
  isPTZEnabled: optBool,
  ptzPollingInterval: optNum,
});
export type IncomingStream = z.infer<typeof IncomingStream>;

/**
 * `{A}/instances`. The reference does not show instance fields; wowza-api.md does. The incoming streams are
 * what the exporter is for, so their list must be there; the other lists only feed counts.
 */
export const InstanceList = z.object({
  instanceList: requiredList(
    'instanceList',
    z.object({
      name: z.string(),
      incomingStreams: requiredList('incomingStreams', IncomingStream),
      outgoingStreams: optionalList(z.unknown()),
      recorders: optionalList(z.unknown()),
      streamGroups: optionalList(z.unknown()),
    }),
  ),
});
export type InstanceList = z.infer<typeof InstanceList>;

/**
 * One stream recorder (StreamRecorderConfig in the server's model; wowza-api.md): in an instance's `recorders` and in
 * `{I}/streamrecorders`. Read one at a time, so that one malformed recorder costs only itself; the file and path
 * fields are not read.
 */
export const StreamRecorder = z.object({
  recorderName: z.string().min(1),
  recorderState: optStr,
  recorderErrorString: optStr,
  /** Bytes. */
  currentSize: optNum,
  /** Milliseconds. */
  currentDuration: optNum,
  /** A date string, empty while not recording. */
  recordingStartTime: optStr,
  fileFormat: optStr,
  segmentationType: optStr,
});
export type StreamRecorder = z.infer<typeof StreamRecorder>;

/** `{I}/streamrecorders` (StreamRecordersConfig): the recorders, each read on its own. */
export const StreamRecorderList = z.looseObject({ streamrecorder: requiredList('streamrecorder', z.unknown()) });

/**
 * One stream target (PushPublishStreamAppConfig). A plain object: every field it does not name is stripped at parse, so
 * the secrets an entry carries (`password`, the `streamName` stream key, `facebook.accessToken`, `wowzaCloud.*Key`,
 * `secureTokenSharedSecret`, `srtPassPhrase`; wowza-api.md) never get past this point.
 */
export const MapEntry = z.object({
  entryName: z.string().min(1),
  sourceStreamName: optStr,
  profile: optStr,
  host: optStr,
  port: optNum,
  enabled: optBool,
  sessionStatus: optStr,
});
export type MapEntry = z.infer<typeof MapEntry>;

/** `{A}/pushpublish/mapentries` (PushPublishStreamsAppConfig): the entries, each read on its own. */
export const MapEntryList = z.looseObject({ mapEntries: requiredList('mapEntries', z.unknown()) });

/** `{S}/logs` (reference: Log type list, `serverLogType` array of string); objects naming a type are read too. */
export const LogTypeList = z.looseObject({
  serverLogType: requiredList(
    'serverLogType',
    z.union([
      z.string(),
      z.looseObject({ id: optStr, name: optStr, logType: optStr, type: optStr }).transform((o) => o.id ?? o.name ?? o.logType ?? o.type ?? ''),
    ]),
  ),
});

/**
 * `{S}/logfiles` (reference: Log file list `serverLogFiles`; item fields not shown there). An item that names
 * no file is skipped rather than failing the list: the follower only needs the files it can name.
 */
export const LogFileList = z.object({
  serverLogFiles: requiredList(
    'serverLogFiles',
    z.object({ id: optStr, name: optStr, href: optStr, fileSize: optNum, startDateMS: optNum }).transform((o) => ({ ...o, id: itemName(o) })),
  ).transform((files) => files.filter((f): f is typeof f & { id: string } => f.id !== undefined)),
});
export type LogFileList = z.infer<typeof LogFileList>;

/** Log contents (reference: Log resources); offsets are required, everything else is optional. */
export const LogPageBody = z.looseObject({
  logLines: requiredList('logLines', z.string()),
  retLineCount: optNum,
  startOffset: num,
  endOffset: num,
  fileLength: num,
  logFields: optStr,
  logVersion: optStr,
  logSoftware: optStr,
  logStartDate: z.union([z.string(), z.number()]).nullish(),
  logDate: z.union([z.string(), z.number()]).nullish(),
  startDate: z.union([z.string(), z.number()]).nullish(),
  endDate: z.union([z.string(), z.number()]).nullish(),
  filterStr: optStr,
  searchStr: optStr,
  regexSearch: z.union([z.string(), z.boolean()]).nullish(),
});
export type LogPageBody = z.infer<typeof LogPageBody>;

/** The error envelope: `{"success":false,"message":"...","code":"404","data":null,"wowzaServer":"4.9.4"}`. */
export const ErrorBody = z.looseObject({
  success: optBool,
  message: optStr,
  code: z.union([z.string(), z.number()]).nullish(),
  wowzaServer: optStr,
});

/** `3160MB`, `4G`, `512m`, `1048576` -> bytes. Undefined when the text is not a size. */
export function parseJavaSize(v: string | number | null | undefined): number | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(v);
  if (!m) return undefined;
  const mult: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };
  return Math.round(Number(m[1]) * mult[m[2]!.toLowerCase()]!);
}

/**
 * The answers big enough to be parsed off the event loop (src/wowza/answer-parser.ts), by the name the parser's
 * thread knows them by: a schema is code, and only its name can cross to another thread.
 */
export const LIST_ANSWERS = {
  VHostList,
  ApplicationList,
  InstanceList,
  StreamRecorderList,
  MapEntryList,
  LogTypeList,
  LogFileList,
  LogPageBody,
  ServerStatus,
} as const;
export type ListAnswerName = keyof typeof LIST_ANSWERS;
