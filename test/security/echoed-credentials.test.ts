import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { DEFAULT_VHOST, startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WowzaClient, type WowzaTarget } from '../../src/wowza/client.js';
import { runCli, startExporterProcess } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';
import { secretForms, secretLeaks } from '../helpers/secret-forms.js';

/**
 * Issue 41: a server (or a proxy) that echoes the request back in a 2xx body that is not JSON. Error bodies were
 * scrubbed of credentials; a 2xx body's excerpt reached the log and /api/v1/status as it came.
 */
const PASSWORD = 'Echo-pa55word';
const BASIC = Buffer.from(`admin:${PASSWORD}`).toString('base64');

describe('credentials a server echoes in a 2xx answer', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const auth = req.headers.authorization;
      if (!auth) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="Wowza"' }).end();
        return;
      }
      const decoded = Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString('utf8');
      // Not JSON, 200: the password first, so that any excerpt of the body holds it.
      res.writeHead(200, { 'content-type': 'application/json' }).end(`${decoded.split(':')[1]} ${auth} you sent ${decoded}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('never reach the log or /api/v1/status', async () => {
    const exporter = await startExporterProcess(['--wowza.url', url, '--wowza.username', 'admin', '--wowza.connectioncounts-url', 'off', '--poll.interval', '1s'], { WOWZA_PASSWORD: PASSWORD });
    try {
      const status = await waitFor('a collector failure with the body excerpt', async () => {
        const text = await (await fetch(`${exporter.url}/api/v1/status`)).text();
        return /invalid JSON/.test(text) ? text : undefined;
      }, 30_000);
      expect(status).toContain('[REDACTED]');
      for (const secret of [PASSWORD, BASIC, PASSWORD.slice(0, 6)]) {
        expect(status).not.toContain(secret);
        expect(exporter.output()).not.toContain(secret);
      }
    } finally {
      await exporter.stop();
    }
  }, 60_000);
});

/**
 * Issue 47: the scrub blanked the password as itself and the base64 of `user:password` only. A server (or a proxy)
 * that quotes it URL-encoded (`%21`), JSON-escaped (`\u0021`) or in base64 got 6 of its 7 characters through, and an
 * error page cut at 200 characters before the scrub could end in the start of it.
 */
describe('credentials a server echoes in any form', () => {
  const password = 'Pa5s!wd';
  let server: Server;
  let url: string;
  /** What the next authenticated request is answered: status, content type, body made from the password it was sent. */
  let answer: (password: string, auth: string) => [number, string, string] = () => [200, 'application/json', '{}'];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const auth = req.headers.authorization;
      if (!auth) return void res.writeHead(401, { 'www-authenticate': 'Basic realm="Wowza"' }).end();
      const decoded = Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString('utf8');
      const [status, type, body] = answer(decoded.slice(decoded.indexOf(':') + 1), auth);
      res.writeHead(status, { 'content-type': type }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  async function failure(): Promise<string> {
    const target: WowzaTarget = { name: 'wse', url, username: 'admin', password, auth: 'basic', timeoutMs: 2000, maxResponseBytes: 1 << 20, serverName: '_defaultServer_', connections: 1 };
    const client = new WowzaClient(target);
    try {
      await client.machineCurrent();
    } catch (err) {
      return (err as Error).message;
    } finally {
      await client.close();
    }
    throw new Error('the request did not fail');
  }

  const every = (pw: string, auth: string) => `${Object.values(secretForms(pw, 'admin')).join(' ')} ${auth}`;

  it('in an error envelope, an error page, a page cut inside the password and a 2xx body that is not JSON', async () => {
    const answers: Array<[string, typeof answer]> = [
      ['JSON envelope', (pw, auth) => [500, 'application/json', JSON.stringify({ success: false, message: `refused ${every(pw, auth)}`, code: '500', wowzaServer: '4.9.4' })]],
      ['text page', (pw, auth) => [502, 'text/plain', `bad gateway: ${every(pw, auth)}`]],
      ['page cut at 200 characters', (pw) => [503, 'text/plain', `${'x'.repeat(195)}${pw} and more`]],
      ['2xx not JSON', (pw, auth) => [200, 'application/json', `${pw} ${every(pw, auth)}`]],
    ];
    const leaks: string[] = [];
    for (const [name, a] of answers) {
      answer = a;
      const message = await failure();
      expect(message, name).toContain('[REDACTED]');
      leaks.push(...secretLeaks(name, message, password, 'admin'));
      // The first 5 characters, where the page was cut.
      if (message.includes(password.slice(0, 5))) leaks.push(`${name}: the start of the password`);
    }
    expect(leaks).toEqual([]);
  });
});

/** A loopback server answering what `answer` makes of the credentials of each authenticated request; 401 without. */
async function echoServer(answer: (user: string, password: string, auth: string, path: string) => [number, string, string]): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const auth = req.headers.authorization;
      if (!auth) return void res.writeHead(401, { 'www-authenticate': 'Basic realm="Wowza"' }).end();
      const decoded = Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const [status, type, body] = answer(decoded.slice(0, colon), decoded.slice(colon + 1), auth, req.url ?? '');
      res.writeHead(status, { 'content-type': type }).end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

/**
 * Issue 47, as the attack ran it: the built exporter, `doctor` and `logs tail`, against a WSE whose recorder error
 * string quotes its password, a Loki that quotes the credentials it decoded, a REST port that quotes them in every
 * form, and access log lines with `rtmp://user:password@`. Every output is searched for every form of each secret.
 */
describe('secrets echoed back, through the CLI', () => {
  const wsePassword = 'Ws3!pass';
  const lokiPassword = 'L0ki!pass';
  const forms = (user: string, pw: string) => Object.values(secretForms(pw, user)).join(' | ');
  let dir: string;
  let sim: Simulator;
  let loki: Awaited<ReturnType<typeof echoServer>>;
  let rest: Awaited<ReturnType<typeof echoServer>>;
  const outputs = new Map<string, string>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'echoed-secrets-'));
    sim = await startSimulator({ streams: 1, auth: 'basic', username: 'admin', password: wsePassword });
    sim.topology.addApp(DEFAULT_VHOST, 'rec', { running: true });
    sim.topology.addStream(DEFAULT_VHOST, 'rec', 'hall', { recording: true });
    sim.topology.stopRecording(DEFAULT_VHOST, 'rec', 'hall', 'Waiting for stream', `cannot write to rtmp://admin:${wsePassword}@10.0.0.1/store: ${forms('admin', wsePassword)}`);
    sim.logs.append('wowzastreamingengine_access', [
      { 'x-event': 'connect', 'x-category': 'session', 'x-severity': 'INFO', 'x-app': 'rec', 'x-sname': 'hall', 'x-suri': 'rtmp://camuser:campa55word@203.0.113.7:1935/live/hall' },
    ]);
    let pushes = 0;
    loki = await echoServer((user, pw) => [++pushes === 1 ? 503 : 400, 'text/plain', `no such user ${user}:${pw} ${forms(user, pw)}`]);
    rest = await echoServer((user, pw, auth, path) =>
      path.includes('/monitoring/current') ? [200, 'application/json', `${pw} ${forms(user, pw)} ${auth}`] : [500, 'application/json', JSON.stringify({ success: false, message: `you sent ${forms(user, pw)} ${auth}`, code: '500', wowzaServer: '4.9.4' })],
    );
    const secret = (name: string, value: string) => {
      writeFileSync(join(dir, name), `${value}\n`, { mode: 0o600 });
      return join(dir, name);
    };
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      stringify({
        servers: [{ name: 'wse-1', url: sim.url, username: 'admin', password_file: secret('wse-password', wsePassword), auth: 'basic', connectioncounts_url: 'off' }],
        poll: { interval: '1s', max_requests_per_second: 0 },
        logs: {
          positions_file: join(dir, 'positions.json'),
          dead_letter_file: join(dir, 'dead-letter.ndjson'),
          start_at: 'beginning',
          log_types: ['access'],
          follow_interval: '200ms',
          batch: { max_wait: '100ms' },
          retry: { min_backoff: '50ms', max_backoff: '100ms', max_retries: 1 },
          sinks: [{ type: 'loki', url: loki.url, username: 'shipper', password_file: secret('loki-password', lokiPassword) }],
        },
      }),
    );
    const exporter = await startExporterProcess(['--config', config, '--log.level', 'debug'], { WOWZA_PASSWORD: '' });
    try {
      const status = await waitFor('the recorder error on the status API and a dead-lettered batch', async () => {
        const text = await (await fetch(`${exporter.url}/api/v1/status`)).text();
        return text.includes('cannot write to rtmp://10.0.0.1/store') && exporter.output().includes('moved to the dead-letter file') ? text : undefined;
      }, 60_000);
      outputs.set('/api/v1/status', status);
    } finally {
      await exporter.stop();
    }
    outputs.set('serve log', exporter.output());
    outputs.set('dead letters', readFileSync(join(dir, 'dead-letter.ndjson'), 'utf8'));
    const env = { WOWZA_PASSWORD: wsePassword };
    for (const json of [false, true]) {
      const doctor = await runCli(['doctor', '--wowza.url', rest.url, '--wowza.username', 'admin', '--wowza.auth', 'basic', ...(json ? ['--json'] : [])], { env });
      outputs.set(`doctor${json ? ' --json' : ''}`, `${doctor.stdout}\n${doctor.stderr}`);
    }
    const tail = await runCli(['logs', 'tail', '--wowza.url', sim.url, '--wowza.username', 'admin', '--wowza.auth', 'basic', '--log-type', 'access', '--start-at', 'beginning', '--format', 'json'], { env });
    outputs.set('logs tail', `${tail.stdout}\n${tail.stderr}`);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([sim?.close(), loki?.close(), rest?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('went where the attack went', () => {
    expect(outputs.get('serve log')).toMatch(/stream recorder reports an error/);
    expect(outputs.get('serve log')).toMatch(/sending logs failed; retrying/);
    expect(outputs.get('dead letters')).toMatch(/answered HTTP 400: no such user shipper:\[REDACTED\]/);
    expect(outputs.get('doctor')).toMatch(/content-type: .*you sent \[REDACTED\]/);
    expect(outputs.get('logs tail')).toMatch(/"x-suri":"rtmp:\/\/203\.0\.113\.7:1935\/live\/hall"/);
  });

  it('shows no form of any secret in the log, the status API, the dead letters, doctor or logs tail', () => {
    const leaks = [...outputs].flatMap(([where, text]) => {
      // JSON outputs are also searched as read back: a JSON-escaped form written into JSON is escaped twice.
      const readBack = text.replace(/\\\\/g, '\\');
      return [text, readBack].flatMap((t) => [
        ...secretLeaks(where, t, wsePassword, 'admin'),
        ...secretLeaks(where, t, lokiPassword, 'shipper'),
        ...['camuser', 'campa55word'].filter((s) => t.includes(s)).map((s) => `${where}: ${s}`),
      ]);
    });
    expect(leaks).toEqual([]);
  });
});
