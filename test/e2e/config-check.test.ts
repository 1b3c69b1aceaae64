import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../helpers/exporter-process.js';

/**
 * `--config.check` through the real CLI: every problem of a config in one run, one line each naming the key and the
 * file, a summary line, and exit 0 (valid) or 2 (invalid), without starting anything or asking any server.
 */

const EXAMPLE = new URL('../../deploy/config.example.yaml', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'wowza-config-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lines = (out: string) => out.trim().split('\n');

describe('--config.check', () => {
  it('on the shipped example lists exactly the secret files a user must create, in one run, and exits 2', async () => {
    const r = await runCli(['--config.check', '--config', EXAMPLE], { env: { WOWZA_PASSWORD: '' } });
    expect(r.code).toBe(2);
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
    expect(r.code).toBe(2);
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
    expect(r.code).toBe(2);
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

  it('serve without --config.check still refuses to start, and names every problem', async () => {
    const config = join(dir, 'two.yaml');
    writeFileSync(config, stringify({ servers: [{ url: 'http://127.0.0.1:1', password_file: join(dir, 'no-password') }], webhooks: { enabled: true, secret_file: join(dir, 'no-secret') }, web: { listen_address: '127.0.0.1:0' } }));
    const r = await runCli(['--config', config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('2 configuration problems');
    expect(r.stderr).toContain(`servers[0].password_file: cannot read ${join(dir, 'no-password')} (ENOENT)`);
    expect(r.stderr).toContain(`webhooks.secret_file: cannot read ${join(dir, 'no-secret')} (ENOENT)`);
  });
});
