import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { runCli } from '../helpers/exporter-process.js';

/**
 * What a new user reads first: each command's --help (a usage line, an example, and only the flags the command
 * reads), and the error of a mistyped log type, through the real CLI.
 */

/** Flags (by prefix) a command ignores, so its help must not offer them. */
const FOREIGN = {
  serveOnly: ['--web.', '--shard', '--video.', '--config.check'],
  polling: ['--poll.', '--collector.'],
  exporterLog: ['--log.'],
  wowza: ['--wowza.', '--config ', '--config.file'],
};

const COMMANDS: Array<{ command: string[]; foreign: string[]; has: string[] }> = [
  { command: [], has: ['--config.check', '--config.file', '--web.listen-address', '--poll.interval', '--log.level'], foreign: [] },
  { command: ['serve'], has: ['--config.check', '--config.file', '--web.listen-address', '--poll.interval', '--log.level', '--collector.stream'], foreign: [] },
  // doctor estimates the cost of polling (poll.*, collectors) but serves nothing and logs nothing of its own.
  { command: ['doctor'], has: ['--wowza.url', '--poll.interval', '--collector.stream', '--json'], foreign: [...FOREIGN.serveOnly, ...FOREIGN.exporterLog] },
  { command: ['logs'], has: ['tail'], foreign: [...FOREIGN.serveOnly, ...FOREIGN.polling, ...FOREIGN.exporterLog] },
  { command: ['logs', 'tail'], has: ['--log-type', '--wowza.url'], foreign: [...FOREIGN.serveOnly, ...FOREIGN.polling, ...FOREIGN.exporterLog] },
  { command: ['webhooks'], has: ['setup', 'status'], foreign: [...FOREIGN.serveOnly, ...FOREIGN.polling, ...FOREIGN.exporterLog] },
  { command: ['webhooks', 'setup'], has: ['--target-url', '--wowza.url'], foreign: [...FOREIGN.serveOnly, ...FOREIGN.polling, ...FOREIGN.exporterLog] },
  { command: ['webhooks', 'status'], has: ['--wowza.url'], foreign: [...FOREIGN.serveOnly, ...FOREIGN.polling, ...FOREIGN.exporterLog] },
  { command: ['schedules'], has: ['list'], foreign: [...FOREIGN.wowza, '--web.', ...FOREIGN.polling] },
  { command: ['schedules', 'list'], has: ['--video.token-file'], foreign: [...FOREIGN.wowza, '--web.', ...FOREIGN.polling] },
  { command: ['schedules', 'get'], has: ['--video.token-file'], foreign: [...FOREIGN.wowza, '--web.', ...FOREIGN.polling] },
  { command: ['schedules', 'update'], has: ['--start-transcoder'], foreign: [...FOREIGN.wowza, '--web.', ...FOREIGN.polling] },
  { command: ['schedules', 'delete'], has: ['--yes'], foreign: [...FOREIGN.wowza, '--web.', ...FOREIGN.polling] },
  { command: ['simulate'], has: ['--port', '--admin-port'], foreign: [...FOREIGN.wowza, '--web.', ...FOREIGN.polling, '--video.'] },
  { command: ['demo'], has: ['--web.listen-address', '--streams'], foreign: [...FOREIGN.wowza, ...FOREIGN.polling, '--video.', '--config.check'] },
];

describe.concurrent('--help of each command', () => {
  for (const { command, has, foreign } of COMMANDS) {
    it(`${['wowza-exporter', ...command].join(' ')} --help: a usage line, an example, and only its own flags`, async () => {
      const r = await runCli([...command, '--help']);
      expect(r.code).toBe(0);
      const help = r.stdout;
      expect(help).toMatch(new RegExp(`^Usage: wowza-exporter ${command.join(' ')}`));
      // One usage line only: a default command's help must not repeat the top-level one.
      expect(help.match(/^Usage:/gm)).toHaveLength(1);
      expect(help).toMatch(/^Examples:\n {2}.*wowza-exporter/m);
      for (const flag of has) expect(help, flag).toContain(flag);
      for (const flag of foreign) expect(help, `${command.join(' ')} --help offers ${flag}, which it ignores`).not.toContain(flag);
    }, 60_000);
  }

  it('a flag a command ignores is refused, not silently dropped', async () => {
    const r = await runCli(['doctor', '--web.listen-address', ':9999']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Unknown arguments?: .*web\.listen-address/);
  }, 60_000);
});

describe('logs tail with a log type the server does not have', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic', frozen: true, logs: { linesPerSecond: 0 } });
  });
  afterAll(async () => {
    await sim?.close();
  });

  for (const follow of [[], ['--follow']]) {
    it(`names the types the server has and exits 2${follow.length ? ', with --follow too (not retrying for ever)' : ''}`, async () => {
      const r = await runCli(['logs', 'tail', '--wowza.url', sim.url, '--wowza.username', sim.username, '--log-type', 'nope', ...follow], { env: { WOWZA_PASSWORD: sim.password } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        'wowza-exporter: --log-type nope: the server has no log type "nope"; its log types: wowzastreamingengine_access (access), wowzastreamingengine_error (error), wowzastreamingengine_stats (stats)',
      );
      // The server's list, not a fixed one: what {S}/logs answers.
      const listed = (await (await fetch(`${sim.url}/v2/servers/_defaultServer_/logs`, { headers: { Accept: 'application/json', Authorization: `Basic ${Buffer.from(`${sim.username}:${sim.password}`).toString('base64')}` } })).json()) as { serverLogType: string[] };
      for (const t of listed.serverLogType) expect(r.stderr).toContain(t);
      expect(r.stdout).toBe('');
    }, 60_000);
  }

  it('a type the server has still tails as before', async () => {
    const r = await runCli(['logs', 'tail', '--wowza.url', sim.url, '--wowza.username', sim.username, '--log-type', 'access', '--start-at', 'beginning', '--format', 'raw'], { env: { WOWZA_PASSWORD: sim.password } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^#Fields: /m);
  }, 60_000);
});
