import { M } from '../metrics/definitions.js';
import { parseJavaSize, type ServerStatus } from '../wowza/schemas.js';
import type { Collector } from './collector.js';

/** `4.9.4` out of `Wowza Streaming Engine 4.9.4 build20250114124522`; the whole text when no version is in it. */
export function versionOf(s: ServerStatus): { version: string; build: string } {
  const text = s.serverVersion ?? '';
  const version = /(\d+\.\d+\.\d+(?:\.\d+)?)/.exec(text)?.[1] ?? (text || 'unknown');
  const build = s.serverBuild ?? /build\s*(\d+)/i.exec(text)?.[1] ?? '';
  return { version, build };
}

/** `2027-03-31` as UTC midnight in seconds; undefined for an empty or odd value. */
export function licenseExpiry(date: string | null | undefined): number | undefined {
  if (!date) return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(date.trim());
  if (!m) return undefined;
  const t = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return Number.isFinite(t) ? t / 1000 : undefined;
}

/** `{S}/status`: version, licence, limits, transcoder licences, memory and heap facts. One request. */
export const statusCollector: Collector = {
  name: 'status',
  description: 'server version, licence, limits and memory ({S}/status)',
  async poll(ctx, out) {
    const s = await ctx.limit(() => ctx.client.serverStatus(ctx.signal));
    const server = ctx.server;
    const { version, build } = versionOf(s);
    out.add(M.serverInfo, { server, version, build, license_type: s.licenseType ?? '', mode: s.serverMode ?? '' }, 1);
    out.add(M.serverUptime, { server }, s.timeRunning);
    out.add(M.serverConnections, { server }, s.currentConnections);
    out.add(M.serverConnectionsLimit, { server }, s.maxConnections);
    out.add(M.serverIncomingStreamsLimit, { server }, s.maxIncommingStreams);
    out.add(M.serverLicenseExpiry, { server }, licenseExpiry(s.licenseExpireDate));
    out.add(M.serverTranscoderLicenses, { server }, s.transcoderLicenses);
    out.add(M.serverTranscoderLicensesInUse, { server }, s.transcoderLicensesInUse);
    out.add(M.serverJavaHeapMax, { server }, parseJavaSize(s.javaMaxHeapSize));
    out.add(M.serverMemoryTotal, { server }, s.totalMemory);
    out.add(M.serverMemoryAvailable, { server }, s.availableMemory);
    out.add(M.serverProcessorCores, { server }, s.processorCores);
    // Feature flags vary by version; take every boolean `<x>Enabled` field the server sends.
    for (const [key, value] of Object.entries(s)) {
      const m = /^(\w+?)Enabled$/.exec(key);
      if (!m || typeof value !== 'boolean') continue;
      const feature = m[1]!.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
      out.add(M.serverFeatureEnabled, { server, feature }, value ? 1 : 0);
    }
  },
};
