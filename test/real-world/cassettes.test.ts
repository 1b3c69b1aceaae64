import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';
import type { Stats as CurrentStats } from '../helpers/swagger-models.js';

/**
 * Issue 38: the recorded sessions of a real WSE 4.7.0 (test/fixtures/real-world/rest/4.7.0-cassettes, PROVENANCE.md)
 * replayed over loopback to the real exporter, through the CLI, behind the cassettes' own Digest challenge; every
 * value the exporter exports from them is checked against the cassette's body.
 *
 * Auth: a request without valid credentials gets the 401 of `all_applications.yml` (its `Www-Authenticate` header and
 * body, verbatim: realm, domain, the recorded nonce, `algorithm=MD5`, `qop="auth"`). The exporter must answer that
 * exact challenge; the digest is checked here with node:crypto (RFC 7616, MD5, qop=auth), sharing no code with it.
 *
 * Served (status, Content-Type and body as recorded):
 * - `server_up_status.yml` at its own path `{S}/status`.
 * - `all_applications.yml` (the 200 after its 401) at `{V}/applications`: 10 applications.
 * - `application_stats_success.yml` at its own path `{V}/applications/my_app/monitoring/current`.
 * - `all_instances.yml` was recorded for `app_name`, an application the gem's specs created and deleted, which the
 *   applications list (recorded 9 days later) does not hold: served as the instances of `my_app`, bytes unchanged.
 * - `incoming_streams_stat_found.yml` and `incoming_streams_stat_definst_found.yml` were recorded for
 *   `app_name/_definst_/stream_name`: served as the `monitoring/current` of `my_app`'s two streams, `myStr` and
 *   `myStream`, one each, bytes unchanged (their `name` field still says `stream_name`; the exporter names a stream by
 *   the instance list, not by that field).
 * - `instance_definst_found.yml` and `instance_found.yml` (the 200s after their 401s) are single instances
 *   (`GET {A}/instances/{name}`), fragments of a list: served as the two items of `helloworldapp`'s `instanceList`,
 *   their bytes unchanged inside. That wrapper is built (not evidence).
 * - Built, not evidence: `{S}/vhosts` (no recording; discovery starts there).
 * - Every other path: 404 with the body of `instance_application_not_exists.yml` (a real 4.7.0 404: `"code":"404"`,
 *   a string). So machine monitoring fails (no recording), the other applications and `helloworldapp`'s stream are
 *   gone for this poll (counted as vanished), as they would be on the server.
 * Two more servers, each its own describe below:
 * - `server_up_status_unauthorized.yml` replayed in order to an exporter with a wrong password: its first challenge
 *   to a request without credentials, its second (a fresh nonce, the recorded answer to a wrong digest) to every
 *   request with one.
 * - `all_applications.at-afe5c36-empty-list.yml` (an older recording: the server before the gem's specs created any
 *   application): its own challenge, then its `"applications":[]`; `{S}/vhosts` built as above.
 * Not served:
 * - The answers to writes, 2xx and 4xx: `application_create_exists.yml`, `application_create_invalid_config.yml`,
 *   `application_create_successful.yml`, `application_delete_error.yml`, `application_deleted.yml`,
 *   `application_update_not_exist.yml`, `application_updated.yml`, `create_publisher_name_exists.yml`,
 *   `create_publisher_success.yml`, `publisher_deleted.yml`, `publisher_not_exists.yml`, `smil_create_exists.yml`,
 *   `smil_create_successful.yml`, `smil_delete_error.yml`, `smil_deleted.yml`, `smil_update_not_exist.yml`,
 *   `smil_updated.yml`: the exporter never creates, changes or deletes anything.
 * - `all_smils.yml`, `smil_found.yml`, `application_found.yml` (an application's configuration): resources the
 *   exporter never reads.
 * - `incoming_streams_stat_not_existed_app.yml`: the same 404 envelope as the one served.
 * - `instance_found.at-f160438.yml`: an older recording of `instance_found.yml` (one server answers one version).
 */
const DIR = join(import.meta.dirname, '../fixtures/real-world/rest/4.7.0-cassettes');
const S = '/v2/servers/_defaultServer_';
const V = `${S}/vhosts/_defaultVHost_`;
const USER = 'admin';
const PASSWORD = 'replayed-4.7.0';

interface Interaction {
  request: { method: string; uri: string };
  response: { status: { code: number }; headers: Record<string, string[]>; body: { string: string } };
}

/** A cassette's interactions; the YAML loader unfolds the lines VCR folded. */
function cassette(name: string): Interaction[] {
  return (parse(readFileSync(join(DIR, name), 'utf8')) as { http_interactions: Interaction[] }).http_interactions;
}
/** The one answer of `status` in a cassette. */
function answer(name: string, status = 200): Interaction['response'] {
  const hit = cassette(name).find((i) => i.response.status.code === status);
  if (!hit) throw new Error(`${name} has no ${status}`);
  return hit.response;
}
const body = (name: string, status = 200) => answer(name, status).body.string;

const CHALLENGE = answer('all_applications.yml', 401);
const WWW_AUTHENTICATE = CHALLENGE.headers['Www-Authenticate']![0]!;
const nonceOf = (challenge: string) => /nonce="([^"]+)"/.exec(challenge)![1]!;
const NONCE = nonceOf(WWW_AUTHENTICATE);
const NOT_FOUND = body('instance_application_not_exists.yml', 404);

const STATUS = JSON.parse(body('server_up_status.yml')) as Record<string, unknown>;
const APPS = JSON.parse(body('all_applications.yml')) as { applications: Array<{ id: string; appType: string | null; dvrEnabled: boolean; drmEnabled: boolean; transcoderEnabled: boolean }> };
const APP_STATS = JSON.parse(body('application_stats_success.yml')) as CurrentStats;
const INSTANCES = JSON.parse(body('all_instances.yml')) as { instanceList: Instance[] };
const STREAM_STATS = [JSON.parse(body('incoming_streams_stat_found.yml')), JSON.parse(body('incoming_streams_stat_definst_found.yml'))] as CurrentStats[];
const FRAGMENTS = [JSON.parse(body('instance_definst_found.yml')), JSON.parse(body('instance_found.yml'))] as Instance[];

interface Instance {
  name: string;
  incomingStreams: Array<{ name: string; sourceIp: string; isConnected: boolean; isRecordingSet: boolean; isStreamManagerStream: boolean }>;
  outgoingStreams: unknown[];
  recorders: unknown[];
}

/** The README's protocol labels for the REST `connectionCount` keys (docs/metrics.md, "protocol"). */
const PROTOCOL: Record<string, string> = { RTMP: 'rtmp', CUPERTINO: 'hls', MPEGDASH: 'mpeg_dash', SANJOSE: 'hds', SMOOTH: 'smooth', RTP: 'rtsp', WEBM: 'webm', DVRCHUNKS: 'dvr_chunks' };

function routes(): Map<string, { from: string; body: string }> {
  const [myStr, myStream] = INSTANCES.instanceList[0]!.incomingStreams;
  const streamPath = (name: string) => `${V}/applications/my_app/instances/_definst_/incomingstreams/${name}/monitoring/current`;
  return new Map([
    [`${S}/vhosts`, { from: 'built', body: JSON.stringify({ serverName: '_defaultServer_', vhosts: [{ id: '_defaultVHost_', href: V }] }) }],
    [`${S}/status`, { from: 'server_up_status.yml', body: body('server_up_status.yml') }],
    [`${V}/applications`, { from: 'all_applications.yml', body: body('all_applications.yml') }],
    [`${V}/applications/my_app/monitoring/current`, { from: 'application_stats_success.yml', body: body('application_stats_success.yml') }],
    [`${V}/applications/my_app/instances`, { from: 'all_instances.yml', body: body('all_instances.yml') }],
    [streamPath(myStr!.name), { from: 'incoming_streams_stat_found.yml', body: body('incoming_streams_stat_found.yml') }],
    [streamPath(myStream!.name), { from: 'incoming_streams_stat_definst_found.yml', body: body('incoming_streams_stat_definst_found.yml') }],
    [
      `${V}/applications/helloworldapp/instances`,
      { from: 'instance_definst_found.yml + instance_found.yml', body: `{"serverName":"_defaultServer_","instanceList":[${body('instance_definst_found.yml')},${body('instance_found.yml')}]}` },
    ],
  ]);
}

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

/** RFC 7616 with MD5 and qop=auth, against the recorded nonce: true when the header proves the password. */
function digestOk(method: string, url: string, header: string | undefined, nonce = NONCE): boolean {
  if (!header?.startsWith('Digest ')) return false;
  const p = Object.fromEntries([...header.slice(7).matchAll(/(\w+)=(?:"([^"]*)"|([^\s,]+))/g)].map((m) => [m[1]!.toLowerCase(), m[2] ?? m[3]!]));
  if (p.username !== USER || p.realm !== 'Wowza' || p.nonce !== nonce || p.uri !== url || p.qop !== 'auth') return false;
  if (p.algorithm !== undefined && p.algorithm.toUpperCase() !== 'MD5') return false;
  const ha1 = md5(`${USER}:Wowza:${PASSWORD}`);
  const ha2 = md5(`${method}:${url}`);
  return p.response === md5(`${ha1}:${nonce}:${p.nc}:${p.cnonce}:auth:${ha2}`);
}

/** A loopback server answering with `handle`, and the real exporter polling it over Digest through the CLI. */
async function replay(handle: (req: IncomingMessage, res: ServerResponse) => void, password = PASSWORD, opts: { waitReady?: boolean } = {}): Promise<{ server: Server; exporter: RunningExporter }> {
  const server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const exporter = await startExporterProcess(
    ['--wowza.url', url, '--wowza.username', USER, '--wowza.auth', 'digest', '--wowza.connectioncounts-url', 'off', '--poll.interval', '2s'],
    { WOWZA_PASSWORD: password },
    opts,
  );
  return { server, exporter };
}

async function stopReplay(server: Server | undefined, exporter: RunningExporter | undefined): Promise<void> {
  await exporter?.stop();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
}

it('every cassette is named in the header above: served, or not served and why', () => {
  const header = readFileSync(import.meta.filename, 'utf8').split('*/')[0]!;
  for (const name of readdirSync(DIR)) expect(header.includes(`\`${name}\``), name).toBe(true);
});

describe('recorded WSE 4.7.0 sessions (VCR cassettes) replayed to the CLI behind their own Digest challenge', () => {
  let server: Server;
  let exporter: RunningExporter;
  const served = routes();
  const log: Array<{ method: string; path: string; status: number; from: string }> = [];

  beforeAll(async () => {
    ({ server, exporter } = await replay((req, res) => {
      const method = req.method ?? 'GET';
      const url = req.url ?? '/';
      const path = new URL(url, 'http://x').pathname;
      if (!digestOk(method, url, req.headers.authorization)) {
        log.push({ method, path, status: 401, from: 'all_applications.yml' });
        res.writeHead(401, { 'content-type': CHALLENGE.headers['Content-Type']![0]!, 'www-authenticate': WWW_AUTHENTICATE }).end(CHALLENGE.body.string);
        return;
      }
      const hit = method === 'GET' ? served.get(path) : undefined;
      log.push({ method, path, status: hit ? 200 : 404, from: hit?.from ?? 'instance_application_not_exists.yml' });
      res.writeHead(hit ? 200 : 404, { 'content-type': 'application/json' }).end(hit?.body ?? NOT_FOUND);
    }));
  });
  afterAll(() => stopReplay(server, exporter));

  const COLLECTORS = ['status', 'application', 'instance', 'stream', 'recorder', 'vhost', 'stream_target'];
  const polled = async () =>
    waitFor('every collector that has a recording', async () => {
      const text = await exporter.metrics();
      return COLLECTORS.every((c) => samples(text, 'wowza_exporter_collector_success', { collector: c }).length === 1) ? text : undefined;
    }, 30_000);

  it("answers the recorded challenge (nonce, MD5, qop=auth) and is then served; the server is up", async () => {
    const text = await polled();
    expect(samples(text, 'wowza_up')[0]?.value).toBe(1);
    expect(log.some((l) => l.status === 401)).toBe(true);
    for (const path of served.keys()) expect(log.some((l) => l.path === path && l.status === 200), path).toBe(true);
    // After the first challenge every request proves the password against the recorded nonce: 401s stay few.
    expect(log.filter((l) => l.status === 401).length).toBeLessThan(log.length / 2);
  });

  it('every collector that has a recording succeeds; machine (none recorded) fails', async () => {
    const text = await polled();
    for (const c of COLLECTORS) expect(samples(text, 'wowza_exporter_collector_success', { collector: c })[0]?.value, c).toBe(1);
    expect(samples(text, 'wowza_exporter_collector_success', { collector: 'machine' })[0]?.value).toBe(0);
  });

  it('exports exactly the values of the recordings, nothing more', async () => {
    const text = await polled();
    const want = new Map<string, number>();
    const put = (name: string, labels: Record<string, string>, value: unknown) => {
      expect(typeof value, `${name} ${JSON.stringify(labels)}`).toBe('number');
      want.set(key(name, labels), value as number);
    };
    const s = STATUS;
    // {S}/status.
    put('wowza_server_info', { version: String(s.serverVersion), build: String(s.serverBuild), license_type: String(s.licenseType), mode: String(s.serverMode) }, 1);
    put('wowza_server_uptime_seconds', {}, s.timeRunning);
    put('wowza_server_connections', {}, s.currentConnections);
    put('wowza_server_connections_limit', {}, s.maxConnections);
    put('wowza_server_incoming_streams_limit', {}, s.maxIncommingStreams);
    const [y, mo, d] = String(s.licenseExpireDate).split('-').map(Number) as [number, number, number];
    put('wowza_server_license_expiry_timestamp_seconds', {}, Date.UTC(y, mo - 1, d) / 1000);
    put('wowza_server_transcoder_licenses', {}, s.transcoderLicenses);
    put('wowza_server_transcoder_licenses_in_use', {}, s.transcoderLicensesInUse);
    expect(s.javaMaxHeapSize).toBe('3160MB');
    put('wowza_server_java_heap_max_bytes', {}, 3160 * 1024 * 1024);
    put('wowza_server_memory_total_bytes', {}, s.totalMemory);
    put('wowza_server_memory_available_bytes', {}, s.availableMemory);
    put('wowza_server_processor_cores', {}, s.processorCores);
    const flag = (v: unknown) => (v === true ? 1 : 0);
    for (const f of ['transcoder', 'dvr', 'drm']) put('wowza_server_feature_licensed', { feature: f }, flag(s[`${f}Licensed`]));
    put('wowza_server_feature_in_use', { feature: 'dvr' }, flag(s.dvrInUse));
    put('wowza_server_feature_in_use', { feature: 'drm' }, flag(s.drmInUse));
    put('wowza_server_feature_in_use', { feature: 'transcoder' }, (s.transcoderLicensesInUse as number) > 0 ? 1 : 0);
    put('wowza_server_feature_available', { feature: 'transcoder' }, flag(s.transcoderAvailable));
    put('wowza_server_feature_available', { feature: 'rest_api' }, flag(s.restAPIAvailable));
    put('wowza_server_feature_available', { feature: 'http_origin' }, flag(s.httpOriginAvailable));
    for (const f of ['transcoder', 'dvr', 'drm']) put('wowza_server_feature_applications', { feature: f }, (s[`${f}Applications`] as unknown[]).length);

    // The one application with recorded statistics: its list facts and its monitoring/current.
    const app = APPS.applications.find((a) => a.id === 'my_app')!;
    const tf = (v: boolean) => String(v);
    const appLabels = { vhost: '_defaultVHost_', application: 'my_app' };
    put('wowza_application_info', { ...appLabels, app_type: app.appType ?? 'unknown', dvr: tf(app.dvrEnabled), transcoder: tf(app.transcoderEnabled), drm: tf(app.drmEnabled) }, 1);
    current('application', appLabels, APP_STATS, put);

    // Instances: my_app's recorded list, helloworldapp's two recorded instances.
    const lists: Array<[string, Instance[]]> = [['my_app', INSTANCES.instanceList], ['helloworldapp', FRAGMENTS]];
    for (const [application, instances] of lists) {
      for (const inst of instances) {
        const labels = { vhost: '_defaultVHost_', application, app_instance: inst.name };
        put('wowza_instance_incoming_streams', labels, inst.incomingStreams.length);
        put('wowza_instance_outgoing_streams', labels, inst.outgoingStreams.length);
        put('wowza_instance_recorders', labels, inst.recorders.length);
        for (const st of inst.incomingStreams) {
          const sl = { ...labels, stream: st.name };
          put('wowza_stream_connected', sl, flag(st.isConnected));
          put('wowza_stream_recording', sl, flag(st.isRecordingSet));
          put('wowza_stream_info', { ...sl, source_scheme: st.sourceIp.split(':')[0]!, stream_manager: tf(st.isStreamManagerStream) }, 1);
        }
      }
    }
    // my_app's streams, each with its recorded monitoring/current (helloworldapp's stream has none: 404, vanished).
    INSTANCES.instanceList[0]!.incomingStreams.forEach((st, i) => current('stream', { vhost: '_defaultVHost_', application: 'my_app', app_instance: '_definst_', stream: st.name }, STREAM_STATS[i]!, put));
    put('wowza_exporter_streams_dropped', {}, 0);

    const got = new Map<string, number>();
    for (const line of text.split('\n')) {
      if (!line.startsWith('wowza_') || line.startsWith('wowza_exporter_') || line.startsWith('wowza_up')) continue;
      const [name, labels, value] = parseLine(line);
      got.set(key(name, labels), value);
    }
    got.set(key('wowza_exporter_streams_dropped', {}), samples(text, 'wowza_exporter_streams_dropped')[0]!.value);
    expect(Object.fromEntries([...got].sort())).toEqual(Object.fromEntries([...want].sort()));
    // Nothing in the recordings was unreadable, missing or of an unknown value.
    expect(samples(text, 'wowza_exporter_dropped_values_total')).toEqual([]);
    expect(samples(text, 'wowza_exporter_unknown_values_total')).toEqual([]);
    // Source addresses never reach /metrics.
    expect(text).not.toContain('192.168.3.');
  });

  it('the applications without recorded statistics, and the stream without any, are counted as gone, not failed', async () => {
    const text = await polled();
    const vanished = (c: string) => samples(text, 'wowza_exporter_vanished_objects_total', { collector: c })[0]?.value ?? 0;
    expect(vanished('application')).toBeGreaterThanOrEqual(APPS.applications.length - 1);
    expect(vanished('stream')).toBeGreaterThanOrEqual(1);
    expect(APPS.applications.map((a) => a.appType)).toContain(null);
  });
});

/** The monitoring/current series of one level, as the README names them. */
function current(level: 'application' | 'stream', labels: Record<string, string>, s: CurrentStats, put: (name: string, labels: Record<string, string>, value: unknown) => void): void {
  put(`wowza_${level}_uptime_seconds`, labels, s.uptime);
  put(`wowza_${level}_received_bytes_total`, labels, s.bytesIn);
  put(`wowza_${level}_sent_bytes_total`, labels, s.bytesOut);
  put(`wowza_${level}_receive_bytes_per_second`, labels, s.bytesInRate);
  put(`wowza_${level}_send_bytes_per_second`, labels, s.bytesOutRate);
  put(`wowza_${level}_connections_current`, labels, s.totalConnections);
  for (const [k, v] of Object.entries(s.connectionCount)) put(`wowza_${level}_connections`, { ...labels, protocol: PROTOCOL[k]! }, v);
}

/** `name{a="1",b="2"}`, labels sorted, `server` left out (one server here). */
function key(name: string, labels: Record<string, string>): string {
  const l = Object.entries(labels).filter(([k]) => k !== 'server').sort(([a], [b]) => (a < b ? -1 : 1));
  return `${name}{${l.map(([k, v]) => `${k}="${v}"`).join(',')}}`;
}

function parseLine(line: string): [string, Record<string, string>, number] {
  const brace = line.indexOf('{');
  const space = line.lastIndexOf(' ');
  const name = brace === -1 ? line.slice(0, space) : line.slice(0, brace);
  const labels: Record<string, string> = {};
  if (brace !== -1) for (const m of line.slice(brace + 1, line.lastIndexOf('}')).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!;
  return [name, labels, Number(line.slice(space + 1))];
}

describe('a wrong password against the recorded challenges (server_up_status_unauthorized.yml)', () => {
  let server: Server;
  let exporter: RunningExporter;
  const [first, wrong] = cassette('server_up_status_unauthorized.yml').map((i) => i.response) as [Interaction['response'], Interaction['response']];
  let withDigest = 0;

  beforeAll(async () => {
    ({ server, exporter } = await replay((req, res) => {
      // The recorded order: the challenge to a request without credentials, the second 401 to a wrong digest.
      const r = req.headers.authorization ? wrong : first;
      if (req.headers.authorization) withDigest++;
      res.writeHead(r.status.code, { 'content-type': r.headers['Content-Type']![0]!, 'www-authenticate': r.headers['Www-Authenticate']![0]! }).end(r.body.string);
    }, 'not-the-password', { waitReady: false }));
  });
  afterAll(() => stopReplay(server, exporter));

  it('the server is down, every collector fails, and the log says the user was rejected', async () => {
    const text = await waitFor('the status collector', async () => {
      const t = await exporter.metrics();
      return samples(t, 'wowza_exporter_collector_success', { collector: 'status' }).length === 1 ? t : undefined;
    }, 30_000);
    expect(JSON.parse(first.body.string)).toMatchObject({ code: '401', success: false });
    expect(samples(text, 'wowza_up')[0]?.value).toBe(0);
    for (const s of samples(text, 'wowza_exporter_collector_success')) expect(s.value, s.labels.collector).toBe(0);
    expect(withDigest).toBeGreaterThan(0);
    expect(samples(text, 'wowza_exporter_auth_challenges_total', { reason: 'rejected' })[0]?.value).toBeGreaterThan(0);
    const causes = exporter.output().split('\n').filter((l) => l.startsWith('{') && l.endsWith('}')).map((l) => (JSON.parse(l) as { cause?: string }).cause);
    expect(causes).toContain(`wrong username or password: user "${USER}" was rejected`);
    expect(exporter.output()).not.toContain('not-the-password');
  });
});

describe('the same server before it had applications (all_applications.at-afe5c36-empty-list.yml)', () => {
  let server: Server;
  let exporter: RunningExporter;
  const [challenge, list] = cassette('all_applications.at-afe5c36-empty-list.yml').map((i) => i.response) as [Interaction['response'], Interaction['response']];
  const header = challenge.headers['Www-Authenticate']![0]!;

  beforeAll(async () => {
    ({ server, exporter } = await replay((req, res) => {
      const url = req.url ?? '/';
      if (!digestOk(req.method ?? 'GET', url, req.headers.authorization, nonceOf(header))) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': header }).end(challenge.body.string);
        return;
      }
      const path = new URL(url, 'http://x').pathname;
      const answer = path === `${S}/vhosts` ? JSON.stringify({ serverName: '_defaultServer_', vhosts: [{ id: '_defaultVHost_', href: V }] }) : path === `${V}/applications` ? list.body.string : undefined;
      res.writeHead(answer ? 200 : 404, { 'content-type': 'application/json' }).end(answer ?? NOT_FOUND);
    }));
  });
  afterAll(() => stopReplay(server, exporter));

  it('is up; the application, instance and stream collectors succeed with nothing to export', async () => {
    expect(JSON.parse(list.body.string)).toEqual({ serverName: '_defaultServer_', applications: [] });
    const text = await waitFor('the application collector', async () => {
      const t = await exporter.metrics();
      return samples(t, 'wowza_exporter_collector_success', { collector: 'application' }).length === 1 ? t : undefined;
    }, 30_000);
    expect(samples(text, 'wowza_up')[0]?.value).toBe(1);
    for (const c of ['application', 'instance', 'stream', 'recorder', 'stream_target']) expect(samples(text, 'wowza_exporter_collector_success', { collector: c })[0]?.value, c).toBe(1);
    expect(text.split('\n').filter((l) => /^wowza_(application|instance|stream)_/.test(l))).toEqual([]);
  });
});
