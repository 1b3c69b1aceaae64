import { M, type MetricDef } from '../metrics/definitions.js';
import { parseJavaSize, type ServerStatus } from '../wowza/schemas.js';
import type { Collector } from './collector.js';

/** `4.9.4` out of `Wowza Streaming Engine 4.9.4 build20250114124522`; the whole text when no version is in it. */
export function versionOf(s: ServerStatus): { version: string; build: string } {
  const text = s.serverVersion ?? '';
  const version = /(\d+\.\d+\.\d+(?:\.\d+)?)/.exec(text)?.[1] ?? (text || 'unknown');
  const build = s.serverBuild ?? /build\s*(\d+)/i.exec(text)?.[1] ?? '';
  return { version, build };
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * The licence expiry as Unix seconds. `undefined` when the licence has no date (absent or empty); `null` when there is
 * a value the exporter cannot read. The reference shows `YYYY-MM-DD`; builds differ, so the other likely forms are
 * read too: an ISO date-time, Java's `Date.toString()` (`EEE MMM dd HH:mm:ss zzz yyyy`, read as UTC: the zone name
 * cannot be resolved reliably and a day's precision is what the alert needs), and epoch milliseconds.
 */
export function licenseExpiry(date: string | number | null | undefined): number | null | undefined {
  if (date === null || date === undefined) return undefined;
  const text = String(date).trim();
  if (text === '') return undefined;
  if (/^\d{11,14}$/.test(text)) return Number(text) / 1000;
  const iso = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(text);
  if (iso) return utcSeconds(+iso[1]!, +iso[2]! - 1, +iso[3]!, +(iso[4] ?? 0), +(iso[5] ?? 0), +(iso[6] ?? 0));
  const java = /^[A-Za-z]{3} ([A-Za-z]{3}) (\d{1,2}) (\d{2}):(\d{2}):(\d{2}) \S+ (\d{4})$/.exec(text);
  if (java) {
    const month = MONTHS.indexOf(java[1]!.toLowerCase());
    if (month >= 0) return utcSeconds(+java[6]!, month, +java[2]!, +java[3]!, +java[4]!, +java[5]!);
  }
  return null;
}

function utcSeconds(y: number, mo: number, d: number, h: number, mi: number, s: number): number | null {
  const t = Date.UTC(y, mo, d, h, mi, s);
  const back = new Date(t);
  // Date.UTC rolls 2027-02-31 over into March: a date that does not exist is unreadable, not another day.
  if (!Number.isFinite(t) || back.getUTCMonth() !== mo || back.getUTCDate() !== d) return null;
  return t / 1000;
}

const flag = (v: boolean | null | undefined) => (v === null || v === undefined ? undefined : v ? 1 : 0);

/** `{S}/status`: version, licence, limits, transcoder licences, memory and heap facts, features. One request. */
export const statusCollector: Collector = {
  name: 'status',
  description: 'server version, licence, limits, memory and features ({S}/status)',
  async poll(ctx, out) {
    const s = await ctx.limit(() => ctx.client.serverStatus(ctx.signal));
    const server = ctx.server;
    const { version, build } = versionOf(s);
    out.add(M.serverInfo, { server, version, build, license_type: s.licenseType ?? '', mode: s.serverMode ?? '' }, 1);
    out.addRequired(M.serverUptime, { server }, s.timeRunning, 'timeRunning');
    out.addRequired(M.serverConnections, { server }, s.currentConnections, 'currentConnections');
    out.addRequired(M.serverConnectionsLimit, { server }, s.maxConnections, 'maxConnections');
    out.addRequired(M.serverIncomingStreamsLimit, { server }, s.maxIncommingStreams, 'maxIncommingStreams');
    const expiry = licenseExpiry(s.licenseExpireDate);
    if (expiry === null) out.drop('licenseExpireDate', 'unreadable');
    else out.add(M.serverLicenseExpiry, { server }, expiry, 'licenseExpireDate');
    out.addRequired(M.serverTranscoderLicenses, { server }, s.transcoderLicenses, 'transcoderLicenses');
    out.addRequired(M.serverTranscoderLicensesInUse, { server }, s.transcoderLicensesInUse, 'transcoderLicensesInUse');
    if (s.javaMaxHeapSize === null || s.javaMaxHeapSize === undefined || s.javaMaxHeapSize === '') out.drop('javaMaxHeapSize', 'missing');
    else {
      const heap = parseJavaSize(s.javaMaxHeapSize);
      if (heap === undefined) out.drop('javaMaxHeapSize', 'unreadable');
      else out.add(M.serverJavaHeapMax, { server }, heap, 'javaMaxHeapSize');
    }
    out.addRequired(M.serverMemoryTotal, { server }, s.totalMemory, 'totalMemory');
    out.addRequired(M.serverMemoryAvailable, { server }, s.availableMemory, 'availableMemory');
    out.addRequired(M.serverProcessorCores, { server }, s.processorCores, 'processorCores');
    // Features as ServerStatusConfig has them (wse-swagger-4.9.0/MODELS.md). The transcoder's "in use" is its
    // licences in use: the model has no transcoderInUse.
    const feature = (def: MetricDef, name: string, value: number | undefined, field: string) => {
      if (value === undefined) out.drop(field, 'missing');
      else out.add(def, { server, feature: name }, value, field);
    };
    feature(M.serverFeatureLicensed, 'transcoder', flag(s.transcoderLicensed), 'transcoderLicensed');
    feature(M.serverFeatureLicensed, 'dvr', flag(s.dvrLicensed), 'dvrLicensed');
    feature(M.serverFeatureLicensed, 'drm', flag(s.drmLicensed), 'drmLicensed');
    feature(M.serverFeatureInUse, 'dvr', flag(s.dvrInUse), 'dvrInUse');
    feature(M.serverFeatureInUse, 'drm', flag(s.drmInUse), 'drmInUse');
    const inUse = s.transcoderLicensesInUse;
    if (inUse !== null && inUse !== undefined && Number.isFinite(inUse) && inUse >= 0) feature(M.serverFeatureInUse, 'transcoder', inUse > 0 ? 1 : 0, 'transcoderLicensesInUse');
    feature(M.serverFeatureAvailable, 'transcoder', flag(s.transcoderAvailable), 'transcoderAvailable');
    feature(M.serverFeatureAvailable, 'rest_api', flag(s.restAPIAvailable), 'restAPIAvailable');
    feature(M.serverFeatureAvailable, 'http_origin', flag(s.httpOriginAvailable), 'httpOriginAvailable');
    feature(M.serverFeatureApplications, 'transcoder', s.transcoderApplications?.length, 'transcoderApplications');
    feature(M.serverFeatureApplications, 'dvr', s.dvrApplications?.length, 'dvrApplications');
    feature(M.serverFeatureApplications, 'drm', s.drmApplications?.length, 'drmApplications');
  },
};
