import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { startOfficialAnswers, type OfficialAnswersServer } from '../helpers/official-answers-server.js';
import { parseMetrics, samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { ENDPOINTS, type AnswerMode, type OfficialTopology } from '../helpers/swagger-models.js';

/**
 * The real exporter against a server that answers only what WSE 4.9.0's own Swagger models describe
 * (official-answers-server.ts): once with the most hostile values the models allow (every number
 * MIN_SAFE_INTEGER, every string "string", every boolean true), once with realistic ones. The simulator cannot
 * do this job: it is what the exporter was written against. Contract: docs/metrics.md.
 *
 * Every wait polls /metrics until what the exporter reports says the condition holds (ceilings of 20 s: CI
 * machines are busy); nothing sleeps a fixed time.
 */


const COLLECTORS = ['machine', 'status', 'vhost', 'application', 'instance', 'stream'] as const;
/** The collectors that read numbers from the answers, all MIN_SAFE_INTEGER in extreme mode. */
const NUMERIC_COLLECTORS = ['machine', 'status', 'vhost', 'application', 'stream'] as const;
const CEILING_MS = 20_000;

let server: OfficialAnswersServer | undefined;
let exporter: RunningExporter | undefined;
afterEach(async () => {
  await exporter?.stop();
  await server?.close();
  exporter = server = undefined;
});

/** Polls every second; the request timeout follows the interval. A probe module may ask the same server. */
function startExporterFor(s: OfficialAnswersServer): Promise<RunningExporter> {
  const dir = mkdtempSync(join(tmpdir(), 'official-shapes-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'password'), s.password, { mode: 0o600 });
  writeFileSync(
    join(dir, 'config.yaml'),
    JSON.stringify({ modules: { default: { username: s.username, auth: 'basic', password_file: join(dir, 'password'), allowed_targets: [s.url.replace(/\./g, '\\.')] } } }),
  );
  return startExporterProcess(['--config', join(dir, 'config.yaml'), '--wowza.url', s.url, '--wowza.username', s.username, '--wowza.auth', 'basic', '--poll.interval', '1s'], { WOWZA_PASSWORD: s.password });
}

async function start(mode: AnswerMode, topology?: OfficialTopology): Promise<{ server: OfficialAnswersServer; exporter: RunningExporter }> {
  server = await startOfficialAnswers({ mode, ...(topology ? { topology } : {}) });
  exporter = await startExporterFor(server);
  return { server, exporter };
}

/**
 * Reads /metrics until `holds(text)`, for at most CEILING_MS; returns the last text either way, so that the
 * assertions after it say what was missing instead of "timed out".
 */
async function metricsWhen(e: RunningExporter, holds: (text: string) => boolean): Promise<string> {
  const end = Date.now() + CEILING_MS;
  let text = '';
  for (;;) {
    try {
      text = await e.metrics();
      if (holds(text)) return text;
    } catch {
      // not serving yet
    }
    if (Date.now() > end) return text;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const success = (text: string, collector: string) => samples(text, 'wowza_exporter_collector_success', { collector })[0]?.value;
const allSucceeded = (text: string) => COLLECTORS.every((c) => success(text, c) === 1);
const total = (text: string, name: string, match: Record<string, string> = {}) => samples(text, name, match).reduce((n, s) => n + s.value, 0);

/** `wowza_*` samples (the exporter's own included) that are negative, NaN or infinite, as exposition lines. */
function badSamples(text: string): string[] {
  return [...parseMetrics(text)].filter(([key, value]) => key.startsWith('wowza_') && (!Number.isFinite(value) || value < 0)).map(([k, v]) => `${k} ${v}`);
}

describe("the exporter against answers made from WSE 4.9.0's own models", () => {
  for (const mode of ['extreme', 'realistic'] as const) {
    it(`${mode}: every collector succeeds, no sample is negative or not finite, and refused values are counted`, async () => {
      const { exporter: e } = await start(mode);
      const text = await metricsWhen(e, (t) => allSucceeded(t) && (mode === 'realistic' || NUMERIC_COLLECTORS.every((c) => total(t, 'wowza_exporter_dropped_values_total', { collector: c, reason: 'negative' }) > 0)));

      for (const c of COLLECTORS) expect(success(text, c), `wowza_exporter_collector_success{collector="${c}"}`).toBe(1);
      expect(badSamples(text)).toEqual([]);

      const dropped = samples(text, 'wowza_exporter_dropped_values_total');
      if (mode === 'extreme') {
        for (const c of NUMERIC_COLLECTORS) {
          expect(
            dropped.filter((s) => s.labels.collector === c && s.labels.reason === 'negative' && s.value > 0),
            `wowza_exporter_dropped_values_total{collector="${c}",reason="negative"}`,
          ).not.toHaveLength(0);
        }
      } else {
        expect(dropped.filter((s) => s.value !== 0).map((s) => s.labels)).toEqual([]);
      }

      // /probe keeps no counters: what a probe left out is in its own answer.
      if (mode === 'extreme') {
        const probe = await (await fetch(`${e.url}/probe?target=${encodeURIComponent(server!.url)}&module=default`)).text();
        expect(samples(probe, 'wowza_exporter_probe_dropped_values', { reason: 'negative' }).length, probe.slice(0, 500)).toBeGreaterThan(0);
      }

      const transcoder = samples(text, 'wowza_server_feature_licensed', { feature: 'transcoder' });
      expect(transcoder, 'wowza_server_feature_licensed{feature="transcoder"}').toHaveLength(1);
      // Extreme: every boolean is true. Realistic: the answer says the transcoder is licensed.
      expect(transcoder[0]!.value).toBe(1);
    }, 60_000);
  }

  it('realistic, six streams: one answering 500 then garbage leaves the other five and the collector standing, and is counted', async () => {
    const streams = ['cam1', 'cam2', 'cam3', 'cam4', 'cam5', 'cam6'];
    const topology: OfficialTopology = { vhosts: [{ name: '_defaultVHost_', apps: [{ name: 'live', streams }] }] };
    const failing = 'cam3';
    const others = streams.filter((s) => s !== failing);
    const path = ENDPOINTS.streamCurrent.path
      .replace('{serverName}', '_defaultServer_')
      .replace('{vhostName}', '_defaultVHost_')
      .replace('{appName}', 'live')
      .replace('{instanceName}', '_definst_')
      .replace('{streamName}', failing);

    server = await startOfficialAnswers({ mode: 'realistic', topology });
    server.failObject(path, 500);
    exporter = await startExporterFor(server);
    const e = exporter;
    const received = (text: string, stream: string) => samples(text, 'wowza_stream_received_bytes_total', { stream });
    const othersStand = (text: string) => others.every((s) => received(text, s).length > 0);
    const errors = (text: string) => total(text, 'wowza_exporter_object_errors_total', { collector: 'stream' });

    // 500 on one stream's statistics.
    let text = await metricsWhen(e, (t) => othersStand(t) && errors(t) > 0);
    expect(server.requests(path), 'the failing stream was asked for').toBeGreaterThan(0);
    for (const s of others) expect(received(text, s), `wowza_stream_received_bytes_total{stream="${s}"}`).not.toHaveLength(0);
    expect(success(text, 'stream')).toBe(1);
    expect(errors(text)).toBeGreaterThan(0);

    // Then a body that is not JSON, from the next poll on.
    const errorsBefore = errors(text);
    const asked = server.requests(path);
    server.failObject(path, 'garbage');
    text = await metricsWhen(e, (t) => server!.requests(path) > asked && othersStand(t) && errors(t) > errorsBefore);
    expect(server.requests(path), 'the garbage was served').toBeGreaterThan(asked);
    for (const s of others) expect(received(text, s), `wowza_stream_received_bytes_total{stream="${s}"}`).not.toHaveLength(0);
    expect(success(text, 'stream')).toBe(1);
    expect(errors(text)).toBeGreaterThan(errorsBefore);
  }, 75_000);
});
