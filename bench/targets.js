import { bytes, int, ms, ratio } from './lib/format.js';

/**
 * The targets of issues 9 and 16, checked against what this run measured. `met` is undefined when the
 * section that measures a target did not run. Issue 16 judges every target at the defaults, as users run
 * the exporter; a tuned row is shown beside, never judged.
 */

const MiB = 1024 * 1024;

const notRun = (target) => ({ target, measured: 'not run', met: undefined });

function pollTargets(poll) {
  const out = [];
  const at1000 = poll.rows.filter((r) => r.streams === 1000 && r.mode === 'collectors');
  const fast = at1000.filter((r) => r.ms <= 1500);
  const auto = at1000.find((r) => r.concurrency === 'auto');
  const fixed32 = at1000.find((r) => r.concurrency === 32);
  out.push(
    auto && fixed32
      ? {
          target: 'unlimited capacity: auto reaches the throughput of a fixed 32 (1,000 streams)',
          measured: `auto ${ms(auto.ms)}, fixed 32 ${ms(fixed32.ms)}`,
          // Within 10%: both are medians of a few cycles on a shared machine.
          met: auto.ms <= fixed32.ms * 1.1,
        }
      : notRun('unlimited capacity: auto reaches the throughput of a fixed 32'),
  );
  const speedups = at1000.filter((r) => r.speedupVsSerial !== undefined);
  out.push(
    speedups.length === 0
      ? notRun('1,000 streams: >= 10x faster than the serial baseline')
      : {
          target: '1,000 streams: >= 10x faster than the serial baseline',
          measured: speedups.map((r) => `c${r.concurrency}: ${ratio(r.speedupVsSerial)}`).join(', '),
          // Both at the same setting: the concurrency that meets 1.5 s must also be 10x the serial baseline.
          met: fast.some((r) => r.speedupVsSerial >= 10),
        },
  );
  const off = poll.rows.filter((r) => r.requests !== r.expectedRequests);
  out.push({
    target: 'requests per cycle = 5 + 2 x apps + streams (linear)',
    measured: off.length === 0 ? `all ${poll.rows.length} rows exact` : off.map((r) => `${r.streams} streams: ${r.requests} vs ${r.expectedRequests}`).join('; '),
    met: off.length === 0,
  });
  if (poll.disabled.length > 0) {
    const wrong = poll.disabled.filter((d) => d.saved !== d.expectedSaved);
    out.push({
      target: 'a disabled collector costs 0 requests',
      measured: wrong.length === 0 ? 'each disabled collector saved exactly its own requests' : wrong.map((d) => `${d.disabled}: saved ${d.saved}, expected ${d.expectedSaved}`).join('; '),
      met: wrong.length === 0,
    });
  }
  return out;
}

function scrapeTargets(rows) {
  const r = rows.find((x) => x.targetSeries === 20_000 && !x.label);
  const tuned = rows.find((x) => x.targetSeries === 20_000 && x.label === 'MALLOC_ARENA_MAX=2');
  const busy = rows.find((x) => x.targetSeries === 20_000 && x.label.startsWith('busy'));
  if (!r) return [notRun('/metrics with 20,000 series: p99 <= 50 ms'), notRun('exporter RSS <= 100 MB at 20,000 series')];
  const mb = (n) => `${(n / 1e6).toFixed(0)} MB`;
  return [
    // Prometheus asks for gzip: both answers count.
    { target: '/metrics with 20,000 series: p99 <= 50 ms', measured: `p99 ${ms(r.p99)}, gzip p99 ${ms(r.gzipP99)} (${int(r.series)} series)`, met: r.p99 <= 50 && r.gzipP99 <= 50 },
    {
      // Judged at the defaults (`serve` as users start it, no environment), at the peak of a poll interval.
      // Issue 27 lowered it from 120 MB (issue 16) to 100 MB on a quiet machine.
      target: 'exporter peak RSS over a poll interval <= 100 MB at 20,000 series, defaults, quiet machine',
      measured: `peak ${mb(r.peakRss)} (after GC ${mb(r.rss)})` + (tuned ? `; ${tuned.label}: peak ${mb(tuned.peakRss)}, after GC ${mb(tuned.rss)}` : ''),
      met: r.peakRss <= 100 * 1e6,
    },
    busy
      ? { target: 'the same while two CPU-bound processes run beside it: <= 120 MB (issues 26, 27)', measured: `peak ${mb(busy.peakRss)} (after GC ${mb(busy.rss)})`, met: busy.peakRss <= 120 * 1e6 }
      : notRun('20,000 series on a busy machine: <= 120 MB'),
  ];
}

function defaultsTargets(d, latencyMs) {
  const out = [];
  const at1000 = d.sizes.find((s) => s.streams === 1000);
  const at5000 = d.sizes.find((s) => s.streams === 5000);
  if (at1000) {
    out.push({
      target: `defaults, 1,000 streams at ${latencyMs} ms: a stream cycle <= 1.5 s`,
      measured: `${ms(at1000.steadyMs)} (max ${ms(at1000.maxMs)}; first, cold: ${ms(at1000.firstMs)}), limit ${at1000.limit}`,
      met: at1000.maxMs <= 1500,
    });
  }
  if (at5000) {
    out.push({
      // Issue 31's request budget (50 a second by default) stretches the interval at this size; each cycle is still whole.
      target: `defaults, 5,000 streams at ${latencyMs} ms: every stream in every cycle, no failed poll`,
      measured: `${at5000.everyStreamEveryCycle ? 'every stream in every cycle' : 'streams missing'}, ${at5000.failedPolls} failed; cycle ${ms(at5000.steadyMs)} (max ${ms(at5000.maxMs)}), limit ${at5000.limit}; every ${at5000.intervalSeconds ?? '?'} s (request budget)`,
      met: at5000.everyStreamEveryCycle && at5000.failedPolls === 0,
    });
  }
  for (const c of d.capacity) {
    out.push({
      target: `capacity ${c.capacity}, ${c.streams} streams: cycle <= 1.3 x ideal, p95 queue wait <= ${ms(1.5 * latencyMs)}`,
      measured: `${ms(c.cycleMs)} = ${c.ratio.toFixed(2)} x ideal ${ms(c.idealMs)}; p95 wait ${ms(c.p95WaitMs)}; limit ${c.limit}`,
      met: c.ok && c.ratio <= 1.3 && c.p95WaitMs <= 1.5 * latencyMs,
    });
  }
  const k = d.counts;
  out.push({
    target: 'connectioncounts, ~5,000 streams: all viewers within 10 s, 1 request a cycle, = REST',
    measured: `all after ${ms(k.allViewersAfterMs ?? NaN)}; ${k.countsRequestsPerCycle} connectioncounts and ${k.streamRequestsPerCycle} stream requests a cycle; ${k.equalToRest}/${k.streams} equal`,
    met: k.allViewersAfterMs !== undefined && k.allViewersAfterMs <= 10_000 && k.countsRequestsPerCycle === 1 && k.equalToRest === k.streams,
  });
  return out;
}

function churnTarget(c) {
  const before = c.phases.find((p) => p.phase === 'before churn');
  const after = c.phases.at(-1);
  const grew = after.heapUsed - before.heapUsed;
  return {
    target: 'memory comes back down after 1 h-equivalent of churn',
    measured: `heap ${bytes(before.heapUsed)} before, ${bytes(after.heapUsed)} after (${grew >= 0 ? '+' : ''}${(grew / MiB).toFixed(1)} MiB); series ${int(before.series)} -> ${int(after.series)}`,
    // Within 10% (and 2 MiB of noise) of where it started: a leak keyed by stream would add megabytes.
    met: after.heapUsed <= before.heapUsed * 1.1 + 2 * MiB && after.series === before.series,
  };
}

function logTargets(throughput, delay, followIntervalMs) {
  const out = [];
  if (!throughput) {
    out.push(notRun('log parse + forward to NDJSON >= 150,000 lines/s'));
    out.push(notRun('log parse + Loki push >= 150,000 lines/s'));
  } else {
    // The default settings are what is judged; the one-thread row shows what the parse threads add. Issue 16
    // asks NDJSON; Loki is held to the same figure in a row of its own, so neither hides the other.
    const row = (variant) => throughput.rows.find((r) => r.variant === variant);
    for (const [variant, target] of [
      ['ndjson', 'log parse + forward to NDJSON >= 150,000 lines/s'],
      ['loki', 'log parse + Loki push >= 150,000 lines/s'],
    ]) {
      const r = row(variant);
      if (!r) {
        out.push(notRun(target));
        continue;
      }
      const all = r.allLinesPerSecond ?? [r.linesPerSecond];
      const spread = all.length > 1 ? `median of ${all.length} runs, ${int(Math.min(...all))}-${int(Math.max(...all))}` : 'one run';
      out.push({ target, measured: `${int(r.linesPerSecond)} lines/s (${spread})`, met: r.linesPerSecond >= 150_000 });
    }
  }
  if (!delay) out.push(notRun(`log end-to-end delay <= follow interval + 1 s`));
  else {
    out.push({
      target: `log end-to-end delay <= follow interval + 1 s (${ms(followIntervalMs + 1000)})`,
      measured: `max ${ms(delay.max)}, p50 ${ms(delay.p50)}, ${delay.arrived}/${delay.markers} lines arrived`,
      met: delay.arrived === delay.markers && delay.max <= followIntervalMs + 1000,
    });
  }
  return out;
}

/** Issue 27: a one-stream server as a new user runs it. */
function footprintTargets(rows) {
  const one = rows.find((r) => r.streams === 1 && !r.busy);
  if (!one) return [notRun('small server: steady RSS <= 60 MB, peak <= 75 MB')];
  const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
  return [
    { target: 'small server (1 app, 1 stream, metrics only): steady RSS <= 60 MB', measured: `${mb(one.steadyRss)} (${int(one.series)} series)`, met: one.steadyRss <= 60 * 1e6 },
    { target: 'small server: peak RSS (VmHWM over 60 s, start-up included) <= 75 MB', measured: mb(one.peakRss), met: one.peakRss <= 75 * 1e6 },
  ];
}

export function evaluateTargets(results, { followIntervalMs, latencyMs }) {
  return [
    ...(results.footprint ? footprintTargets(results.footprint) : [notRun('footprint targets (issue 27)')]),
    ...(results.defaults ? defaultsTargets(results.defaults, latencyMs) : [notRun('targets at the defaults (issue 16)')]),
    ...(results.poll ? pollTargets(results.poll) : [notRun('poll cycle targets')]),
    ...(results.scrape ? scrapeTargets(results.scrape) : scrapeTargets([])),
    ...(results.churn ? [churnTarget(results.churn)] : [notRun('memory comes back down after churn')]),
    ...logTargets(results['log-throughput'], results['log-delay'], followIntervalMs),
  ];
}
