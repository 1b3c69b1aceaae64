import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { CLI, startExporterProcess } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 41: a server's log line (or error text) holding terminal escapes reached the operator's terminal as they
 * were: an OSC 52 clipboard write, a window title, a clear-screen. The JSON outputs let C1 controls and bidi
 * overrides through. Every output a terminal shows now escapes them; a pipe still gets raw lines byte-exact.
 */

const ERROR_LOG = 'wowzastreamingengine_error';
const OSC52 = '\x1b]52;c;aGFja2Vk\x07';
const HOSTILE = `copied ${OSC52} titled \x1b]0;pwned\x07 cleared \x1b[2J csi \u009b2J reversed \u202eevil\u202c`;
/** Any byte a terminal acts on: C0 but tab, CR and LF (a pty ends lines with CRLF), DEL, C1, bidi. */
// eslint-disable-next-line no-control-regex
const ACTED_ON = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Runs a shell command line, returns its output and exit code. */
function sh(line: string, env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn('bash', ['-c', line], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('error', reject);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    p.stdin.end();
  });
}

/** The CLI under a pseudo-terminal (util-linux `script`): stdout.isTTY is true, as in an operator's shell. */
const onTerminal = (args: string[], env: NodeJS.ProcessEnv) =>
  sh(`script -qec ${quote([process.execPath, CLI, ...args].map(quote).join(' '))} /dev/null`, env);

describe('terminal escapes from a hostile server', () => {
  let sim: Simulator;
  let conn: string[];
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic' });
    sim.logs.append(ERROR_LOG, { 'x-severity': 'WARN', 'x-category': 'server', 'x-event': 'comment', 'x-comment': HOSTILE });
    conn = ['--wowza.url', sim.url, '--wowza.username', sim.username, '--wowza.auth', 'basic'];
    env = { WOWZA_PASSWORD: sim.password };
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('logs tail --format raw on a terminal shows the OSC 52 sequence escaped, never sends it', async () => {
    const { code, stdout } = await onTerminal(['logs', 'tail', '--log-type', 'error', '--format', 'raw', ...conn], env);
    expect(code).toBe(0);
    const line = stdout.split('\r\n').find((l) => l.includes('copied'));
    expect(line, stdout.slice(-2000)).toBeDefined();
    expect(line).toContain('copied \\x1b]52;c;aGFja2Vk\\x07 titled \\x1b]0;pwned\\x07 cleared \\x1b[2J csi \\x9b2J reversed \\u202eevil\\u202c');
    expect(stdout).not.toMatch(ACTED_ON);
    // The rest of the line is as the server holds it: tabs stay.
    expect(line).toMatch(/^WARN\tserver\tcomment\t/);
  }, 90_000);

  it('logs tail --format raw into a pipe stays byte-exact', async () => {
    const { code, stdout } = await sh([process.execPath, CLI, 'logs', 'tail', '--log-type', 'error', '--format', 'raw', ...conn].map(quote).join(' ') + ' | cat', env);
    expect(code).toBe(0);
    expect(stdout).toContain(HOSTILE);
  }, 90_000);

  it('logs tail --format json is valid JSON with C1 and bidi escaped as \\uXXXX, on a terminal or not', async () => {
    const { code, stdout } = await onTerminal(['logs', 'tail', '--log-type', 'error', '--format', 'json', ...conn], env);
    expect(code).toBe(0);
    expect(stdout).not.toMatch(ACTED_ON);
    const line = stdout.split('\r\n').find((l) => l.includes('copied'))!;
    expect(line).toContain('csi \\u009b2J reversed \\u202eevil\\u202c');
    expect((JSON.parse(line) as Record<string, unknown>)['x-comment']).toBe(HOSTILE);
  }, 90_000);

  it('logs tail --follow | head ends quietly: no EPIPE stack trace, exit 0', async () => {
    // New lines keep coming, so the tail keeps writing after head has gone.
    const writer = setInterval(() => sim.logs.generate('wowzastreamingengine_access', 5), 100);
    try {
      const cli = [process.execPath, CLI, 'logs', 'tail', '--follow', '--log-type', 'access', '--format', 'raw', ...conn].map(quote).join(' ');
      const { stdout, stderr } = await sh(`${cli} | head -n 3; echo "tail exited \${PIPESTATUS[0]}"`, env);
      expect(stdout.split('\n').filter((l) => l !== '')).toHaveLength(4);
      expect(stdout).toContain('tail exited 0');
      expect(stderr).not.toMatch(/EPIPE|Unhandled 'error' event|at .*\.js:\d+/);
    } finally {
      clearInterval(writer);
    }
  }, 90_000);

  it('a server error quoted by doctor on a terminal is escaped', async () => {
    const clear = sim.faults.inject('/v2/servers/{server}/logs', { type: 'status', status: 500, message: HOSTILE });
    try {
      const { stdout } = await onTerminal(['doctor', ...conn], env);
      expect(stdout).toContain('copied \\x1b]52;c;aGFja2Vk\\x07');
      expect(stdout).not.toMatch(ACTED_ON);
    } finally {
      clear();
    }
  }, 90_000);

  it('the exporter\'s own log lines (json and logfmt) carry a server\'s error text escaped', async () => {
    const clear = sim.faults.inject('/v2/servers/{server}/status', { type: 'status', status: 500, message: HOSTILE });
    try {
      for (const format of ['json', 'logfmt']) {
        const exporter = await startExporterProcess([...conn, '--log.format', format], env, { waitReady: false });
        try {
          const line = await waitFor(`a ${format} log line quoting the server's error`, () => exporter.output().split('\n').find((l) => l.includes('copied')), 60_000);
          expect(exporter.output()).not.toMatch(ACTED_ON);
          expect(line).toContain('reversed \\u202eevil\\u202c');
          // Still JSON, and it reads back as exactly what the server sent.
          if (format === 'json') expect(Object.values(JSON.parse(line) as Record<string, unknown>).some((v) => typeof v === 'string' && v.includes(HOSTILE))).toBe(true);
          else expect(line).toContain('copied \\u001b]52;c;aGFja2Vk\\u0007');
        } finally {
          await exporter.stop();
        }
      }
    } finally {
      clear();
    }
  }, 150_000);
});
