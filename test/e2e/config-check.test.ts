import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../helpers/exporter-process.js';

/**
 * `--config.check` through the real CLI: every problem of a config in one run, one line each naming the key and the
 * file, a summary line, and exit 0 (valid) or 1 (invalid, as promtool's and blackbox_exporter's checks), without
 * starting anything or asking any server.
 */

const EXAMPLE = new URL('../../deploy/config.example.yaml', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'wowza-config-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lines = (out: string) => out.trim().split('\n');

describe('--config.check', () => {
  it('on the shipped example lists exactly the secret files a user must create, in one run, and exits 1', async () => {
    const r = await runCli(['--config.check', '--config', EXAMPLE], { env: { WOWZA_PASSWORD: '' } });
    expect(r.code).toBe(1);
    expect(lines(r.stdout)).toEqual([
      'servers[0].password_file: cannot read /etc/wowza-exporter/secrets/password (ENOENT)',
      'modules.default.password_file: cannot read /etc/wowza-exporter/secrets/password (ENOENT)',
      `config.check: ${EXAMPLE}: 2 problems; the exporter would not start`,
    ]);
  });

  it('passes (exit 0) on a copy of the example once those files exist, with `serve` named too, and starts nothing', async () => {
    const password = join(dir, 'password');
    const secret = join(dir, 'webhook-secret');
    writeFileSync(password, 'wowza-password\n', { mode: 0o600 });
    writeFileSync(secret, 'webhook-secret\n', { mode: 0o600 });
    const copy = join(dir, 'config.yaml');
    writeFileSync(copy, readFileSync(EXAMPLE, 'utf8').replaceAll('/etc/wowza-exporter/secrets/password', password).replaceAll('/etc/wowza-exporter/secrets/webhook-secret', secret));
    for (const args of [['--config.check', '--config', copy], ['serve', '--config.check', '--config', copy]]) {
      const r = await runCli(args);
      expect(r.stdout.trim(), args.join(' ')).toBe(`config.check: ${copy} is valid`);
      expect(r.code).toBe(0);
      // Nothing started: no exporter log line on stderr.
      expect(r.stderr).toBe('');
      // The secrets themselves never reach the output.
      expect(r.stdout).not.toMatch(/wowza-password|webhook-secret\n/);
    }
  });

  it('reports three problems of three kinds in one run: a bad key, a missing CA file and a missing password file', async () => {
    const config = join(dir, 'three.yaml');
    writeFileSync(
      config,
      stringify({
        servers: [{ url: 'http://127.0.0.1:1', password_file: join(dir, 'no-password'), tls: { ca_file: join(dir, 'no-ca.pem') } }],
        poll: { interval: '15 seconds' },
      }),
    );
    const r = await runCli(['--config.check', '--config', config]);
    expect(r.code).toBe(1);
    const out = lines(r.stdout);
    expect(out).toHaveLength(4);
    expect(out).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^poll\.interval: invalid duration "15 seconds"/),
        `servers[0].password_file: cannot read ${join(dir, 'no-password')} (ENOENT)`,
        `servers[0].tls.ca_file: cannot read ${join(dir, 'no-ca.pem')} (ENOENT)`,
      ]),
    );
    expect(out[3]).toBe(`config.check: ${config}: 3 problems; the exporter would not start`);
  });

  it('reports every file problem of a config the schema accepts, its web config included', async () => {
    const notPem = join(dir, 'not-a-ca.pem');
    writeFileSync(notPem, 'hello\n');
    const config = join(dir, 'files.yaml');
    writeFileSync(
      config,
      stringify({
        servers: [{ url: 'http://127.0.0.1:1', tls: { ca_file: notPem } }],
        web: { config_file: join(dir, 'no-web.yml') },
        webhooks: { enabled: true, secret_file: join(dir, 'no-secret') },
        logs: { positions_file: join(notPem, 'positions.json'), sinks: [{ type: 'loki', url: 'http://127.0.0.1:1', bearer_token_file: join(dir, 'no-token') }] },
      }),
    );
    const r = await runCli(['--config.check', '--config', config]);
    expect(r.code).toBe(1);
    expect(lines(r.stdout)).toEqual([
      `servers[0].tls.ca_file: ${notPem} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
      `webhooks.secret_file: cannot read ${join(dir, 'no-secret')} (ENOENT)`,
      `logs.positions_file: cannot create the directory of ${join(notPem, 'positions.json')}: ${notPem} is a file, not a directory`,
      `logs.sinks[0].bearer_token_file: cannot read ${join(dir, 'no-token')} (ENOENT)`,
      expect.stringMatching(/^(--)?web\.config\.file: cannot read .*no-web\.yml.*ENOENT/),
      `config.check: ${config}: 5 problems; the exporter would not start`,
    ]);
  });

  it('a secret file every user may read is a warning, not a problem: exit 0', async () => {
    const password = join(dir, 'open-password');
    writeFileSync(password, 'x\n');
    chmodSync(password, 0o644);
    const config = join(dir, 'warned.yaml');
    writeFileSync(config, stringify({ servers: [{ url: 'http://127.0.0.1:1', password_file: password }] }));
    const r = await runCli(['--config.check', '--config', config]);
    expect(lines(r.stdout)).toEqual([`warning: servers[0].password_file: ${password}: secret file is readable by every user; chmod 600 it`, `config.check: ${config} is valid (1 warning)`]);
    expect(r.code).toBe(0);
  });

  it('without a file, names what it checked as the configuration the flags make', async () => {
    const ok = await runCli(['--config.check', '--wowza.url', 'http://wowza:8087', '--wowza.username', 'admin'], { env: { WOWZA_PASSWORD: 'x' } });
    expect(ok.stdout.trim()).toBe('config.check: the configuration from the flags is valid');
    expect(ok.code).toBe(0);
    const bad = await runCli(['--config.check', '--wowza.url', 'ftp://wowza', '--wowza.username', 'admin'], { env: { WOWZA_PASSWORD: 'x' } });
    expect(lines(bad.stdout).at(-1)).toBe('config.check: the configuration from the flags: 1 problem; the exporter would not start');
    expect(bad.code).toBe(1);
  });

  it('serve without --config.check still refuses to start (exit 2, a usage error to systemd), and names every problem', async () => {
    const config = join(dir, 'two.yaml');
    writeFileSync(config, stringify({ servers: [{ url: 'http://127.0.0.1:1', password_file: join(dir, 'no-password') }], webhooks: { enabled: true, secret_file: join(dir, 'no-secret') }, web: { listen_address: '127.0.0.1:0' } }));
    const r = await runCli(['--config', config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('2 configuration problems');
    expect(r.stderr).toContain(`servers[0].password_file: cannot read ${join(dir, 'no-password')} (ENOENT)`);
    expect(r.stderr).toContain(`webhooks.secret_file: cannot read ${join(dir, 'no-secret')} (ENOENT)`);
  });

  it('reads every target file servers_files matches: two files, three problems, each named with its file and entry; exit 1', async () => {
    const targets = join(dir, 'targets');
    mkdirSync(targets);
    const a = join(targets, 'a.yml');
    const b = join(targets, 'b.yml');
    writeFileSync(a, stringify([{ targets: ['wowza-1:8087'] }, { targets: ['wowza-2:8087'], labels: { server: 'x' } }, { targets: ['ftp://wowza-3:21'] }]));
    writeFileSync(b, '- targets: [wowza-4:8087\n');
    const config = join(dir, 'fleet.yaml');
    writeFileSync(config, stringify({ servers_files: [join(targets, '*.yml')], modules: { default: { username: 'u' } } }));
    const r = await runCli(['--config.check', '--config', config], { env: { WOWZA_PASSWORD: 'x' }, timeoutMs: 30_000 });
    expect(lines(r.stdout)).toEqual([
      `${a}: entry 2 (url wowza-2:8087): [1].labels.server: "server" is a label the exporter sets itself`,
      `${a}: entry 3 (url ftp://wowza-3:21): [2].targets[0]: must be http or https, not ftp:`,
      expect.stringMatching(new RegExp(`^${b}: not YAML or JSON: .* at line \\d+, column \\d+$`)),
      `config.check: ${config}: 3 problems; the exporter would not start`,
    ]);
    expect(r.code).toBe(1);

    // Fixed: valid, exit 0, through the Prometheus spelling of the flag too.
    writeFileSync(a, stringify([{ targets: ['wowza-1:8087'] }, { targets: ['wowza-2:8087'], labels: { site: 'x' } }, { targets: ['https://wowza-3:8089'] }]));
    writeFileSync(b, '- targets: [wowza-4:8087]\n');
    for (const flag of ['--config', '--config.file']) {
      const ok = await runCli(['--config.check', flag, config], { env: { WOWZA_PASSWORD: 'x' }, timeoutMs: 30_000 });
      expect(ok.stdout.trim(), flag).toBe(`config.check: ${config} is valid`);
      expect(ok.code, flag).toBe(0);
    }
  });

  describe('a file that is no config (issue 47): one line, exit 1, no hang, nothing of its content', () => {
    // /etc/passwd lines are one YAML scalar; /etc/shadow lines (a trailing colon) are YAML keys.
    const PASSWD = 'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n';
    const SHADOW = 'root:$6$pepper$Zq3hashedpasswordvalue:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n';
    const LEAKS = /x:0:0|bin\/bash|nologin|pepper|Zq3hashed|99999|root|daemon/;
    const link = (name: string, to: string) => {
      const path = join(dir, name);
      symlinkSync(to, path);
      return path;
    };
    const write = (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text, { mode: 0o600 });
      return path;
    };

    const cases: Array<[string, () => string, RegExp]> = [
      ['a symlink to passwd lines', () => link('passwd.yaml', write('passwd', PASSWD)), /: the top level must be a mapping of config keys .*this file is not a YAML mapping \(its content is not shown\)$/],
      ['a symlink to shadow lines', () => link('shadow.yaml', write('shadow', SHADOW)), /: the top level must be a mapping of config keys .*2 of its keys are not key names \(its content is not shown\)$/],
      [
        'a FIFO (through a symlink)',
        () => {
          const fifo = join(dir, 'fifo');
          execFileSync('mkfifo', [fifo]);
          return link('fifo.yaml', fifo);
        },
        /^--config: .*fifo\.yaml is a FIFO \(named pipe\), not a regular file; give the path of a config file$/,
      ],
      ['/dev/zero', () => '/dev/zero', /^--config: \/dev\/zero is a character device, not a regular file; give the path of a config file$/],
      ['a symlink to /dev/zero', () => link('zero.yaml', '/dev/zero'), /^--config: .*zero\.yaml is a character device, not a regular file/],
      [
        'a file over 4 MiB',
        () => {
          const big = write('big.yaml', 'servers: []\n');
          truncateSync(big, 5 * 1024 * 1024);
          return big;
        },
        /^--config: .*big\.yaml is larger than 4 MiB, the limit for a config file$/,
      ],
    ];
    for (const [what, make, expected] of cases) {
      it(what, async () => {
        const config = make();
        // A regression that blocks on the file is killed here (code null), not left to hang the suite.
        const r = await runCli(['--config.check', '--config', config], { timeoutMs: 20_000 });
        expect(r.code, r.stdout + r.stderr).toBe(1);
        const out = lines(r.stdout);
        expect(out).toHaveLength(2);
        expect(out[0]).toMatch(expected);
        expect(out[1]).toBe(`config.check: ${config}: 1 problem; the exporter would not start`);
        expect((r.stdout + r.stderr).replaceAll(dir, '')).not.toMatch(LEAKS);
        expect(r.stderr).toBe('');
      });
    }

    it('a FIFO as the web config or a password file: refused, no hang', async () => {
      const fifo = join(dir, 'fifo-2');
      execFileSync('mkfifo', [fifo]);
      const config = write('fifo-files.yaml', stringify({ servers: [{ url: 'http://127.0.0.1:1', password_file: fifo }], web: { config_file: fifo } }));
      const r = await runCli(['--config.check', '--config', config], { timeoutMs: 20_000 });
      expect(lines(r.stdout)).toEqual([
        `servers[0].password_file: ${fifo} is a FIFO (named pipe), not a regular file; give the path of a secret file`,
        `--web.config.file: ${fifo} is a FIFO (named pipe), not a regular file; give the path of a web config file`,
        `config.check: ${config}: 2 problems; the exporter would not start`,
      ]);
      expect(r.code).toBe(1);
    });
    it('a FIFO as a TLS certificate or key of the web config: refused, no hang', async () => {
      const fifo = join(dir, 'fifo-3');
      execFileSync('mkfifo', [fifo]);
      const web = write('fifo-tls-web.yaml', stringify({ tls_server_config: { cert_file: fifo, key_file: fifo } }));
      const config = write('fifo-tls.yaml', stringify({ servers: [{ url: 'http://127.0.0.1:1' }], web: { config_file: web } }));
      const r = await runCli(['--config.check', '--config', config], { env: { WOWZA_PASSWORD: 'x' }, timeoutMs: 20_000 });
      const out = lines(r.stdout);
      expect(out).toHaveLength(2);
      expect(out[0]).toContain(`tls_server_config.cert_file: ${fifo} is a FIFO (named pipe), not a regular file; give the path of a PEM file`);
      expect(out[1]).toBe(`config.check: ${config}: 1 problem; the exporter would not start`);
      expect(r.code).toBe(1);
    });
  });

  it('--config and --config.file together are one flag given twice: refused', async () => {
    const r = await runCli(['--config.check', '--config', EXAMPLE, '--config.file', EXAMPLE], { timeoutMs: 30_000 });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--config (or --config.file): given 2 times; give one file');
  });
});
