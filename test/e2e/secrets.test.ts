import { gunzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PULLED_SOURCE_WITH_CREDENTIALS, startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { signHs256 } from '../../src/webhooks/jwt.js';
import { runCli, samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * One exporter run with every kind of secret configured — Wowza passwords (Digest, Basic, and a server
 * whose error pages echo the Authorization header), probe module passwords, Loki basic auth and bearer
 * token, the webhook HMAC secret, the Wowza Video token — driven through its success and failure paths
 * at debug level, plus the CLI commands run with wrong credentials and config errors. Then every byte
 * any of it wrote (process output, HTTP bodies, CLI output, every file it created) is searched for each
 * secret and its encodings. None may appear.
 */

const tag = () => randomBytes(6).toString('hex');
/** Distinctive, and made of characters no encoding (JSON, URL, logfmt) changes, so a plain search finds them. */
const S = {
  wowzaDigest: `wseDigestPw${tag()}`,
  wowzaBasic: `wseBasicPw${tag()}`,
  wowzaEcho: `wseEchoPw${tag()}`,
  moduleWrong: `probeWrongPw${tag()}`,
  lokiPassword: `lokiPw${tag()}`,
  lokiBearer: `lokiBearer${tag()}`,
  webhookSecret: `hookSecret${tag()}`,
  videoToken: `eyJvideo.${tag()}.sig${tag()}`,
  wrongPassword: `wrongPw${tag()}`,
  wrongVideoToken: `eyJwrong.${tag()}.sig${tag()}`,
  /** A playback token in a Wowza log line's query fields. */
  streamToken: `streamTok${tag()}`,
};
const USER = 'admin';
const LOKI_USER = 'shipper';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const basic = (user: string, password: string) => b64(`${user}:${password}`);

/** Every string that must not appear anywhere, by family and by a name that says what leaked. */
const FAMILIES: Record<string, Record<string, string>> = {
  wowza: {
    'Digest password': S.wowzaDigest,
    'Basic password': S.wowzaBasic,
    'password of the echoing server': S.wowzaEcho,
    'wrong password of the CLI runs': S.wrongPassword,
    'Basic header (Basic password)': basic(USER, S.wowzaBasic),
    'Basic header (echoing server)': basic(USER, S.wowzaEcho),
    'Basic header (wrong password)': basic(USER, S.wrongPassword),
  },
  probe: { 'module password': S.moduleWrong, 'Basic header (module password)': basic(USER, S.moduleWrong) },
  loki: { 'Loki password': S.lokiPassword, 'Loki bearer token': S.lokiBearer, 'Basic header (Loki)': basic(LOKI_USER, S.lokiPassword) },
  webhooks: { 'webhook secret': S.webhookSecret, 'Basic header (webhook secret)': basic(USER, S.webhookSecret) },
  video: { 'video token': S.videoToken, 'wrong video token': S.wrongVideoToken },
  'log content': { 'pulled source user': 'camuser', 'pulled source password': 'campass', 'stream playback token': S.streamToken },
};

/** `output: secret ...context...` for every occurrence, so a failure says where and what leaked. */
function leaks(outputs: ReadonlyMap<string, string>, family: Record<string, string>): string[] {
  const found: string[] = [];
  for (const [where, text] of outputs) {
    for (const [name, secret] of Object.entries(family)) {
      const at = text.indexOf(secret);
      if (at >= 0) found.push(`${where}: ${name} in ...${text.slice(Math.max(0, at - 120), at + secret.length + 40).replace(/\n/g, '\\n')}...`);
    }
  }
  return found;
}

interface Recorded {
  method: string;
  url: string;
  authorization: string;
  body: string;
}

interface FakeServer {
  url: string;
  seen: Recorded[];
  close(): Promise<void>;
}

/** A loopback HTTP server answering with `answer`; records every request. */
async function fakeServer(answer: (req: Recorded, res: ServerResponse) => void): Promise<FakeServer> {
  const seen: Recorded[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // Loki pushes are gzipped: searched for secrets as Loki reads them, not as compressed bytes.
      const raw = Buffer.concat(chunks);
      const body = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
      const r = { method: req.method ?? '', url: req.url ?? '', authorization: String(req.headers.authorization ?? ''), body };
      seen.push(r);
      answer(r, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

const reply = (res: ServerResponse, status: number, body: string, type = 'application/json', headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': type, ...headers });
  res.end(body);
};

describe('secrets never leave the process', () => {
  let dir: string;
  let secretsDir: string;
  let simDigest: Simulator;
  let simBasic: Simulator;
  let echoWowza: FakeServer;
  let canary: FakeServer;
  let loki: FakeServer;
  let video: FakeServer;
  let exporter: RunningExporter;
  /** Everything that left the processes: name -> text. */
  const outputs = new Map<string, string>();
  /** Files the test wrote itself (configs, secrets): inputs, not outputs. */
  const inputs = new Set<string>();
  /** [what, expected, got] for every answer whose status matters; checked in one test. */
  const answers: Array<[string, number | null, number | null]> = [];
  let metrics = '';
  let probeGood = '';
  let probeWrong = '';
  const record = (name: string, text: string) => outputs.set(name, (outputs.get(name) ?? '') + text);

  const secretFile = (name: string, value: string, mode = 0o600) => {
    const p = join(secretsDir, name);
    writeFileSync(p, `${value}\n`);
    chmodSync(p, mode);
    inputs.add(p);
    return p;
  };
  const configFile = (name: string, doc: unknown) => {
    const p = join(dir, name);
    writeFileSync(p, typeof doc === 'string' ? doc : stringify(doc));
    inputs.add(p);
    return p;
  };
  const scrape = async (name: string, path: string, expected: number, init?: RequestInit) => {
    const res = await fetch(`${exporter.url}${path}`, init);
    const text = await res.text();
    record(name, `${res.status} ${path.split('?')[0]}\n${text}\n`);
    answers.push([`${init?.method ?? 'GET'} ${path}`, expected, res.status]);
    return text;
  };

  async function startFakes(): Promise<void> {
    simDigest = await startSimulator({ auth: 'digest', username: USER, password: S.wowzaDigest, logs: { linesPerSecond: 5 } });
    simBasic = await startSimulator({ auth: 'basic', username: USER, password: S.wowzaBasic, logs: { linesPerSecond: 5 } });
    // A Wowza (or a proxy in front of it) whose error bodies quote the request's Authorization header.
    echoWowza = await fakeServer((r, res) => {
      if (!r.authorization) reply(res, 401, '{"success":false,"message":"unauthorized","code":"401"}', 'application/json', { 'www-authenticate': 'Basic realm="Wowza"' });
      else reply(res, 500, JSON.stringify({ success: false, message: `proxy refused the request with Authorization: ${r.authorization}`, code: '500' }));
    });
    canary = await fakeServer((_r, res) => reply(res, 200, '{}'));
    // Loki: the first push of each sink fails with a retryable error, the second is refused for good
    // (dead-lettered), later ones succeed. Both failures quote the Authorization header.
    const pushes = new Map<string, number>();
    loki = await fakeServer((r, res) => {
      const n = (pushes.get(r.url) ?? 0) + 1;
      pushes.set(r.url, n);
      if (n === 1) reply(res, 503, `upstream busy; request had Authorization: ${r.authorization}`, 'text/plain');
      else if (n === 2) reply(res, 401, `{"message":"no tenant for Authorization: ${r.authorization}"}`);
      else reply(res, 204, '');
    });
    // Wowza Video: a wrong token is always refused; the right one meets every kind of error answer once
    // (each quoting the header or the token), then gets a schedule list.
    let videoCalls = 0;
    video = await fakeServer((r, res) => {
      const echo = `Authorization: ${r.authorization}`;
      if (r.authorization !== `Bearer ${S.videoToken}`) {
        reply(res, 401, JSON.stringify({ meta: { status: 401, code: 'ERR-401-InvalidToken', title: 'Invalid Token', message: `token refused (${echo})`, description: r.authorization, links: [] } }));
        return;
      }
      videoCalls++;
      if (videoCalls === 1) reply(res, 403, JSON.stringify({ meta: { status: 403, code: 'ERR-403', title: `Forbidden ${echo}`, message: echo, description: `you sent ${r.authorization}`, links: [] } }));
      else if (videoCalls === 2) reply(res, 502, `<html><head><title>Bad gateway</title></head><body>upstream saw ${echo}</body></html>`, 'text/html');
      else if (videoCalls === 3) reply(res, 500, JSON.stringify({ error: `internal error for ${echo}` }));
      else if (videoCalls === 4) reply(res, 302, '', 'text/plain', { location: `https://login.example/reauth?access_token=${S.videoToken}&next=/` });
      else if (videoCalls === 5) reply(res, 200, `not json: ${echo}`, 'application/json');
      else {
        // The list gives limited details; the schedule itself has the rest (docs/wowza-api-notes.md).
        const start = new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');
        const summary = { id: 'sch1', name: 'Show', state: 'enabled', transcoder_id: 'tr1', created_at: start, updated_at: start };
        if (r.url.includes('/schedules/sch1')) reply(res, 200, JSON.stringify({ schedule: { ...summary, action_type: 'start', recurrence_type: 'once', start_transcoder: start } }));
        else reply(res, 200, JSON.stringify({ schedules: [summary] }));
      }
    });
  }

  /** Digest, Basic and echoing servers; two probe modules; file, stdout and two Loki sinks; webhooks; video. */
  function exporterConfig(): string {
    const basicPw = secretFile('basic-password', S.wowzaBasic);
    const allowed = [simBasic.url.replace(/\./g, '\\.')];
    return configFile('exporter.yaml', {
      servers: [
        { name: 'wse-digest', url: simDigest.url, username: USER, password_file: secretFile('digest-password', S.wowzaDigest), auth: 'digest' },
        { name: 'wse-basic', url: simBasic.url, username: USER, password_file: basicPw, auth: 'basic' },
        { name: 'wse-echo', url: echoWowza.url, username: USER, password_file: secretFile('echo-password', S.wowzaEcho), auth: 'basic' },
      ],
      poll: { interval: '1s', timeout: '800ms', jitter: 0 },
      modules: {
        good: { username: USER, password_file: basicPw, auth: 'basic', allowed_targets: allowed },
        wrong: { username: USER, password_file: secretFile('module-wrong-password', S.moduleWrong), auth: 'basic', allowed_targets: allowed },
      },
      logs: {
        positions_file: join(dir, 'out', 'positions.json'),
        positions_sync_interval: '200ms',
        dead_letter_file: join(dir, 'out', 'dead-letter.ndjson'),
        follow_interval: '200ms',
        start_at: 'beginning',
        log_types: ['access'],
        drain_timeout: '2s',
        batch: { max_wait: '200ms' },
        retry: { min_backoff: '50ms', max_backoff: '200ms', max_retries: 1 },
        sinks: [
          { type: 'file', path: join(dir, 'out', 'records.ndjson') },
          { type: 'stdout' },
          { type: 'loki', name: 'loki-basic', url: `${loki.url}/basic/loki/api/v1/push`, username: LOKI_USER, password_file: secretFile('loki-password', S.lokiPassword) },
          { type: 'loki', name: 'loki-bearer', url: `${loki.url}/bearer/loki/api/v1/push`, bearer_token_file: secretFile('loki-token', S.lokiBearer) },
        ],
      },
      // World-readable on purpose: the exporter must warn about it (naming the file, not its content).
      webhooks: { enabled: true, secret_file: secretFile('webhook-secret', S.webhookSecret, 0o644) },
      video: { url: `${video.url}/api/v1.11`, token_file: secretFile('video-token', S.videoToken), interval: '300ms' },
    });
  }

  async function probes(): Promise<void> {
    probeGood = await scrape('/probe good', `/probe?module=good&target=${encodeURIComponent(simBasic.url)}`, 200);
    probeWrong = await scrape('/probe wrong password', `/probe?module=wrong&target=${encodeURIComponent(simBasic.url)}`, 200);
    const port = new URL(simBasic.url).port;
    const refused = [
      canary.url,
      `http://${USER}:${S.wowzaBasic}@127.0.0.1:${port}`,
      `http://${USER}:${S.wowzaBasic}@127.0.0.1:99999`,
      `ftp://${USER}:${S.wowzaBasic}@127.0.0.1/`,
    ];
    for (const target of refused) await scrape('/probe refused', `/probe?module=good&target=${encodeURIComponent(target)}`, 400);
    // A target with a query is refused (its path is the API's base, a query has no place there), and not echoed.
    await scrape('/probe with query', `/probe?module=good&target=${encodeURIComponent(`http://127.0.0.1:${port}/?password=${S.wowzaBasic}`)}`, 400);
  }

  /** One valid signed event, then forgeries and garbage, some carrying the secret itself. */
  async function webhooks(): Promise<void> {
    const now = Math.floor(Date.now() / 1000);
    const event = (id: string, extra: Record<string, unknown> = {}) =>
      JSON.stringify({ id, timestamp: Date.now(), name: 'stream.started', source: 'wse-digest', version: '1.0', context: { vhost: '_defaultVHost_', app: 'live', appInstance: '_definst_', stream: 'stream1', state: 'started' }, data: {}, ...extra });
    let n = 0;
    // A fresh token for each delivery, as the server signs them (a token is good for one event).
    const signed = () => `Bearer ${signHs256({ iat: now, exp: now + 60, jti: `s${n++}` }, S.webhookSecret)}`;
    const deliveries: Array<[string, string | undefined, number]> = [
      [event('ok-1'), signed(), 202],
      // The secret itself as a static Bearer token (webhooks.auth: token) is refused by a JWT receiver: never echoed.
      [event('f0'), `Bearer ${S.webhookSecret}`, 401],
      [event('f1'), `Bearer ${S.webhookSecret}x`, 401],
      [event('f2'), `Bearer ${signHs256({ exp: now + 60 }, 'not-the-secret')}`, 401],
      [event('f3'), `Bearer ${signHs256({ exp: now - 3600 }, S.webhookSecret)}`, 401],
      [event('f4'), `Basic ${basic(USER, S.webhookSecret)}`, 401],
      [event('f5'), undefined, 401],
      [`{"id": "${S.webhookSecret}", `, signed(), 400],
      [`["${S.webhookSecret}"]`, signed(), 400],
      // Taken leniently, but the unreadable value is neither echoed, logged nor forwarded.
      [event('f7', { timestamp: S.webhookSecret }), signed(), 202],
    ];
    for (const [body, authorization, status] of deliveries) {
      await scrape('/webhooks/wowza', '/webhooks/wowza', status, { method: 'POST', body, headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) } });
    }
  }

  /** CLI commands with wrong credentials, and config errors that could quote secrets back. */
  async function cliRuns(): Promise<void> {
    const wrongPw = secretFile('wrong-password', S.wrongPassword);
    const wrongConfig = configFile('wrong.yaml', {
      servers: [
        { name: 'wse-digest', url: simDigest.url, username: USER, password_file: wrongPw },
        { name: 'wse-basic', url: simBasic.url, username: USER, password_file: wrongPw, auth: 'basic' },
        { name: 'wse-echo', url: echoWowza.url, username: USER, password_file: wrongPw, auth: 'basic' },
      ],
    });
    const badConfigs: Array<[string, unknown]> = [
      ['bad-url.yaml', { servers: [{ url: `http://${USER}:${S.wowzaBasic}@127.0.0.1:99999` }] }],
      ['bad-url-2.yaml', { servers: [{ url: `http://${USER}:${S.wowzaBasic}@127.0.0.1:8087` }] }],
      ['bad-key.yaml', { servers: [{ url: simBasic.url, username: USER, password: S.wowzaBasic }] }],
      ['bad-loki.yaml', { logs: { sinks: [{ type: 'loki', url: `http://${LOKI_USER}:${S.lokiPassword}@127.0.0.1:99999` }] } }],
      ['bad-video.yaml', { video: { url: `https://user:${S.videoToken}@api.video.example:70000/api` } }],
      ['bad-yaml.yaml', `servers:\n  - url: http://127.0.0.1:8087\n    username: "${USER}\n    password_file: ${S.wowzaBasic}"\n  extra: [${S.wowzaBasic}\n`],
    ];
    const runs: Array<[string, string[], number]> = [
      ['doctor', ['doctor', '--config', wrongConfig], 1],
      ['doctor --json', ['doctor', '--config', wrongConfig, '--json'], 1],
      ['webhooks status', ['webhooks', 'status', '--config', wrongConfig], 1],
      ['schedules list', ['schedules', 'list', '--video.url', `${video.url}/api/v1.11`, '--video.token-file', secretFile('wrong-video-token', S.wrongVideoToken)], 1],
      ...badConfigs.map(([name, doc]): [string, string[], number] => [`serve --config ${name}`, ['serve', '--config', configFile(name, doc), '--log.level', 'debug'], 2]),
    ];
    const env = { WOWZA_PASSWORD: '', WOWZA_VIDEO_TOKEN: '' };
    // Two at a time: the machine has two cores.
    for (let i = 0; i < runs.length; i += 2) {
      await Promise.all(
        runs.slice(i, i + 2).map(async ([name, args, code]) => {
          const r = await runCli(args, { env });
          record(`cli ${name}`, `${r.stdout}\n${r.stderr}`);
          answers.push([`cli ${name}`, code, r.code]);
        }),
      );
    }
  }

  /** Every file the run wrote: sink records, dead letters, positions. */
  function writtenFiles(): string[] {
    const files: string[] = [];
    const walk = (d: string) => {
      for (const name of readdirSync(d)) {
        const p = join(d, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (!inputs.has(p)) files.push(p);
      }
    };
    walk(dir);
    return files;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-secrets-'));
    secretsDir = join(dir, 'secrets');
    mkdirSync(secretsDir);
    mkdirSync(join(dir, 'out'));
    await startFakes();
    // Log lines carrying the credentialed pull URL and a playback token, as real access logs do.
    for (const sim of [simDigest, simBasic]) {
      sim.logs.append('wowzastreamingengine_access', [
        { 'x-event': 'connect', 'x-category': 'session', 'x-severity': 'INFO', 'x-app': 'cameras', 'x-sname': 'cam1', 'x-suri': `${PULLED_SOURCE_WITH_CREDENTIALS}/cam1`, 'cs-uri-stem': PULLED_SOURCE_WITH_CREDENTIALS },
        { 'x-event': 'play', 'x-category': 'stream', 'x-severity': 'INFO', 'x-app': 'live', 'x-sname': 'stream1', 'x-sname-query': `token=${S.streamToken}`, 'x-suri': `rtmp://203.0.113.1:1935/live/stream1?token=${S.streamToken}`, 'x-suri-query': `token=${S.streamToken}`, 'cs-uri-query': `token=${S.streamToken}` },
      ]);
    }
    exporter = await startExporterProcess(['--config', exporterConfig(), '--log.level', 'debug'], { WOWZA_PASSWORD: '', WOWZA_VIDEO_TOKEN: '' }, { waitReady: false });

    // Polls succeed with Digest and Basic, the echoing server fails, the video API errors then answers,
    // each Loki sink is refused twice and then takes lines.
    metrics = await waitFor(
      'both simulators up, video schedules after every error kind, logs delivered to Loki',
      async () => {
        const text = await exporter.metrics();
        const up = (server: string) => samples(text, 'wowza_up', { server })[0]?.value;
        const lokiDone = ['/basic/', '/bearer/'].every((p) => loki.seen.filter((r) => r.url.startsWith(p)).length >= 3);
        return up('wse-digest') === 1 && up('wse-basic') === 1 && text.includes('wowza_video_schedule_info') && lokiDone ? text : undefined;
      },
      60_000,
    );
    record('/metrics', metrics);
    await probes();
    await webhooks();
    await scrape('/metrics', '/metrics', 200);
    // The status page and its JSON hold the last error of every collector and follower: none may quote a secret.
    await scrape('/ (status page)', '/', 200);
    await scrape('/api/v1/status', '/api/v1/status', 200);
    await cliRuns();

    // Shutdown flushes the sinks and saves positions; its log lines are searched too.
    answers.push(['exit code after SIGTERM', 0, await exporter.stop('SIGTERM')]);
    record('exporter stdout+stderr', exporter.output());
    for (const f of writtenFiles()) record(`file ${relative(dir, f)}`, readFileSync(f, 'utf8'));
    // What reached Loki left the process too.
    for (const r of loki.seen) record(`loki push ${r.url}`, r.body);
    // The pushes were read (decompressed): the search below sees their records, not gzip bytes.
    expect(loki.seen.some((r) => r.body.includes('"streams"'))).toBe(true);
  }, 120_000);

  afterAll(async () => {
    await exporter?.stop('SIGKILL');
    await Promise.all([simDigest?.close(), simBasic?.close(), echoWowza?.close(), canary?.close(), loki?.close(), video?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('went through the success and failure paths with every secret sent where it belongs', () => {
    expect(answers.filter(([, expected, got]) => expected !== got)).toEqual([]);
    expect(samples(metrics, 'wowza_stream_info', { server: 'wse-digest', application: 'cameras', stream: 'cam1' })[0]?.labels.source_scheme).toBe('rtsp');
    expect(samples(metrics, 'wowza_exporter_collector_success', { server: 'wse-echo', collector: 'machine' })[0]?.value).toBe(0);
    expect(samples(probeGood, 'wowza_up')[0]?.value).toBe(1);
    expect(samples(probeWrong, 'wowza_up')[0]?.value).toBe(0);
    expect(canary.seen).toEqual([]);
    expect(loki.seen.some((r) => r.authorization === `Basic ${basic(LOKI_USER, S.lokiPassword)}`)).toBe(true);
    expect(loki.seen.some((r) => r.authorization === `Bearer ${S.lokiBearer}`)).toBe(true);
    expect(video.seen.some((r) => r.authorization === `Bearer ${S.videoToken}`)).toBe(true);
    expect(video.seen.some((r) => r.authorization === `Bearer ${S.wrongVideoToken}`)).toBe(true);
    expect(echoWowza.seen.some((r) => r.authorization === `Basic ${basic(USER, S.wowzaEcho)}`)).toBe(true);
    const log = exporter.output();
    expect(log).toMatch(/"level":"debug"/);
    expect(log).toMatch(/sending logs failed; retrying/);
    expect(log).toMatch(/moved to the dead-letter file/);
    expect(log).toMatch(/webhook rejected/);
    expect(log).toMatch(/"collector":"video".*poll failed/);
    expect(log).toMatch(/"server":"wse-echo".*poll failed/);
    expect(outputs.get('cli serve --config bad-url.yaml')).toMatch(/servers\[0\]\.url: not a URL/);
    expect(outputs.get('cli serve --config bad-key.yaml')).toMatch(/servers\[0\]\.password: unknown key/);
    expect(outputs.get('cli schedules list')).toMatch(/HTTP 401/);
    expect(outputs.get('cli doctor')).toMatch(/wrong username or password/);
    expect([...outputs.keys()]).toEqual(expect.arrayContaining(['file out/records.ndjson', 'file out/dead-letter.ndjson', 'file out/positions.json']));
    expect(outputs.get('file out/records.ndjson')).toMatch(/"x-app":"cameras"/);
    expect(outputs.get('file out/records.ndjson')).toMatch(/"x-sname":"stream1"/);
  });

  it('warns that the webhook secret file is readable by every user, naming the key and the file', () => {
    const line = exporter
      .output()
      .split('\n')
      .find((l) => l.includes('readable by every user'));
    expect(line).toBeDefined();
    expect(line).toContain('webhooks.secret_file');
    expect(line).toContain(join(secretsDir, 'webhook-secret'));
  });

  for (const [family, secrets] of Object.entries(FAMILIES)) {
    it(`leaks no ${family} secret into any output`, () => {
      expect(leaks(outputs, secrets)).toEqual([]);
    });
  }
});
