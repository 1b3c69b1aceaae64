import { M } from '../metrics/definitions.js';
import type { Collector } from './collector.js';

/** `/v2/machine/monitoring/current`: CPU, memory, Java heap, disk, uptime, connections. One request. */
export const machineCollector: Collector = {
  name: 'machine',
  description: 'machine CPU, memory, heap, disk (/v2/machine/monitoring/current)',
  async poll(ctx, out) {
    const m = await ctx.limit(() => ctx.client.machineCurrent(ctx.signal));
    const server = ctx.server;
    const pct = (v: number | null | undefined) => (v === null || v === undefined ? undefined : v / 100);
    out.add(M.machineCpu, { server, mode: 'idle' }, pct(m.cpuIdle));
    out.add(M.machineCpu, { server, mode: 'user' }, pct(m.cpuUser));
    out.add(M.machineCpu, { server, mode: 'system' }, pct(m.cpuSystem));
    out.add(M.machineMemoryFree, { server }, m.memoryFree);
    out.add(M.machineMemoryUsed, { server }, m.memoryUsed);
    out.add(M.machineHeapFree, { server }, m.heapFree);
    out.add(M.machineHeapUsed, { server }, m.heapUsed);
    out.add(M.machineDiskFree, { server }, m.diskFree);
    out.add(M.machineDiskUsed, { server }, m.diskUsed);
    out.add(M.machineUptime, { server }, m.serverUptime);
    out.add(M.machineConnections, { server }, m.connectionCount);
  },
};
