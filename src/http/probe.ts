import type { Collector } from '../collectors/collector.js';
import { errorReason } from '../collectors/object-errors.js';
import { OneOffSession } from '../polling/server-session.js';
import { connectionsFor, moduleTarget, type RuntimeConfig } from '../config/load.js';
import type { Logger } from '../base/logger.js';
import { M, PROBE } from '../metrics/definitions.js';
import { mergeRendered, renderSet } from '../metrics/exposition.js';
import { MetricSet } from '../metrics/metric-set.js';
import { redactUrl } from '../base/redact.js';
import { apiBase } from '../wowza/api-url.js';

export class ProbeRequestError extends Error {}

/** Margin kept from Prometheus' scrape timeout so the answer arrives before Prometheus gives up. */
const SCRAPE_TIMEOUT_MARGIN_MS = 500;
const DEFAULT_PROBE_TIMEOUT_MS = 10_000;

/**
 * The probe's deadline: Prometheus' scrape timeout less a margin, capped by `capMs` (the module's timeout, or 10 s):
 * like blackbox_exporter, a caller cannot hold the exporter's requests to a server open for as long as it names.
 */
export function probeDeadlineMs(header: string | undefined, capMs = DEFAULT_PROBE_TIMEOUT_MS): number {
  const seconds = header === undefined ? NaN : Number(header);
  if (!Number.isFinite(seconds) || seconds <= 0) return Math.min(DEFAULT_PROBE_TIMEOUT_MS, capMs);
  return Math.min(capMs, Math.max(200, seconds * 1000 - SCRAPE_TIMEOUT_MARGIN_MS));
}

/**
 * Validates `target` and `module` before any request: the module's credentials go only to URLs its
 * allow-list matches.
 */
export function resolveProbe(runtime: RuntimeConfig, params: URLSearchParams) {
  const target = params.get('target');
  if (!target) throw new ProbeRequestError('missing "target" parameter, e.g. /probe?target=http://wowza.example:8087&module=default');
  if (target.length > 2048) throw new ProbeRequestError('"target" is longer than 2048 characters');
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(target) ? target : `http://${target}`);
  } catch {
    throw new ProbeRequestError(`"target" is not a URL: ${JSON.stringify(redactUrl(target).slice(0, 200))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ProbeRequestError('"target" must be an http or https URL');
  if (url.username || url.password) throw new ProbeRequestError('"target" must not carry credentials; modules hold them');
  const moduleName = params.get('module') ?? 'default';
  const module = runtime.modules.get(moduleName);
  if (!module) {
    const known = [...runtime.modules.keys()];
    throw new ProbeRequestError(`unknown module "${moduleName.slice(0, 100)}"${known.length ? ` (configured: ${known.join(', ')})` : ' (no modules configured: add a modules: section)'}`);
  }
  if (url.search || url.hash) throw new ProbeRequestError('"target" must not carry a query or fragment: the REST API\'s paths are appended to it');
  // A path is the API's base (a server behind a reverse proxy under a prefix): allowed_targets must allow it too.
  const normalized = apiBase(url);
  if (module.allowed.length === 0) throw new ProbeRequestError(`module "${moduleName}" has no allowed_targets: it serves target files only, not /probe`);
  if (!module.allowed.some((re) => re.test(normalized))) {
    throw new ProbeRequestError(`target ${normalized} is not in the allowed_targets of module "${moduleName}"`);
  }
  return { url: normalized, module, moduleName };
}

/** Polls one target now into fresh sets and renders them, with how many series they hold; nothing leaks into /metrics. */
export async function probe(
  runtime: RuntimeConfig,
  resolved: ReturnType<typeof resolveProbe>,
  collectors: Collector[],
  deadlineMs: number,
  log: Logger,
  /** Aborts every request of the probe: its caller hung up. */
  callerGone?: AbortSignal,
  /** The level of the line a failing probe writes (log.probe_level). */
  level: 'debug' | 'info' | 'warn' | 'error' = 'debug',
): Promise<{ body: string; series: number; failure?: string }> {
  const started = performance.now();
  const target = moduleTarget(resolved.module, resolved.url, deadlineMs, connectionsFor(runtime.config));
  // Its requests feed only its own limiter: counted in the exporter's registry, every target probed would leave
  // series in /metrics for good (blackbox_exporter renders a probe into a registry of its own, as here).
  const session = new OneOffSession(target, runtime.config, { discoveryMaxAgeMs: deadlineMs, log });
  const signal = callerGone ? AbortSignal.any([AbortSignal.timeout(deadlineMs), callerGone]) : AbortSignal.timeout(deadlineMs);
  const server = target.name;
  try {
    const results = await session.pollAll(collectors, signal, log);
    const meta = new MetricSet();
    const outside = new Set(collectors.filter((c) => c.outsideRest).map((c) => c.name as string));
    let reached = results.length > 0;
    const failed = results.filter((r) => !r.ok);
    for (const r of results) {
      meta.add(PROBE.collectorSuccess, { server, collector: r.collector }, r.ok ? 1 : 0);
      meta.add(PROBE.collectorDuration, { server, collector: r.collector }, r.seconds);
      // A probe keeps no counters: what it left out is a value of this probe, said in its own answer.
      for (const [key, n] of r.set.drops) {
        const [field, reason] = key.split('\u0000') as [string, string];
        meta.add(PROBE.probeDroppedValues, { server, collector: r.collector, field, reason }, n);
      }
      // The connectioncounts provider is another port: as in serve, it says nothing of wowza_up.
      if (!r.reached && !outside.has(r.collector)) reached = false;
    }
    // As serve's wowza_up: reached, and something answered with the REST API's shape (an HTML server is not Wowza).
    const rest = results.some((r) => !outside.has(r.collector) && (r.rest ?? r.ok));
    const up = reached && rest;
    meta.add(M.up, { server }, up ? 1 : 0);
    meta.add(PROBE.probeDuration, { server }, (performance.now() - started) / 1000);
    const sets = [meta, ...results.map((r) => r.set)];
    const answer = { body: mergeRendered(sets.map((s) => renderSet(s))), series: sets.reduce((n, s) => n + s.size, 0) };
    if (failed.length === 0) return answer;
    // One line per failing probe, whatever the number of collectors, at the operator's level (log.probe_level):
    // Prometheus probes every target every scrape interval, so these lines grow with the fleet.
    const first = failed[0]!.error!;
    const failure = errorReason(first);
    log[level](
      { target: resolved.url, module: resolved.moduleName, up: up ? 1 : 0, collectors: failed.map((r) => r.collector), reason: failure, err: first.message },
      `probe failed: ${failed.length} of ${results.length} collectors (${failure})`,
    );
    return { ...answer, failure };
  } finally {
    await session.close();
  }
}
