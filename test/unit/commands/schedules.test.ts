import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import yargs from 'yargs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createSchedulesCommand,
  deleteScheduleCommand,
  listSchedulesCommand,
  updateScheduleCommand,
  type SchedulesIo,
  type VideoConnection,
} from '../../../src/commands/schedules.js';
import { startVideoSimulator, videoSchedule, type VideoSimulator } from '@wowza-exporter/simulator/video';

const ORIGIN = 'https://api.video.test';
const URL_ = `${ORIGIN}/api/v1.11`;
const TOKEN = 'cli-T0KEN.value-for-tests';
// Wednesday.
const NOW = new Date('2025-06-04T12:00:00Z');

let dir: string;
let tokenFile: string;
let conn: VideoConnection;

const SCHEDULES = [
  {
    id: 'abc123',
    name: 'Morning show',
    state: 'enabled',
    transcoder_id: 'txA',
    action_type: 'start_stop',
    recurrence_type: 'recur',
    recurrence_data: 'monday,friday',
    start_transcoder: '2025-01-06T09:00:00.000Z',
    stop_transcoder: '2025-01-06T10:00:00.000Z',
    start_repeat: '2025-01-06T00:00:00.000Z',
    end_repeat: '2025-12-31T00:00:00.000Z',
  },
  {
    id: 'def456',
    name: 'Bad\u001b[31mname',
    state: 'disabled',
    transcoder_id: 'txB',
    action_type: 'stop',
    recurrence_type: 'once',
    stop_transcoder: '2025-07-01T00:00:00.000Z',
  },
];

interface Captured {
  io: SchedulesIo;
  out(): string;
  err(): string;
  prompts: string[];
}

function fakeIo(over: Partial<SchedulesIo> & { answer?: string } = {}): Captured {
  let out = '';
  let err = '';
  const prompts: string[] = [];
  const io: SchedulesIo = {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    interactive: false,
    prompt: async (q) => {
      prompts.push(q);
      return over.answer ?? '';
    },
    env: {},
    now: () => NOW,
    ...over,
  };
  return { io, out: () => out, err: () => err, prompts };
}

class UsageFailure extends Error {}

/**
 * Runs the command through yargs as src/cli.ts does (strict, no dot-notation; a usage failure ends the run
 * with exit 2 before any handler), returning the exit code.
 */
async function cli(args: string[], io: SchedulesIo): Promise<{ code: number | undefined; usage: string }> {
  let code: number | undefined;
  try {
    await yargs(args)
      .parserConfiguration({ 'dot-notation': false })
      .command(createSchedulesCommand(io, (c) => (code = c)))
      .strict()
      .exitProcess(false)
      .fail((msg, err) => {
        throw err ?? new UsageFailure(msg);
      })
      .parseAsync();
  } catch (err) {
    if (err instanceof UsageFailure) return { code: 2, usage: err.message };
    throw err;
  }
  return { code, usage: '' };
}

const api = () => nock(ORIGIN, { reqheaders: { authorization: `Bearer ${TOKEN}` } });

beforeAll(() => {
  nock.disableNetConnect();
  dir = mkdtempSync(join(tmpdir(), 'video-cli-'));
  tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  chmodSync(tokenFile, 0o600);
  conn = { url: URL_, tokenFile };
});
afterEach(() => nock.cleanAll());
afterAll(() => {
  nock.enableNetConnect();
  rmSync(dir, { recursive: true, force: true });
});

describe('schedules list', () => {
  it('prints what the list gives (limited details), control characters neutralised, and says how to see the rest', async () => {
    const summaries = SCHEDULES.map(({ id, name, state, transcoder_id }) => ({ id, name, state, transcoder_id, updated_at: '2025-06-01T00:00:00Z' }));
    api().get('/api/v1.11/schedules').query(true).reply(200, { schedules: summaries });
    const c = fakeIo();
    expect(await listSchedulesCommand(conn, { json: false }, c.io)).toBe(0);
    expect(c.out()).toBe(
      [
        'ID      NAME          STATE     TRANSCODER  UPDATED',
        'abc123  Morning show  enabled   txA         2025-06-01T00:00:00Z',
        'def456  Bad?[31mname  disabled  txB         2025-06-01T00:00:00Z',
        '',
      ].join('\n'),
    );
    expect(c.err()).toBe('The list shows what GET /schedules gives; action, recurrence, times and the next start/stop: wowza-exporter schedules get <id>\n');
  });

  it('--json prints the schedules as the API returned them', async () => {
    api().get('/api/v1.11/schedules').query(true).reply(200, { schedules: SCHEDULES });
    const c = fakeIo();
    expect((await cli(['schedules', 'list', '--json', '--video.url', URL_, '--video.token-file', tokenFile], c.io)).code).toBe(0);
    expect(JSON.parse(c.out())).toEqual(SCHEDULES);
  });

  it('takes the token from WOWZA_VIDEO_TOKEN', async () => {
    api().get('/api/v1.11/schedules').query(true).reply(200, { schedules: [] });
    const c = fakeIo({ env: { WOWZA_VIDEO_TOKEN: TOKEN } });
    expect(await listSchedulesCommand({ url: URL_ }, { json: false }, c.io)).toBe(0);
    expect(c.out()).toBe('No schedules.\n');
  });

  it('without a token: exit 2 saying where to put one', async () => {
    const c = fakeIo();
    expect(await listSchedulesCommand({ url: URL_ }, { json: false }, c.io)).toBe(2);
    expect(c.err()).toBe('wowza-exporter: no Wowza Video API token: pass --video.token-file <file> or set WOWZA_VIDEO_TOKEN\n');
  });

  it('an API failure: exit 1 with the API message, and no token anywhere', async () => {
    api()
      .get('/api/v1.11/schedules')
      .query(true)
      .reply(401, { meta: { status: 401, code: 'ERR-401-InvalidToken', title: 'Invalid Token Error', message: `Bad token ${TOKEN}`, description: '', links: [] } });
    const c = fakeIo();
    expect(await listSchedulesCommand(conn, { json: false }, c.io)).toBe(1);
    expect(c.err()).toMatch(/^wowza-exporter: GET \/schedules: HTTP 401 ERR-401-InvalidToken \(Invalid Token Error\): Bad token \[REDACTED\]; the API token was refused/);
    expect(c.out() + c.err()).not.toContain(TOKEN);
  });
});

describe('schedules get', () => {
  it('prints one schedule', async () => {
    api().get('/api/v1.11/schedules/abc123').reply(200, { schedule: SCHEDULES[0] });
    const c = fakeIo();
    expect((await cli(['schedules', 'get', 'abc123', '--video.url', URL_, '--video.token-file', tokenFile], c.io)).code).toBe(0);
    expect(c.out()).toContain('name              Morning show\n');
    expect(c.out()).toContain('next_start        2025-06-06 09:00:00Z\n');
  });
});

describe('schedules update', () => {
  it('sends only the given fields, normalised, and prints the result', async () => {
    let sent: unknown;
    api()
      .patch('/api/v1.11/schedules/abc123', (b) => ((sent = b), true))
      .reply(200, { schedule: { ...SCHEDULES[0], name: 'Renamed' } });
    const c = fakeIo();
    const args = ['schedules', 'update', 'abc123', '--name', 'Renamed', '--start-transcoder', '2025-07-01T08:00:00+02:00', '--recurrence-data', 'Tuesday'];
    expect((await cli([...args, '--video.url', URL_, '--video.token-file', tokenFile], c.io)).code).toBe(0);
    expect(sent).toEqual({ schedule: { name: 'Renamed', start_transcoder: '2025-07-01 06:00:00', recurrence_data: 'tuesday' } });
    expect(c.out()).toMatch(/^Updated schedule abc123\.\nid {16}abc123\nname {14}Renamed\n/);
  });

  it('exits 0 when the PATCH was applied and the answer holds a value the reference does not list, with a note', async () => {
    api()
      .patch('/api/v1.11/schedules/abc123')
      .reply(200, { schedule: { ...SCHEDULES[0], name: 'Renamed', state: 'paused', action_type: 'restart' } });
    const c = fakeIo();
    expect(await updateScheduleCommand(conn, 'abc123', { name: 'Renamed' }, { json: false }, c.io)).toBe(0);
    expect(c.out()).toMatch(/^Updated schedule abc123\./);
    expect(c.out()).toMatch(/state {13}paused/);
    expect(c.err()).toContain('note: state "paused" is not a value the API reference lists');
    expect(c.err()).toContain('note: action_type "restart" is not a value the API reference lists');
  });

  it('exits 0 when the PATCH was applied (2xx) but the answer cannot be read, with a warning saying how to look', async () => {
    api().patch('/api/v1.11/schedules/abc123').reply(200, { id: 'abc123', name: 'Renamed' });
    const c = fakeIo();
    expect(await updateScheduleCommand(conn, 'abc123', { name: 'Renamed' }, { json: false }, c.io)).toBe(0);
    expect(c.out()).toBe('Updated schedule abc123.\n');
    expect(c.err()).toMatch(/^wowza-exporter: warning: the update was applied \(HTTP 200\) but its answer could not be read \(PATCH \/schedules\/abc123: unexpected response: schedule: .*\); see it with: wowza-exporter schedules get abc123\n$/);
    // Not a 2xx: still a failure.
    api().patch('/api/v1.11/schedules/abc123').reply(500, '<html>oops</html>');
    expect(await updateScheduleCommand(conn, 'abc123', { name: 'Renamed' }, { json: false }, fakeIo().io)).toBe(1);
  });

  const invalid: Array<[string, string[], string]> = [
    ['a bad action type', ['--action-type', 'restart'], '--action-type: expected one of start, stop, start_stop'],
    ['an impossible date', ['--start-transcoder', '2025-02-30 10:00:00'], '--start-transcoder: expected a UTC time'],
    ['a time without zone in ISO form', ['--stop-transcoder', '2025-07-01T10:00:00'], '--stop-transcoder: expected a UTC time'],
    ['a long name', ['--name', 'n'.repeat(256)], '--name: must be at most 255 characters'],
    ['an empty name', ['--name', ''], '--name: must not be empty'],
    ['an unknown weekday', ['--recurrence-data', 'monday,funday'], '--recurrence-data: expected comma-separated weekdays'],
    ['a date in the wrong format', ['--end-repeat', '31/12/2025'], '--end-repeat: expected a date as YYYY-MM-DD'],
    ['no fields at all', [], 'nothing to update: give at least one of --name, --action-type'],
  ];
  for (const [what, flags, message] of invalid) {
    it(`${what}: exit 2 naming the flag, nothing sent`, async () => {
      const scope = api().patch('/api/v1.11/schedules/abc123').reply(200, { schedule: SCHEDULES[0] });
      const c = fakeIo();
      expect((await cli(['schedules', 'update', 'abc123', ...flags, '--video.url', URL_, '--video.token-file', tokenFile], c.io)).code).toBe(2);
      expect(c.err()).toContain(message);
      expect(c.out()).toBe('');
      expect(scope.isDone()).toBe(false);
    });
  }

  it('validates the flags before looking for a token', async () => {
    const c = fakeIo();
    expect(await updateScheduleCommand({ url: URL_ }, 'abc123', { actionType: 'go' }, { json: false }, c.io)).toBe(2);
    expect(c.err()).toContain('--action-type');
    expect(c.err()).not.toContain('token');
  });

  it('has no way to send state: --state is an unknown argument (exit 2)', async () => {
    const scope = api().patch('/api/v1.11/schedules/abc123').reply(200, { schedule: SCHEDULES[0] });
    const c = fakeIo();
    const result = await cli(['schedules', 'update', 'abc123', '--state', 'disabled', '--name', 'x', '--video.token-file', tokenFile], c.io);
    expect(result.code).toBe(2);
    expect(result.usage).toMatch(/Unknown argument: state/);
    expect(scope.isDone()).toBe(false);
  });
});

describe('schedules delete', () => {
  it('refuses without --yes when not on a terminal (exit 2), sending nothing', async () => {
    const scope = api().delete('/api/v1.11/schedules/abc123').reply(204);
    const c = fakeIo({ interactive: false });
    expect((await cli(['schedules', 'delete', 'abc123', '--video.url', URL_, '--video.token-file', tokenFile], c.io)).code).toBe(2);
    expect(c.err()).toBe('wowza-exporter: refusing to delete schedule abc123 without confirmation: not running on a terminal; pass --yes to delete it\n');
    expect(c.prompts).toEqual([]);
    expect(scope.isDone()).toBe(false);
  });

  it('deletes with --yes', async () => {
    const scope = api().delete('/api/v1.11/schedules/abc123').reply(204);
    const c = fakeIo();
    expect((await cli(['schedules', 'delete', 'abc123', '--yes', '--video.url', URL_, '--video.token-file', tokenFile], c.io)).code).toBe(0);
    expect(c.out()).toBe('Deleted schedule abc123.\n');
    expect(scope.isDone()).toBe(true);
  });

  it('on a terminal, asks naming the schedule and deletes on yes', async () => {
    const scope = api().get('/api/v1.11/schedules/abc123').reply(200, { schedule: SCHEDULES[0] }).delete('/api/v1.11/schedules/abc123').reply(204);
    const c = fakeIo({ interactive: true, answer: 'y' });
    expect(await deleteScheduleCommand(conn, 'abc123', { yes: false, json: true }, c.io)).toBe(0);
    expect(c.prompts).toEqual(['Delete schedule abc123 "Morning show" (enabled, transcoder txA)? This cannot be undone. [y/N] ']);
    expect(JSON.parse(c.out())).toEqual({ id: 'abc123', deleted: true });
    expect(scope.isDone()).toBe(true);
  });

  it('on a terminal, anything but yes keeps the schedule (exit 1)', async () => {
    const scope = api().get('/api/v1.11/schedules/abc123').reply(200, { schedule: SCHEDULES[0] }).delete('/api/v1.11/schedules/abc123').reply(204);
    const c = fakeIo({ interactive: true, answer: 'no' });
    expect(await deleteScheduleCommand(conn, 'abc123', { yes: false, json: false }, c.io)).toBe(1);
    expect(c.err()).toBe('wowza-exporter: schedule abc123 was not deleted\n');
    expect(scope.pendingMocks()).toEqual([`DELETE ${ORIGIN}:443/api/v1.11/schedules/abc123`]);
  });

  it('a schedule already gone: exit 1 with the API message', async () => {
    api()
      .delete('/api/v1.11/schedules/gone')
      .reply(410, { meta: { status: 410, code: 'ERR-410-RecordDeleted', title: 'Record Deleted Error', message: 'The requested resource has been deleted.', description: '', links: [] } });
    const c = fakeIo();
    expect(await deleteScheduleCommand(conn, 'gone', { yes: true, json: false }, c.io)).toBe(1);
    expect(c.err()).toContain('DELETE /schedules/gone: HTTP 410 ERR-410-RecordDeleted');
  });
});

describe('against the Wowza Video simulator (a list of summaries, a PATCH answer with values the reference does not list)', () => {
  let video: VideoSimulator;
  let simConn: VideoConnection;
  beforeAll(async () => {
    nock.enableNetConnect('127.0.0.1');
    video = await startVideoSimulator({
      token: TOKEN,
      schedules: [videoSchedule('s1', { name: 'Evening', updated_at: '2025-06-01T00:00:00Z' })],
      unknownValues: [{ id: 's1', field: 'action_type', value: 'restart' }],
    });
    simConn = { url: video.url, tokenFile };
  });
  afterAll(async () => {
    await video.close();
    nock.disableNetConnect();
  });

  it('list shows the summary columns and the hint how to see details', async () => {
    const c = fakeIo();
    expect(await listSchedulesCommand(simConn, { json: false }, c.io)).toBe(0);
    expect(c.out()).toBe(['ID  NAME     STATE    TRANSCODER  UPDATED', 's1  Evening  enabled  tr_s1       2025-06-01T00:00:00Z', ''].join('\n'));
    expect(c.err()).toContain('wowza-exporter schedules get <id>');
  });

  it('update exits 0: the PATCH was applied, and the unknown action_type is a note', async () => {
    const c = fakeIo();
    expect((await cli(['schedules', 'update', 's1', '--name', 'Late show', '--video.url', video.url, '--video.token-file', tokenFile], c.io)).code).toBe(0);
    expect(video.schedules.get('s1')!.name).toBe('Late show');
    expect(c.out()).toMatch(/^Updated schedule s1\.\n/);
    expect(c.out()).toMatch(/action_type {7}restart/);
    expect(c.err()).toBe('wowza-exporter: note: action_type "restart" is not a value the API reference lists; shown as it came\n');
  });
});
