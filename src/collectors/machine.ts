import { M } from '../metrics/definitions.js';
import type { Collector } from './collector.js';

/** `/v2/machine/monitoring/current`: CPU, memory, Java heap, disk, uptime, connections. One request. */
export const machineCollector: Collector = {
  name: 'machine',
  description: 'machine CPU, memory, heap, disk (/v2/machine/monitoring/current)',
  async poll(ctx, out) {
    const m = await ctx.limit(() => ctx.client.machineCurrent(ctx.signal));
    const server = ctx.server;
    const pct = (v: number | null | undefined) => (v === null || v === undefined ? v : v / 100);
    // Every field is required by CurrentMachineStatistics (wse-swagger-4.9.0/MODELS.md).
    out.addRequired(M.machineCpu, { server, mode: 'idle' }, pct(m.cpuIdle), 'cpuIdle');
    out.addRequired(M.machineCpu, { server, mode: 'user' }, pct(m.cpuUser), 'cpuUser');
    out.addRequired(M.machineCpu, { server, mode: 'system' }, pct(m.cpuSystem), 'cpuSystem');
    out.addRequired(M.machineMemoryFree, { server }, m.memoryFree, 'memoryFree');
    out.addRequired(M.machineMemoryUsed, { server }, m.memoryUsed, 'memoryUsed');
    out.addRequired(M.machineHeapFree, { server }, m.heapFree, 'heapFree');
    out.addRequired(M.machineHeapUsed, { server }, m.heapUsed, 'heapUsed');
    out.addRequired(M.machineDiskFree, { server }, m.diskFree, 'diskFree');
    out.addRequired(M.machineDiskUsed, { server }, m.diskUsed, 'diskUsed');
    out.addRequired(M.machineUptime, { server }, m.serverUptime, 'serverUptime');
    out.addRequired(M.machineConnections, { server }, m.connectionCount, 'connectionCount');
  },
};
