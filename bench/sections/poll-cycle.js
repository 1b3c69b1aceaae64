import { startWorker } from '../lib/children.js';
import { median } from '../lib/stats.js';

/**
 * Poll cycle time and API requests per cycle, by topology size and concurrency, against the simulator
 * with a fixed per-request latency; the naive serial baseline in the same run; and what each disabled
 * collector saves.
 */

const SIM = new URL('../workers/simulator.js', import.meta.url).href;
const POLLER = new URL('../workers/poller.js', import.meta.url).href;

/** Requests one cycle must send with every collector on: machine, status, the discovery walk, then per object. */
export function expectedRequests({ vhosts, apps, streams }) {
  const discovery = 1 + vhosts + apps; // vhost list, application list per vhost, instance list per application
  return 2 + discovery + vhosts + apps + streams; // + machine, status, vhost current, application current, stream current
}

/** What disabling one collector should save per cycle (the discovery walk goes when no collector needs it). */
const SAVED_BY = {
  machine: () => 1,
  status: () => 1,
  vhost: (t) => t.vhosts,
  application: (t) => t.apps,
  instance: () => 0,
  stream: (t) => t.streams,
  // Recorders come inside the instance list the walk reads anyway; no application here has stream targets.
  recorder: () => 0,
  stream_target: () => 0,
  // The walk goes only when no collector that needs it is left: recorder and stream_target need it too.
  'vhost+application+instance+stream+recorder+stream_target': (t) => t.vhosts + t.apps + t.streams + 1 + t.vhosts + t.apps,
};

/** A simulator and a poller, each in its own process. */
async function startPair(streams, latencyMs) {
  const sim = await startWorker('simulator', SIM);
  const poller = await startWorker('poller', POLLER);
  const topology = await sim.call('start', { latencyMs, streams });
  return {
    sim,
    poller,
    topology,
    setup: (concurrency, disabled = []) =>
      poller.call('setup', { url: topology.url, username: topology.username, password: topology.password, concurrency, disabled }),
    close: async () => {
      await poller.close();
      await sim.close();
    },
  };
}

/** Runs `reps` cycles (`naive`: the serial baseline); per cycle its wall time, CPU and the requests the simulator saw. */
async function measure(pair, reps, naive, timeoutMs) {
  const cycles = [];
  for (let i = 0; i < reps; i++) {
    await pair.sim.call('resetCounters');
    const r = await pair.poller.call(naive ? 'naiveCycle' : 'cycle', {}, timeoutMs);
    const counters = await pair.sim.call('counters');
    if (r.failures?.length) throw new Error(`poll failed: ${r.failures.join('; ')}`);
    cycles.push({ ms: r.ms, cpuMs: r.cpuMs, requests: counters.total, series: r.series });
  }
  return cycles;
}

function summarize(kind, concurrency, pair, cycles) {
  return {
    streams: pair.topology.streams,
    apps: pair.topology.apps,
    mode: kind,
    concurrency,
    cycles: cycles.length,
    ms: median(cycles.map((c) => c.ms)),
    allMs: cycles.map((c) => c.ms),
    cpuMs: median(cycles.map((c) => c.cpuMs)),
    requests: median(cycles.map((c) => c.requests)),
    expectedRequests: expectedRequests(pair.topology),
    series: cycles[0].series,
  };
}

/** Repetitions that keep a configuration near `budgetMs` of measuring, at least one. */
function repsFor(estimateMs, budgetMs = 6000, max = 5) {
  return Math.max(1, Math.min(max, Math.floor(budgetMs / Math.max(1, estimateMs))));
}

/** Warms a pair up with one cycle at `concurrency`: connection set-up and JIT are not what is measured. */
async function warmUp(pair, concurrency) {
  await pair.setup(concurrency);
  await pair.poller.call('cycle', {}, 600_000);
}

/**
 * `sizes`: total incoming streams. Concurrency 1 and the serial baseline are latency-bound (one request
 * at a time: the processes are asleep > 90% of the time), so where they take long they all run at once,
 * each against a simulator of its own, before anything else; every other configuration runs alone.
 */
export async function runPollCycles({ sizes, concurrencies, latencyMs, disabledAt, skipSlow = false, log }) {
  const rows = [];
  const disabled = [];
  // `auto` (the default) adapts; against this simulator, which has room to spare, it should reach the fixed ones.
  const numeric = (c) => (c === 'auto' ? 32 : c);
  const top = Math.max(...concurrencies.map(numeric));
  const estimate = (streams, c) => ((streams * 1.02 + 10) / numeric(c)) * latencyMs * 1.3 + 3 * latencyMs;
  const slowSizes = sizes.filter((s) => estimate(s, 1) > 8000);

  if (slowSizes.length > 0 && skipSlow) {
    log(`  concurrency 1 and the serial baseline at ${slowSizes.join(', ')} streams: skipped (--quick)`);
  } else if (slowSizes.length > 0) {
    const pairs = [];
    try {
      for (const streams of slowSizes) for (const naive of [false, true]) pairs.push({ naive, pair: await startPair(streams, latencyMs) });
      await Promise.all(pairs.map(({ pair }) => warmUp(pair, top)));
      await Promise.all(pairs.map(({ pair }) => pair.setup(1)));
      log(`  concurrency 1 and the serial baseline at ${slowSizes.join(', ')} streams, side by side (~${Math.round(estimate(Math.max(...slowSizes), 1) / 1000)} s)`);
      const measured = await Promise.all(pairs.map(({ pair, naive }) => measure(pair, 1, naive, 900_000)));
      pairs.forEach(({ pair, naive }, i) => rows.push(summarize(naive ? 'serial baseline' : 'collectors', 1, pair, measured[i])));
    } finally {
      await Promise.all(pairs.map(({ pair }) => pair.close()));
    }
  }

  for (const streams of sizes) {
    const a = await startPair(streams, latencyMs);
    try {
      await warmUp(a, top);
      if (!slowSizes.includes(streams)) {
        await a.setup(1);
        const reps = repsFor(estimate(streams, 1));
        rows.push(summarize('collectors', 1, a, await measure(a, reps, false)));
        rows.push(summarize('serial baseline', 1, a, await measure(a, reps, true)));
      }
      for (const c of concurrencies.filter((x) => x !== 1)) {
        await a.setup(c);
        log(`  ${streams} streams: concurrency ${c}`);
        // `auto` learns in its first cycle: at least three, so the median is a settled one.
        rows.push(summarize('collectors', c, a, await measure(a, Math.max(c === 'auto' ? 3 : 1, repsFor(estimate(streams, c))), false, 600_000)));
      }
      if (streams === disabledAt.streams) {
        log(`  ${streams} streams: one collector disabled at a time`);
        await a.setup(disabledAt.concurrency);
        const all = (await measure(a, 1, false))[0];
        disabled.push({ disabled: 'none', requests: all.requests, saved: 0, expectedSaved: 0, ms: all.ms });
        for (const [name, expected] of Object.entries(SAVED_BY)) {
          await a.setup(disabledAt.concurrency, name.split('+'));
          const cycle = (await measure(a, 1, false))[0];
          disabled.push({ disabled: name, requests: cycle.requests, saved: all.requests - cycle.requests, expectedSaved: expected(a.topology), ms: cycle.ms });
        }
      }
    } finally {
      await a.close();
    }
  }

  const order = (c) => (c === 'auto' ? Infinity : c);
  rows.sort((x, y) => x.streams - y.streams || (x.mode === y.mode ? order(x.concurrency) - order(y.concurrency) : x.mode === 'collectors' ? -1 : 1));
  // The naive serial baseline over the collectors' time at each concurrency: how many times faster.
  for (const row of rows) {
    const serial = rows.find((r) => r.streams === row.streams && r.mode === 'serial baseline');
    row.speedupVsSerial = serial && row.mode === 'collectors' ? serial.ms / row.ms : undefined;
  }
  return { rows, disabled };
}
