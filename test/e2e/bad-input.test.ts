import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';

/**
 * Bad input from every side the exporter has: its config (file and flags) through the real CLI, and
 * HTTP requests to a running process (/probe parameters, oversized and malformed requests, unknown
 * paths, webhook bodies, a slowloris client). The answers are clear and the process keeps serving.
 * Every config key in turn is covered in-process by test/unit/config/schema.test.ts; this file checks
 * that the CLI turns those errors into exit code 2 and a message, including errors found at start-up.
 */

const dir = mkdtempSync(join(tmpdir(), 'wowza-bad-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MISSING = join(dir, 'missing');
const UNREACHABLE = 'http://127.0.0.1:1';
mkdirSync(join(dir, 'a-directory'));

/** A config that starts (nothing listens on the default :9935 or polls 8087), with `over` merged in. */
function configFile(name: string, over: Record<string, unknown> | string): string {
  const p = join(dir, name);
  const doc = typeof over === 'string' ? over : stringify({ servers: [{ url: UNREACHABLE }], web: { listen_address: '127.0.0.1:0' }, ...over });
  writeFileSync(p, doc);
  return p;
}
const logs = (over: Record<string, unknown>) => ({ positions_file: join(dir, 'positions.json'), dead_letter_file: join(dir, 'dead.ndjson'), ...over });

describe.concurrent('config errors: `serve` exits 2 with a message naming the key', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['servers[0].url', ['--config', configFile('url.yaml', { servers: [{ url: 'ftp://wowza:21' }] })], /servers\[0\]\.url: URL must be http or https/],
    ['web.listen_address', ['--config', configFile('listen.yaml', { web: { listen_address: 'localhost' } })], /web\.listen_address: invalid listen address "localhost"/],
    ['web.config_file (read at start)', ['--config', configFile('web.yaml', { web: { listen_address: '127.0.0.1:0', config_file: MISSING } })], /web\.config\.file: cannot read .*ENOENT/],
    ['poll.interval', ['--config', configFile('poll.yaml', { poll: { interval: '15 seconds' } })], /poll\.interval: invalid duration "15 seconds"/],
    ['collectors', ['--config', configFile('collectors.yaml', { collectors: { strem: false } })], /collectors\.strem: unknown key \(did you mean "stream"\?\)/],
    ['discovery', ['--config', configFile('discovery.yaml', { discovery: { streams: { include: '([' } } })], /discovery\.streams\.include: invalid regular expression/],
    ['modules', ['--config', configFile('modules.yaml', { modules: { default: { username: 'admin', allowed_targets: 'http://wowza:8087' } } })], /modules\.default\.allowed_targets: .*array/],
    ['--shard', ['--shard', '2/2', '--web.listen-address', '127.0.0.1:0'], /--shard: "2\/2": the index must be below the count/],
    ['servers_files', ['--config', configFile('files.yaml', { servers_files: ['/etc/*/targets.yaml'] })], /servers_files\[0\]: .*only the file name may hold \* and \?/],
    ['video.token_file', ['--config', configFile('video.yaml', { video: { token_file: MISSING } })], /video\.token_file: cannot read .*ENOENT/],
    ['logs.sinks[0].password_file (read at start)', ['--config', configFile('loki.yaml', { logs: logs({ sinks: [{ type: 'loki', url: 'http://127.0.0.1:3100', username: 'u', password_file: MISSING }] }) })], /logs\.sinks\[0\]\.password_file: cannot read .*ENOENT/],
    ['logs.sinks[0].tls.ca_file (read at start)', ['--config', configFile('loki-ca.yaml', { logs: logs({ sinks: [{ type: 'loki', url: 'https://127.0.0.1:3100', tls: { ca_file: MISSING } }] }) })], /logs\.sinks\[0\]\.tls\.ca_file: cannot read .*ENOENT/],
    ['logs.positions_file', ['--config', configFile('positions.yaml', { logs: logs({ positions_file: join(dir, 'a-directory') }) })], /logs\.positions_file: .* is a directory/],
    ['webhooks.path', ['--config', configFile('webhooks.yaml', { webhooks: { enabled: true, path: 'hooks' } })], /webhooks\.path: path must start with \//],
    ['log.level', ['--config', configFile('log.yaml', { log: { level: 'loud' } })], /log\.level: Invalid option/],
    ['YAML syntax', ['--config', configFile('syntax.yaml', 'servers: [\n  - url: "http://x\n')], /invalid YAML/],
    ['the top level', ['--config', configFile('list.yaml', '- servers\n- web\n')], /top level must be a mapping/],
    ['--config', ['--config', MISSING], /--config: cannot read .*ENOENT/],
    ['--poll.interval', ['--wowza.url', UNREACHABLE, '--poll.interval', 'soon', '--web.listen-address', '127.0.0.1:0'], /poll\.interval: invalid duration "soon"/],
    ['--wowza.url', ['--wowza.url', 'wowza:8087', '--web.listen-address', '127.0.0.1:0'], /servers\[0\]\.url: URL must be http or https/],
    ['--wowza.auth', ['--wowza.auth', 'ntlm', '--web.listen-address', '127.0.0.1:0'], /wowza\.auth.*ntlm|Invalid values/],
    ['--wowza.timeout', ['--wowza.url', UNREACHABLE, '--wowza.timeout', '20s', '--web.listen-address', '127.0.0.1:0'], /servers\[0\]\.timeout: the request timeout \(20s\) must be shorter than the poll deadline of poll\.interval 15s/],
    ['an unknown flag', ['--wowza.passwrd-file', MISSING], /Unknown argument/],
  ];

  it.each(cases)('%s', async (_name, args, message) => {
    const r = await runCli(['serve', ...args], { env: { WOWZA_PASSWORD: '', WOWZA_VIDEO_TOKEN: '' } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    // A message for a person, not a crash: no stack trace, nothing on stdout.
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.stdout).toBe('');
  });
});

/** Sends raw bytes and resolves with everything the server answered before it closed the socket. */
function rawExchange(port: number, bytes: string, endAfterWrite = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(bytes);
      if (endAfterWrite) socket.end();
    });
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.on('close', () => resolve(answer));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve(answer) : reject(err)));
    socket.setTimeout(15_000, () => socket.destroy(new Error('no answer within 15 s')));
  });
}

describe('HTTP requests to a running exporter', () => {
  let exporter: RunningExporter;
  let canary: Server;
  let canaryPort = 0;
  const canaryRequests: string[] = [];

  beforeAll(async () => {
    // A server a /probe must never reach: any request recorded here is a bug.
    canary = createServer((req, res) => {
      canaryRequests.push(`${req.method} ${req.url}`);
      res.end('{}');
    });
    await new Promise<void>((r) => canary.listen(0, '127.0.0.1', r));
    canaryPort = (canary.address() as AddressInfo).port;
    const config = configFile('http.yaml', {
      poll: { interval: '1s', timeout: '500ms' },
      modules: {
        // Patterns are anchored: neither a prefix of the canary's origin nor another spelling of it matches.
        default: { username: 'admin', auth: 'basic', allowed_targets: [`http://127\\.0\\.0\\.1:${String(canaryPort).slice(0, -1)}`, `http://localhost:${canaryPort}`] },
      },
      webhooks: { enabled: true, insecure_allow_unauthenticated: true },
    });
    exporter = await startExporterProcess(['--config', config], { WOWZA_PASSWORD: 'not-used' }, { waitReady: false });
  });

  afterAll(async () => {
    await exporter?.stop('SIGKILL');
    canary.closeAllConnections();
    await new Promise((r) => canary?.close(r));
  });

  const get = async (path: string, init?: RequestInit) => {
    const res = await fetch(`${exporter.url}${path}`, init);
    return { status: res.status, text: await res.text() };
  };
  const healthy = async () => (await get('/-/healthy')).status === 200;

  it('refuses bad /probe parameters with 400 and a reason, and no request reaches the target', async () => {
    const canaryUrl = `http://127.0.0.1:${canaryPort}`;
    const cases: Array<[string, RegExp]> = [
      ['/probe', /missing "target" parameter/],
      ['/probe?module=default', /missing "target" parameter/],
      ['/probe?target=', /missing "target" parameter/],
      [`/probe?target=${encodeURIComponent('http://[::1')}`, /"target" is not a URL/],
      [`/probe?target=${encodeURIComponent('http://wowza:99999')}`, /"target" is not a URL/],
      [`/probe?target=${encodeURIComponent(`ftp://127.0.0.1:${canaryPort}`)}`, /must be an http or https URL/],
      [`/probe?target=${encodeURIComponent(`file:///etc/passwd`)}`, /must be an http or https URL/],
      [`/probe?target=${encodeURIComponent(`http://admin:pw@127.0.0.1:${canaryPort}`)}`, /must not carry credentials/],
      [`/probe?target=${encodeURIComponent(canaryUrl)}&module=nope`, /unknown module "nope" \(configured: default\)/],
      [`/probe?target=${encodeURIComponent(canaryUrl)}&module=default`, /not in the allowed_targets of module "default"/],
      [`/probe?target=${encodeURIComponent(`${canaryUrl}/v2/machine`)}`, /not in the allowed_targets/],
      [`/probe?target=127.0.0.1:${canaryPort}`, /not in the allowed_targets/],
      [`/probe?target=${'a'.repeat(3000)}`, /longer than 2048/],
      ['/probe?target=%E0%A4%A', /"target"/],
    ];
    for (const [path, message] of cases) {
      const r = await get(path);
      expect([path, r.status]).toEqual([path, 400]);
      expect(r.text, path).toMatch(message);
    }
    expect(canaryRequests).toEqual([]);
  });

  it('answers an oversized request line or header with 431, and keeps serving', async () => {
    expect((await get(`/metrics?pad=${'x'.repeat(100 * 1024)}`)).status).toBe(431);
    expect(await healthy()).toBe(true);
    expect((await get('/metrics', { headers: { 'x-pad': 'y'.repeat(20 * 1024) } })).status).toBe(431);
    expect((await get('/metrics')).status).toBe(200);
  });

  it('answers unknown paths with 404 and malformed requests with 400', async () => {
    for (const path of ['/nope', '/metrics/', '/metrics/extra', '//metrics', '/probe/', '/%2e%2e/%2e%2e/etc/passwd', '/webhooks', '/-/', '/%ff']) {
      const r = await get(path);
      expect([path, r.status]).toEqual([path, 404]);
      expect(r.text.length, path).toBeLessThan(200);
    }
    expect(await rawExchange(exporter.port, 'NOT AN HTTP REQUEST\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/);
    expect(await rawExchange(exporter.port, 'GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/);
    expect(await rawExchange(exporter.port, 'GET /metrics HTTP/1.1\r\nHost: x\r\nBad Header Name: 1\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/);
    // A TLS ClientHello sent to the plain HTTP port.
    expect(await rawExchange(exporter.port, '\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03', true)).toMatch(/^(HTTP\/1\.1 400 |$)/);
    expect(await healthy()).toBe(true);
  });

  it('refuses bad webhook bodies, survives a client that vanishes mid-body', async () => {
    const post = (body: string, headers: Record<string, string> = {}) => get('/webhooks/wowza', { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
    expect((await post('x'.repeat(1024 * 1024))).status).toBe(413);
    expect((await post('{"id": ')).status).toBe(400);
    expect((await post('[]')).status).toBe(400);
    expect((await post('"an event"')).text).toMatch(/must be a JSON object/);
    // An unexpected shape is taken with what could be read, and counted (wowza_webhook_unreadable_fields_total).
    expect((await post(JSON.stringify({ id: 'e1', timestamp: 'soon', name: 'stream.started' }))).status).toBe(202);
    expect((await get('/webhooks/wowza')).status).toBe(405);
    // Announces 10 kB, sends 10 bytes, and goes away.
    await rawExchange(exporter.port, 'POST /webhooks/wowza HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n{"id": "e2', true);
    expect(await healthy()).toBe(true);
  });

  it('disconnects a client trickling its headers after the 10 s header timeout, serving others meanwhile', async () => {
    const started = Date.now();
    const socket: Socket = connect(exporter.port, '127.0.0.1');
    const request = 'GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ';
    let sent = 0;
    // One byte every 200 ms: the headers never end.
    const trickle = setInterval(() => {
      if (socket.writable) socket.write(sent < request.length ? request[sent++]! : 'a');
    }, 200);
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - started)));
    socket.on('error', () => undefined);

    // Others are served meanwhile, each quickly.
    const slowest: number[] = [];
    let done = false;
    void closed.then(() => (done = true));
    while (!done && Date.now() - started < 16_000) {
      const t = Date.now();
      expect((await get('/metrics')).status).toBe(200);
      slowest.push(Date.now() - t);
      await new Promise((r) => setTimeout(r, 250));
    }
    const after = await closed;
    clearInterval(trickle);
    expect(after).toBeGreaterThanOrEqual(9_500);
    expect(after).toBeLessThan(13_000);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(slowest.length).toBeGreaterThan(10);
    expect(Math.max(...slowest)).toBeLessThan(1_000);
  }, 30_000);

  it('is still running, with no crash or unhandled error in its log', async () => {
    expect(exporter.proc.exitCode).toBeNull();
    expect(await healthy()).toBe(true);
    expect(exporter.output()).not.toMatch(/unhandled rejection|uncaught|TypeError|ReferenceError|"level":"fatal"/i);
    expect(exporter.output().split("\n").filter((l) => l.includes("request failed"))).toEqual([]);
  });
});
