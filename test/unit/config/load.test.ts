import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../../src/config/duration.js';
import { intervalFor, loadConfig } from '../../../src/config/load.js';
import { configError } from '../../helpers/config-error.js';

const dir = mkdtempSync(join(tmpdir(), 'wowza-config-'));
function file(name: string, text: string, mode = 0o600): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  chmodSync(p, mode);
  return p;
}


describe('durations', () => {
  it('parses units and compound forms', () => {
    expect(parseDuration('15s')).toBe(15_000);
    expect(parseDuration('2m')).toBe(120_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('10')).toBe(10_000);
  });
  it('rejects nonsense with a hint', () => {
    expect(() => parseDuration('15 seconds')).toThrow(/like 500ms, 15s/);
    expect(() => parseDuration('')).toThrow(/invalid duration/);
  });
});

describe('config loading', () => {
  it('defaults to one local server with auto auth', () => {
    const rt = loadConfig({}, {});
    expect(rt.servers).toHaveLength(1);
    expect(rt.servers[0]).toMatchObject({ name: '127.0.0.1:8087', url: 'http://127.0.0.1:8087', auth: 'auto', timeoutMs: 5000, serverName: '_defaultServer_' });
    expect(rt.config.web.listen_address).toBe(':9935');
    expect(rt.collectors.stream).toEqual({ enabled: true, intervalMs: 15_000, own: false });
    expect(rt.collectors.video.enabled).toBe(false); // no token
  });

  it('names an unknown key with its path and a suggestion', () => {
    const cfg = file('typo.yaml', 'servers:\n  - urll: http://127.0.0.1:8087\n');
    const msg = configError(() => loadConfig({ config: cfg }, {}));
    expect(msg).toContain('servers[0].urll: unknown key (did you mean "url"?)');
    expect(msg).toContain('servers[0].url');
  });

  it('reports every wrong field in turn', () => {
    const cases: Array<[string, RegExp]> = [
      ['poll:\n  interval: 15 seconds\n', /poll\.interval: invalid duration/],
      ['poll:\n  concurrency: 0\n', /poll\.concurrency/],
      ['servers:\n  - url: ftp://x\n', /servers\[0\]\.url: URL must be http or https/],
      ['servers:\n  - url: http://admin:secret@x:8087\n', /servers\[0\]\.url: credentials do not belong in the URL/],
      ['servers:\n  - url: http://x:8087\n    auth: ntlm\n', /servers\[0\]\.auth/],
      ['discovery:\n  streams:\n    include: "(["\n', /discovery\.streams\.include: invalid regular expression/],
      ['log:\n  level: loud\n', /log\.level/],
      ['collectors:\n  strem: false\n', /collectors\.strem/],
      ['modules:\n  default:\n    username: a\n    allowed_targets: http://wowza\n', /modules\.default\.allowed_targets/],
      ['- just\n- a list\n', /top level must be a mapping/],
      ['servers: [\n', /invalid YAML/],
    ];
    for (const [text, re] of cases) {
      const msg = configError(() => loadConfig({ config: file('case.yaml', text) }, {}));
      expect(msg, text).toMatch(re);
    }
  });

  it('does not echo secrets in errors', () => {
    const msg = configError(() => loadConfig({ config: file('cred.yaml', 'servers:\n  - url: http://admin:hunter2@x:8087\n') }, {}));
    expect(msg).not.toContain('hunter2');
  });

  it('flags win over the file, password comes from a file or the environment', () => {
    const pw = file('pw', 's3cret\n');
    const cfg = file('two.yaml', `servers:\n  - name: a\n    url: http://10.0.0.1:8087\n    username: u\n    password_file: ${pw}\n  - name: b\n    url: http://10.0.0.2:8087\npoll:\n  interval: 30s\n`);
    const rt = loadConfig({ config: cfg, pollInterval: '20s', wowzaAuth: 'digest', collectors: { stream: false } }, { WOWZA_PASSWORD: 'fromenv' });
    expect(rt.config.poll.interval).toBe(20_000);
    expect(rt.servers.map((s) => [s.name, s.auth, s.password])).toEqual([
      ['a', 'digest', 's3cret'],
      ['b', 'digest', 'fromenv'],
    ]);
    expect(rt.collectors.stream.enabled).toBe(false);
  });

  it('--wowza.url replaces the configured servers', () => {
    const rt = loadConfig({ wowzaUrl: ['http://h1:8087', 'https://h2'], wowzaUsername: 'admin' }, {});
    expect(rt.servers.map((s) => [s.name, s.username])).toEqual([
      ['h1:8087', 'admin'],
      ['h2:443', 'admin'],
    ]);
  });

  it('warns about a world-readable secret file and rejects a missing one', () => {
    const pw = file('open-pw', 'x', 0o644);
    const warnings: string[] = [];
    loadConfig({ wowzaPasswordFile: pw }, {}, (m) => warnings.push(m));
    expect(warnings.join()).toMatch(/readable by every user/);
    expect(configError(() => loadConfig({ wowzaPasswordFile: join(dir, 'nope') }, {}))).toMatch(/servers\[0\]\.password_file: cannot read .* \(ENOENT\)/);
  });

  it('rejects duplicate names and a set timeout that does not fit the poll deadline, naming both settings', () => {
    expect(configError(() => loadConfig({ wowzaUrl: ['http://h:1', 'http://h:1'] }, {}))).toMatch(/used twice/);
    expect(configError(() => loadConfig({ wowzaTimeout: '20s', pollInterval: '15s' }, {}))).toMatch(
      /^servers\[0\]\.timeout: the request timeout \(20s\) must be shorter than the poll deadline of poll\.interval 15s \(13500ms/,
    );
    // A collector of its own, faster interval is the one a request must fit in.
    const cfg = file('fast-machine.yaml', 'poll:\n  timeout: 3s\ncollectors:\n  machine: {interval: 2s}\n');
    expect(configError(() => loadConfig({ config: cfg }, {}))).toMatch(/^poll\.timeout: .* collectors\.machine\.interval 2s \(1800ms/);
  });

  it('connectioncounts URLs go with the --wowza.url of the same position; the stream collector then polls every 60 s', () => {
    const rt = loadConfig({ wowzaUrl: ['http://a:8087', 'http://b:8087'], wowzaConnectionCountsUrl: ['http://a:8086/connectioncounts', 'http://b:8086/connectioncounts'] }, {});
    expect(rt.servers.map((s) => s.connectionCountsUrl)).toEqual(['http://a:8086/connectioncounts', 'http://b:8086/connectioncounts']);
    expect(intervalFor(rt, 'stream', rt.servers[0]!)).toBe(60_000);
    expect(intervalFor(rt, 'machine', rt.servers[0]!)).toBe(15_000);
    expect(configError(() => loadConfig({ wowzaUrl: ['http://a:8087', 'http://b:8087'], wowzaConnectionCountsUrl: ['http://a:8086/connectioncounts'] }, {}))).toMatch(
      /--wowza.connectioncounts-url: give one per server \(1 for 2\)/,
    );
    // A stream interval set on purpose stands; without connectioncounts nothing changes.
    const own = file('own-stream.yaml', 'collectors:\n  stream: {interval: 30s}\n');
    const rt2 = loadConfig({ config: own, wowzaUrl: ['http://a:8087'], wowzaConnectionCountsUrl: ['http://a:8086/connectioncounts'] }, {});
    expect(intervalFor(rt2, 'stream', rt2.servers[0]!)).toBe(30_000);
    const plain = loadConfig({}, {});
    expect(intervalFor(plain, 'stream', plain.servers[0]!)).toBe(15_000);
  });

  it('lets the request timeout follow any interval from 1 s up when none is set', () => {
    for (const [interval, timeout] of [['1s', 800], ['2s', 1600], ['5s', 4000], ['6250ms', 5000], ['15s', 5000], ['1m', 5000]] as const) {
      const rt = loadConfig({ pollInterval: interval }, {});
      expect(rt.servers[0]!.timeoutMs, interval).toBe(timeout);
      // Log reads are not bound by the poll interval.
      expect(rt.logServers[0]!.timeoutMs, interval).toBe(5000);
    }
    const cfg = file('fast-stream.yaml', 'collectors:\n  stream: {interval: 1s}\n  machine: {enabled: true, interval: 500ms}\n');
    expect(loadConfig({ config: cfg }, {}).servers[0]!.timeoutMs).toBe(400);
    // A disabled collector's interval does not count.
    const off = file('fast-off.yaml', 'collectors:\n  machine: {enabled: false, interval: 1s}\n');
    expect(loadConfig({ config: off }, {}).servers[0]!.timeoutMs).toBe(5000);
    expect(loadConfig({ pollInterval: '1s', wowzaTimeout: '700ms' }, {}).servers[0]!.timeoutMs).toBe(700);
  });
});
