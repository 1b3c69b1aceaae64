import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { runSimulator, simulateCommand, simulatorOptionsFromArgs, withSimulateFlags } from '../../../src/commands/simulate.js';
import { ConfigError } from '../../../src/config/errors.js';

const run = promisify(execFile);
// Parsed as src/cli.ts parses (dot-notation off, strict).
const parse = async (args: string[]) =>
  withSimulateFlags(yargs().parserConfiguration({ 'dot-notation': false }).exitProcess(false).fail(false))
    .strict()
    .parseAsync(args) as Promise<Record<string, unknown>>;

async function hasCurl(): Promise<boolean> {
  try {
    await run('curl', ['--version']);
    return true;
  } catch {
    console.warn('curl not installed: skipping the curl checks');
    return false;
  }
}

describe('simulate command flags', () => {
  it('is the `simulate` command with the documented defaults', async () => {
    expect(simulateCommand.command).toBe('simulate');
    const opts = simulatorOptionsFromArgs(await parse([]));
    expect(opts).toMatchObject({ port: 8087, host: '127.0.0.1', vhosts: 1, apps: 3, streams: 3, auth: 'basic', username: 'admin', password: 'admin', seed: 1, logs: { linesPerSecond: 5 } });
    // A default install: REST on Basic, the admin port (connectioncounts) on 8086 with admin-digest.
    expect(opts).toMatchObject({ adminPort: 8086, adminAuth: 'digest' });
    expect(opts.digestAlgorithms).toBeUndefined();
    expect(opts.tls).toBeUndefined();
  });

  it('reads every flag, the digest algorithm repeatable', async () => {
    const opts = simulatorOptionsFromArgs(
      await parse([
        '--port', '0', '--host', '127.0.0.1', '--vhosts', '2', '--apps', '4', '--streams', '5', '--auth', 'digest',
        '--digest-algorithm', 'SHA-256', '--digest-algorithm', 'MD5', '--username', 'ops', '--password', 's3cret',
        '--seed', '9', '--latency', '20ms', '--log-rate', '0',
      ]),
    );
    expect(opts).toMatchObject({ port: 0, vhosts: 2, apps: 4, streams: 5, auth: 'digest', digestAlgorithms: ['SHA-256', 'MD5'], username: 'ops', password: 's3cret', seed: 9, latencyMs: 20, logs: { linesPerSecond: 0 } });
  });

  it('names the flag that is wrong', async () => {
    await expect(parse(['--auth', 'kerberos'])).rejects.toThrow(/auth/);
    await expect(parse(['--digest-algorithm', 'SHA-1'])).rejects.toThrow(/digest-algorithm/);
    const bad = async (args: string[]) => simulatorOptionsFromArgs(await parse(args));
    await expect(bad(['--latency', 'soon'])).rejects.toThrow(/^--latency: invalid duration "soon"/);
    await expect(bad(['--vhosts', '-1'])).rejects.toThrow(/--vhosts must be a non-negative integer/);
    await expect(bad(['--port', '70000'])).rejects.toThrow(/--port must be at most 65535/);
    await expect(bad(['--log-rate', '-1'])).rejects.toThrow(/--log-rate/);
    await expect(bad(['--tls-cert', '/nonexistent/cert.pem'])).rejects.toThrow(/--tls-cert and --tls-key go together/);
    await expect(bad(['--tls-cert', '/nonexistent/cert.pem', '--tls-key', '/nonexistent/key.pem'])).rejects.toThrow(ConfigError);
    await expect(bad(['--tls-cert', '/nonexistent/cert.pem', '--tls-key', '/nonexistent/key.pem'])).rejects.toThrow(/--tls-cert: cannot read \/nonexistent\/cert\.pem: ENOENT/);
  });
});

describe('simulate command', () => {
  it('prints its URL, auth and credentials and a curl line that works as printed', async () => {
    const out = new PassThrough();
    let printed = '';
    out.on('data', (c: Buffer) => (printed += c.toString()));
    const opts = simulatorOptionsFromArgs(await parse(['--port', '0', '--admin-port', '0', '--auth', 'digest', '--log-rate', '0', '--password', "it's"]));
    const sim = await runSimulator(opts, out);
    try {
      expect(printed).toContain(`listening on ${sim.url}`);
      expect(printed).toContain('auth:     digest (MD5), username "admin", password "it\'s"');
      const curl = /try: +(curl .*)$/m.exec(printed)![1]!;
      expect(curl).toBe(`curl --digest -u 'admin:it'\\''s' -H 'Accept: application/json' ${sim.url}/v2/machine/monitoring/current`);
      if (!(await hasCurl())) return;
      const { stdout } = await run('sh', ['-c', `${curl} -sS --noproxy '*'`]);
      expect(Object.keys(JSON.parse(stdout)).sort()).toEqual(
        ['serverName', 'version', 'serverUptime', 'cpuIdle', 'cpuUser', 'cpuSystem', 'memoryFree', 'memoryUsed', 'heapFree', 'heapUsed', 'diskFree', 'diskUsed', 'connectionCount'].sort(),
      );
      const xml = await run('curl', ['-sS', '--noproxy', '*', '--digest', '-u', "admin:it's", `${sim.url}/v2/machine/monitoring/current`]);
      expect(xml.stdout).toMatch(/^<\?xml[\s\S]*<CurrentMachineStatistics>/);
      const denied = await run('curl', ['-sS', '--noproxy', '*', '-o', '/dev/null', '-w', '%{http_code}', '--digest', '-u', 'admin:wrong', `${sim.url}/v2/machine/monitoring/current`]);
      expect(denied.stdout).toBe('401');
      // The admin port has its own scheme: Digest, whatever the REST API uses; Basic is refused there.
      expect(printed).toContain(`admin:    ${sim.countsUrl} (auth digest)`);
      const counts = await run('curl', ['-sS', '--noproxy', '*', '--digest', '-u', "admin:it's", `${sim.countsUrl}?flat`]);
      expect(counts.stdout).toMatch(/<WowzaStreamingEngine>[\s\S]*<Stream vhostName=/);
      const basic = await run('curl', ['-sS', '--noproxy', '*', '-o', '/dev/null', '-w', '%{http_code}', '--basic', '-u', "admin:it's", sim.countsUrl]);
      expect(basic.stdout).toBe('401');
    } finally {
      await sim.close();
    }
  });

  it('serves HTTPS from --tls-cert/--tls-key and says to use curl -k', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-cmd-tls-'));
    try {
      execFileSync('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
        '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
      ], { stdio: 'ignore' });
      const out = new PassThrough();
      let printed = '';
      out.on('data', (c: Buffer) => (printed += c.toString()));
      const opts = simulatorOptionsFromArgs(await parse(['--port', '0', '--admin-port', '0', '--auth', 'none', '--log-rate', '0', '--tls-cert', join(dir, 'cert.pem'), '--tls-key', join(dir, 'key.pem')]));
      const sim = await runSimulator(opts, out);
      try {
        expect(sim.url).toMatch(/^https:/);
        expect(printed).toContain(`try:      curl -k -H 'Accept: application/json' ${sim.url}/v2/machine/monitoring/current`);
        if (!(await hasCurl())) return;
        const { stdout } = await run('curl', ['-sSk', '--noproxy', '*', '-H', 'Accept: application/json', `${sim.url}/v2/servers/_defaultServer_/status`]);
        expect(JSON.parse(stdout)).toMatchObject({ serverVersion: expect.stringMatching(/^Wowza Streaming Engine/) });
      } finally {
        await sim.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a bad option as a usage error and a busy port as a runtime error', async () => {
    await expect(runSimulator({ port: 0, vhosts: 1.5 }, new PassThrough())).rejects.toThrow(ConfigError);
    const first = await runSimulator({ port: 0, logs: { linesPerSecond: 0 } }, new PassThrough());
    try {
      const busy = runSimulator({ port: first.port }, new PassThrough());
      await expect(busy).rejects.toThrow(/address already in use/);
      await expect(busy).rejects.not.toThrow(ConfigError);
    } finally {
      await first.close();
    }
  });
});
