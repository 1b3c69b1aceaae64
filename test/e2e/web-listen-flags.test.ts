import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { CLI, runCli } from '../helpers/exporter-process.js';
import { freePort, waitFor } from '../helpers/ports.js';

/** Issue 30: the web flags of node_exporter, so that its systemd units and Ansible roles start this exporter too. */
describe('--web.telemetry-path, repeated --web.listen-address, --web.systemd-socket, --version', () => {
  let sim: Simulator | undefined;
  const stops: Array<() => void> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) stop();
    await sim?.close();
    sim = undefined;
  });

  const serve = (args: string[], extra: { stdio?: Array<'ignore' | 'pipe' | number>; shell?: string } = {}) => {
    const argv = [CLI, 'serve', '--wowza.url', sim!.url, '--wowza.username', sim!.username, '--poll.interval', '2s', ...args];
    const proc = extra.shell
      ? spawn('/bin/sh', ['-c', `${extra.shell} exec "$0" "$@"`, process.execPath, ...argv], { env: { ...process.env, WOWZA_PASSWORD: sim!.password }, stdio: extra.stdio ?? ['ignore', 'pipe', 'pipe'] })
      : spawn(process.execPath, argv, { env: { ...process.env, WOWZA_PASSWORD: sim!.password }, stdio: extra.stdio ?? ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    stops.push(() => proc.kill('SIGTERM'));
    return { proc, output: () => out };
  };
  const status = async (url: string) => {
    try {
      const res = await fetch(url);
      await res.text();
      return res.status;
    } catch {
      return undefined;
    }
  };

  it('serves the metrics at --web.telemetry-path and on every --web.listen-address', async () => {
    sim = await startSimulator({ frozen: true });
    const [a, b] = [await freePort(), await freePort()];
    const e = serve(['--web.listen-address', `127.0.0.1:${a}`, '--web.listen-address', `127.0.0.1:${b}`, '--web.telemetry-path', '/m']);
    for (const port of [a, b]) {
      await waitFor(`ready on ${port} (${e.output().slice(-300)})`, async () => ((await status(`http://127.0.0.1:${port}/-/ready`)) === 200 ? true : undefined), 60_000);
      const res = await fetch(`http://127.0.0.1:${port}/m`);
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/^wowza_up\{server="[^"]+"\} 1$/m);
      expect(await status(`http://127.0.0.1:${port}/metrics`)).toBe(404);
      // The landing page links where the metrics are.
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toContain('href="/m"');
    }
  }, 60_000);

  it('listens on the socket systemd passes (LISTEN_FDS), and refuses to start without one', async () => {
    sim = await startSimulator({ frozen: true });
    // The listening socket systemd would own: made here, handed to the exporter as descriptor 3.
    const socket: Server = createServer();
    await new Promise<void>((resolve) => socket.listen(0, '127.0.0.1', resolve));
    const port = (socket.address() as { port: number }).port;
    const fd = (socket as unknown as { _handle: { fd: number } })._handle.fd;
    // LISTEN_PID names the exporter's own pid: the shell's, which exec keeps.
    const e = serve(['--web.systemd-socket'], { stdio: ['ignore', 'pipe', 'pipe', fd], shell: 'LISTEN_FDS=1 LISTEN_PID=$$' });
    // The parent lets go of its copy: only the exporter accepts on it now.
    socket.close();
    await waitFor(`ready on the inherited socket (${e.output().slice(-300)})`, async () => ((await status(`http://127.0.0.1:${port}/-/ready`)) === 200 ? true : undefined), 60_000);
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain('wowza_up');

    const missing = await runCli(['serve', '--wowza.url', sim.url, '--web.systemd-socket'], { timeoutMs: 20_000 });
    expect(missing.code).toBe(2); // a usage error: systemd's RestartPreventExitStatus=2 does not loop on it
    expect(missing.stderr).toMatch(/--web\.systemd-socket: systemd passed no sockets \(LISTEN_FDS and LISTEN_PID are not set\)/);
  }, 60_000);

  it('--version prints the version, revision, build date, Node version and platform', async () => {
    const { code, stdout } = await runCli(['--version']);
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^wowza-exporter, version \d+\.\d+\.\d+\S* \(branch: \S+, revision: [0-9a-f]{40}(-dirty)?\)$/);
    expect(stdout).toMatch(/^ {2}build date: +\d{8}-\d{2}:\d{2}:\d{2}$/m);
    expect(stdout).toContain(`  node version:     ${process.version}`);
    expect(stdout).toContain(`  platform:         ${process.platform}/${process.arch}`);
  });
});
