import { DEFAULT_VHOST, startSimulator } from '@wowza-exporter/simulator';
import { serveRpc } from '../lib/rpc-worker.js';

/**
 * The Wowza simulator in a process of its own, so its CPU and memory never count as the exporter's.
 * Topology: one vhost, `streams` plain Live streams spread over applications of at most `perApp` each.
 */

let sim;
/** Stream names per application, oldest first (churn replaces the oldest). */
let apps = new Map();
let churnTimer;
let churnSeq = 0;
let churnSteps = 0;

function shape(streams, perApp) {
  const appCount = Math.max(1, Math.ceil(streams / perApp));
  apps = new Map();
  for (let a = 0; a < appCount; a++) {
    const app = `app${a + 1}`;
    sim.topology.addApp(DEFAULT_VHOST, app, { appType: 'Live', running: true });
    apps.set(app, []);
  }
  const names = [...apps.keys()];
  for (let s = 0; s < streams; s++) {
    const app = names[s % appCount];
    const name = `stream${s + 1}`;
    sim.topology.addStream(DEFAULT_VHOST, app, name);
    apps.get(app).push(name);
  }
  return appCount;
}

/** Replaces `fraction` of every application's streams (the oldest) with streams of new names. */
function churnStep(fraction) {
  for (const [app, names] of apps) {
    const k = Math.max(1, Math.round(names.length * fraction));
    for (const name of names.splice(0, k)) sim.topology.removeStream(DEFAULT_VHOST, app, name);
    for (let i = 0; i < k; i++) {
      const name = `churn${++churnSeq}`;
      sim.topology.addStream(DEFAULT_VHOST, app, name);
      names.push(name);
    }
  }
  churnSteps++;
}

serveRpc({
  async start({ latencyMs = 0, streams = 10, perApp = 100, logLinesPerSecond = 0, capacity = 0, frozen = false, auth = 'basic', nonceMaxUses = 0, nonceTtlMs = 60_000 }) {
    if (sim) throw new Error('simulator already started');
    sim = await startSimulator({ latencyMs, capacity, frozen, vhosts: 1, apps: 0, streams: 0, auth, nonceMaxUses, nonceTtlMs, logs: { linesPerSecond: logLinesPerSecond } });
    const appCount = shape(streams, perApp);
    return { url: sim.url, countsUrl: sim.countsUrl, username: sim.username, password: sim.password, apps: appCount, vhosts: 1, streams };
  },

  /** Requests since the last reset: total and per route template. */
  counters() {
    return { total: sim.counters.total, byRoute: sim.counters.byRoute, unauthorized: sim.counters.status(401) };
  },

  /** CPU time this process has used so far (ms). */
  cpu() {
    const u = process.cpuUsage();
    return { ms: (u.user + u.system) / 1000 };
  },

  resetCounters() {
    sim.counters.reset();
    sim.workers.resetWaits();
  },

  /** How long requests waited for a worker (with a capacity) since the last reset. */
  queueWaits() {
    return sim.workers.queueWaits();
  },

  /** The REST monitoring numbers of every stream right now (a frozen simulator keeps them). */
  streamConnections() {
    const out = {};
    for (const [app, names] of apps) {
      for (const name of names) {
        const s = sim.values.stream(DEFAULT_VHOST, app, '_definst_', name);
        out[`${app}/${name}`] = { total: s.totalConnections, byKey: s.connectionCount };
      }
    }
    return out;
  },

  churnStart({ fraction = 0.1, periodMs = 1000 }) {
    clearInterval(churnTimer);
    churnTimer = setInterval(() => churnStep(fraction), periodMs);
  },

  churnStop() {
    clearInterval(churnTimer);
    churnTimer = undefined;
    return { steps: churnSteps, streamsCreated: churnSeq, streams: [...apps.values()].reduce((n, l) => n + l.length, 0) };
  },

  /** Appends one access-log line carrying `marker`; returns when it was written (epoch ms). */
  appendMarker({ marker }) {
    const writtenAt = Date.now();
    sim.logs.append('wowzastreamingengine_access', {
      'x-event': 'comment',
      'x-category': 'server',
      'x-severity': 'INFO',
      'x-status': 200,
      'x-comment': marker,
    });
    return { writtenAt };
  },

  async close() {
    clearInterval(churnTimer);
    await sim?.close();
    sim = undefined;
  },
});
