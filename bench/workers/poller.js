import { performance } from 'node:perf_hooks';
import { wseCollectorsEnabled } from '../../dist/collectors/registry.js';
import { runCollector } from '../../dist/polling/poll-result.js';
import { ServerSession } from '../../dist/polling/server-session.js';
import { parseConfig, resolveConfig } from '../../dist/config/load.js';
import { silentLogger } from '../../dist/base/logger.js';
import { SnapshotStore } from '../../dist/metrics/snapshot-store.js';
import { WowzaClient } from '../../dist/wowza/client.js';
import { serveRpc } from '../lib/rpc-worker.js';

/**
 * One poll cycle, measured without the scheduler's timers: every enabled collector of one server starts
 * at once and shares one discovery walk, exactly as the scheduler's jobs do when their intervals line up,
 * and each result is rendered into the snapshot store. Also the naive serial baseline: the same requests
 * sent one after another by a loop that awaits each answer.
 */

const log = silentLogger();
/** Far beyond any cycle measured here: the bench measures, it does not cut polls short. */
const CYCLE_DEADLINE_MS = 600_000;

let current;

const cpuMs = (usage) => (usage.user + usage.system) / 1000;

function runtimeConfig({ url, username, password, concurrency, disabled = [] }) {
  const collectors = Object.fromEntries(disabled.map((name) => [name, false]));
  const config = parseConfig({
    servers: [{ url, username, auth: 'basic' }],
    // This section measures what concurrency buys; the request budget (on by default, 50 a second) would make every
    // cycle last requests / 50 s whatever the concurrency. The defaults section measures the exporter with it.
    poll: { interval: '10m', timeout: '60s', concurrency, max_requests_per_second: 0 },
    discovery: { max_streams_per_server: 100_000 },
    collectors,
  });
  return resolveConfig(config, { WOWZA_PASSWORD: password });
}

async function closeCurrent() {
  await current?.server.close();
  await current?.naive.close();
  current = undefined;
}

/** The naive exporter: one request after another, each awaited before the next is sent. */
async function naiveCycle(client, signal) {
  await client.machineCurrent(signal);
  await client.serverStatus(signal);
  const vhosts = await client.vhosts(signal);
  for (const { id: vhost } of vhosts.vhosts) {
    await client.vhostCurrent(vhost, signal);
    const apps = await client.applications(vhost, signal);
    for (const { id: app } of apps.applications) {
      await client.applicationCurrent(vhost, app, signal);
      const instances = await client.instances(vhost, app, signal);
      for (const instance of instances.instanceList) {
        for (const stream of instance.incomingStreams) await client.streamCurrent(vhost, app, instance.name, stream.name, signal);
      }
    }
  }
}

serveRpc({
  async setup(params) {
    await closeCurrent();
    const runtime = runtimeConfig(params);
    const target = runtime.servers[0];
    // Discovery is invalidated before every cycle instead of aging out: one walk per cycle.
    const server = new ServerSession(target, runtime.config, 3_600_000, log);
    const naive = new WowzaClient({ ...target, connections: 1 });
    current = { server, naive, collectors: wseCollectorsEnabled(runtime.collectors).filter((c) => c.appliesTo?.(target) ?? true), store: new SnapshotStore(), name: target.name };
    return { collectors: current.collectors.map((c) => c.name) };
  },

  async cycle() {
    const { server, collectors, store, name } = current;
    server.discovery.invalidate();
    const signal = AbortSignal.timeout(CYCLE_DEADLINE_MS);
    const cpu = process.cpuUsage();
    const started = performance.now();
    const results = await Promise.all(collectors.map((c) => runCollector(c, server.context(c.name, signal, log))));
    for (const r of results) if (r.ok) store.put(name, r.collector, r.set);
    const ms = performance.now() - started;
    return {
      ms,
      cpuMs: cpuMs(process.cpuUsage(cpu)),
      series: results.reduce((n, r) => n + r.set.size, 0),
      failures: results.filter((r) => !r.ok).map((r) => `${r.collector}: ${r.error.message}`),
    };
  },

  async naiveCycle() {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await naiveCycle(current.naive, AbortSignal.timeout(CYCLE_DEADLINE_MS));
    return { ms: performance.now() - started, cpuMs: cpuMs(process.cpuUsage(cpu)) };
  },

  close: closeCurrent,
});
