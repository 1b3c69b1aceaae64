import { z } from 'zod';

/**
 * Response schemas for the WSE REST API. They accept what real servers send rather than what the published
 * schema says: unknown fields pass through, numbers may arrive as strings, machine values may be objects,
 * and several fields may be null or missing.
 */

/** A number, a numeric string, or an object carrying the number (`{"value": 12}`), as real servers vary. */
const toNumber = (v: unknown): unknown => {
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    if ('value' in o) return toNumber(o.value);
    const first = Object.values(o).find((x) => typeof x === 'number' || (typeof x === 'string' && x.trim() !== '' && Number.isFinite(Number(x))));
    return first === undefined ? v : toNumber(first);
  }
  return v;
};
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

export const MachineCurrent = z.looseObject({
  serverUptime: optNum,
  cpuIdle: optNum,
  cpuUser: optNum,
  cpuSystem: optNum,
  memoryFree: optNum,
  memoryUsed: optNum,
  heapFree: optNum,
  heapUsed: optNum,
  diskFree: optNum,
  diskUsed: optNum,
  connectionCount: optNum,
});
export type MachineCurrent = z.infer<typeof MachineCurrent>;

export const ServerStatus = z.looseObject({
  serverVersion: optStr,
  serverBuild: optStr,
  licenseType: optStr,
  licenseExpireDate: optStr,
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
});
export type ServerStatus = z.infer<typeof ServerStatus>;

export const VHostList = z.looseObject({
  vhosts: z
    .array(
      z.looseObject({
        id: z.string(),
        href: optStr,
        connectingIPAddress: optStr,
        connectingPort: optNum,
        connectingSSLEnable: optBool,
      }),
    )
    .nullish()
    .transform((v) => v ?? []),
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
  connectionCount: z
    .record(z.string(), num.nullable())
    .nullish()
    .transform((v) => v ?? {}),
});
export type CurrentStats = z.infer<typeof CurrentStats>;

export const ApplicationList = z.looseObject({
  applications: z
    .array(
      z.looseObject({
        id: z.string(),
        href: optStr,
        appType: optStr,
        dvrEnabled: optBool,
        drmEnabled: optBool,
        transcoderEnabled: optBool,
        streamTargetsEnabled: optBool,
      }),
    )
    .nullish()
    .transform((v) => v ?? []),
});
export type ApplicationList = z.infer<typeof ApplicationList>;

export const IncomingStream = z.looseObject({
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

const list = <T extends z.ZodType>(item: T) =>
  z
    .array(item)
    .nullish()
    .transform((v) => v ?? []);

export const InstanceList = z.looseObject({
  instanceList: list(
    z.looseObject({
      name: z.string(),
      incomingStreams: list(IncomingStream),
      outgoingStreams: list(z.unknown()),
      recorders: list(z.unknown()),
      streamGroups: list(z.unknown()),
    }),
  ),
});
export type InstanceList = z.infer<typeof InstanceList>;

/** `{S}/logs`: log type names, as strings or as objects naming them. */
export const LogTypeList = z.looseObject({
  serverLogType: list(
    z.union([
      z.string(),
      z.looseObject({ id: optStr, name: optStr, logType: optStr, type: optStr }).transform((o) => o.id ?? o.name ?? o.logType ?? o.type ?? ''),
    ]),
  ),
});

export const LogFileList = z.looseObject({
  serverLogFiles: list(
    z.looseObject({
      id: z.string(),
      href: optStr,
      fileSize: optNum,
      startDateMS: optNum,
    }),
  ),
});
export type LogFileList = z.infer<typeof LogFileList>;

export const LogPageBody = z.looseObject({
  logLines: list(z.string()),
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
