import { createInterface } from 'node:readline/promises';
import type { Argv, CommandModule } from 'yargs';
import { ConfigError } from '../config/errors.js';
import { escapeControlCharactersButNewlines, stringifyJsonSafely } from '../base/control-characters.js';
import { DEFAULT_VIDEO_URL, VideoClient } from '../video/client.js';
import { VideoError, VideoInputError, VideoUnparsableError, type VideoInputIssue } from '../video/errors.js';
import { validateSchedulePatch, type PatchField, type SchedulePatchInput } from '../video/schedule-patch.js';
import { scheduleDetail, scheduleTable } from '../video/schedule-table.js';
import { unknownValues, type Schedule } from '../video/schedule.js';
import { resolveVideoToken, VIDEO_TOKEN_ENV } from '../config/video-token.js';

/**
 * `wowza-exporter schedules list|get|update|delete`: Wowza Video schedules from the command line. Each
 * action is a function taking its streams and prompt, so tests run it without a terminal or a process.
 * Exit codes: 0 ok, 1 API or runtime failure, 2 usage (the message names the flag).
 */

export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

export interface SchedulesIo {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
  /** True when a person can answer a question (stdin and stderr are terminals). */
  interactive: boolean;
  /** Asks on the terminal; resolves with the answer ('' when the input ends). */
  prompt(question: string): Promise<string>;
  env: Readonly<Record<string, string | undefined>>;
  now(): Date;
}

export interface VideoConnection {
  /** `--video.url` */
  url: string;
  /** `--video.token-file`; without it the token comes from WOWZA_VIDEO_TOKEN. */
  tokenFile?: string;
}

export interface OutputOptions {
  json: boolean;
}

/** `update` flags, as given (unset ones undefined). */
export interface UpdateFlags {
  name?: string;
  actionType?: string;
  startTranscoder?: string;
  stopTranscoder?: string;
  recurrenceData?: string;
  startRepeat?: string;
  endRepeat?: string;
}

const FLAG_OF: Record<PatchField, string> = {
  name: '--name',
  action_type: '--action-type',
  start_transcoder: '--start-transcoder',
  stop_transcoder: '--stop-transcoder',
  recurrence_data: '--recurrence-data',
  start_repeat: '--start-repeat',
  end_repeat: '--end-repeat',
};

function fail(io: SchedulesIo, message: string): void {
  // Messages quote the API's answers: their control characters are shown, not acted on.
  io.stderr.write(`wowza-exporter: ${escapeControlCharactersButNewlines(message)}\n`);
}

function describeInputIssue(issue: VideoInputIssue): string {
  const flag = FLAG_OF[issue.field as PatchField];
  return `${flag ?? issue.field}: ${issue.message}`;
}

/** Runs one action and turns its failure into a message and an exit code. */
async function guarded(io: SchedulesIo, action: () => Promise<number>): Promise<number> {
  try {
    return await action();
  } catch (err) {
    if (err instanceof VideoInputError) {
      for (const issue of err.issues) fail(io, describeInputIssue(issue));
      return EXIT.usage;
    }
    if (err instanceof ConfigError) {
      fail(io, err.message);
      return EXIT.usage;
    }
    if (err instanceof VideoError) {
      fail(io, err.message);
      return EXIT.failure;
    }
    fail(io, `unexpected error: ${(err as Error)?.message ?? String(err)}`);
    return EXIT.failure;
  }
}

function connect(conn: VideoConnection, io: SchedulesIo): VideoClient {
  const token = resolveVideoToken({
    tokenFile: conn.tokenFile,
    env: io.env,
    warn: (msg) => io.stderr.write(`wowza-exporter: warning: --video.token-file: ${msg}\n`),
  });
  return new VideoClient({ url: conn.url, token });
}

function checkId(id: string | undefined): string {
  const trimmed = (id ?? '').trim();
  if (trimmed === '') throw new ConfigError('<id>: the schedule id must not be empty');
  return trimmed;
}

const json = (value: unknown) => `${stringifyJsonSafely(value, 2)}\n`;

/** A note on stderr for each value the API reference does not list (a new state, an unreadable time). */
function noteUnknown(io: SchedulesIo, s: Schedule): void {
  for (const u of unknownValues(s)) {
    io.stderr.write(`wowza-exporter: note: ${u.field} ${JSON.stringify(u.value.replace(/\p{C}/gu, '?').slice(0, 100))} is not a value the API reference lists; shown as it came\n`);
  }
}

export function listSchedulesCommand(conn: VideoConnection, opts: OutputOptions, io: SchedulesIo): Promise<number> {
  return guarded(io, async () => {
    const { schedules, truncated } = await connect(conn, io).listSchedulePages();
    if (opts.json) {
      io.stdout.write(json(schedules));
    } else {
      io.stdout.write(scheduleTable(schedules));
      // The list gives limited details per schedule (docs/wowza-api-notes.md): the rest is one request per schedule.
      if (schedules.length > 0) io.stderr.write('The list shows what GET /schedules gives; action, recurrence, times and the next start/stop: wowza-exporter schedules get <id>\n');
    }
    if (truncated) io.stderr.write(`wowza-exporter: warning: the list looks truncated (${truncated}); there may be more schedules\n`);
    return EXIT.ok;
  });
}

export function getScheduleCommand(conn: VideoConnection, id: string, opts: OutputOptions, io: SchedulesIo): Promise<number> {
  return guarded(io, async () => {
    const schedule = await connect(conn, io).getSchedule(checkId(id));
    io.stdout.write(opts.json ? json(schedule) : scheduleDetail(schedule, io.now()));
    noteUnknown(io, schedule);
    return EXIT.ok;
  });
}

/** Validates every flag before anything is sent; `state` cannot be changed here (the API refuses it). */
export function updateScheduleCommand(conn: VideoConnection, id: string, flags: UpdateFlags, opts: OutputOptions, io: SchedulesIo): Promise<number> {
  return guarded(io, async () => {
    const scheduleId = checkId(id);
    const patch: SchedulePatchInput = {
      name: flags.name,
      action_type: flags.actionType as SchedulePatchInput['action_type'],
      start_transcoder: flags.startTranscoder,
      stop_transcoder: flags.stopTranscoder,
      recurrence_data: flags.recurrenceData,
      start_repeat: flags.startRepeat,
      end_repeat: flags.endRepeat,
    };
    if (Object.values(patch).every((v) => v === undefined)) {
      throw new ConfigError(`nothing to update: give at least one of ${Object.values(FLAG_OF).join(', ')}`);
    }
    const body = validateSchedulePatch(patch);
    let updated: Schedule;
    try {
      updated = await connect(conn, io).updateSchedule(scheduleId, body);
    } catch (err) {
      // A 2xx answer means the PATCH was applied (reference, section 4: "200, body {schedule}"); an answer that
      // cannot be read is worth a warning, not exit 1 (a script would think the change had not been made).
      if (!(err instanceof VideoUnparsableError) || err.status === undefined || err.status < 200 || err.status > 299) throw err;
      io.stdout.write(opts.json ? json({ id: scheduleId, updated: true }) : `Updated schedule ${scheduleId}.\n`);
      io.stderr.write(`wowza-exporter: warning: the update was applied (HTTP ${err.status}) but its answer could not be read (${err.message}); see it with: wowza-exporter schedules get ${scheduleId}\n`);
      return EXIT.ok;
    }
    io.stdout.write(opts.json ? json(updated) : `Updated schedule ${scheduleId}.\n${scheduleDetail(updated, io.now())}`);
    // The PATCH was applied: a value the reference does not list in the answer is worth a note, not a failure.
    noteUnknown(io, updated);
    return EXIT.ok;
  });
}

/** Deletes after a yes on the terminal, or with `--yes`; without a terminal and without `--yes` it refuses. */
export function deleteScheduleCommand(conn: VideoConnection, id: string, opts: OutputOptions & { yes: boolean }, io: SchedulesIo): Promise<number> {
  return guarded(io, async () => {
    const scheduleId = checkId(id);
    if (!opts.yes && !io.interactive) {
      throw new ConfigError(`refusing to delete schedule ${scheduleId} without confirmation: not running on a terminal; pass --yes to delete it`);
    }
    const client = connect(conn, io);
    if (!opts.yes) {
      const s = await client.getSchedule(scheduleId);
      const what = `schedule ${scheduleId}${s.name ? ` "${s.name.replace(/\p{C}/gu, '?')}"` : ''} (${s.state}, transcoder ${s.transcoder_id ?? '-'})`;
      const answer = await io.prompt(`Delete ${what}? This cannot be undone. [y/N] `);
      if (!/^\s*y(es)?\s*$/i.test(answer)) {
        fail(io, `schedule ${scheduleId} was not deleted`);
        return EXIT.failure;
      }
    }
    await client.deleteSchedule(scheduleId);
    io.stdout.write(opts.json ? json({ id: scheduleId, deleted: true }) : `Deleted schedule ${scheduleId}.\n`);
    return EXIT.ok;
  });
}

async function askOnTerminal(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await new Promise<string>((resolve) => {
      // Ctrl-C or Ctrl-D answers "no" rather than leaving the question hanging.
      rl.once('SIGINT', () => rl.close());
      rl.once('close', () => resolve(''));
      rl.question(question).then(resolve, () => resolve(''));
    });
  } finally {
    rl.close();
  }
}

export function processIo(): SchedulesIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    interactive: process.stdin.isTTY === true && process.stderr.isTTY === true,
    prompt: askOnTerminal,
    env: process.env,
    now: () => new Date(),
  };
}

function withVideoFlags<T>(y: Argv<T>) {
  return y
    .option('video.url', { type: 'string', default: DEFAULT_VIDEO_URL, describe: 'Wowza Video API base URL', group: 'Wowza Video:' })
    .option('video.token-file', { type: 'string', describe: `file with the API access token (or env ${VIDEO_TOKEN_ENV})`, group: 'Wowza Video:' })
    .option('json', { type: 'boolean', default: false, describe: 'print JSON instead of text' });
}

function withId<T>(y: Argv<T>) {
  return withVideoFlags(y).positional('id', { type: 'string', describe: 'schedule id', demandOption: true });
}

type Args = Record<string, unknown>;
const connection = (a: Args): VideoConnection => ({
  url: String(a['video.url'] ?? DEFAULT_VIDEO_URL),
  tokenFile: a['video.token-file'] === undefined ? undefined : String(a['video.token-file']),
});
const output = (a: Args): OutputOptions => ({ json: a.json === true });
const optional = (a: Args, k: string) => (a[k] === undefined ? undefined : String(a[k]));

/** The yargs command; `io` and `exit` are replaceable so tests can drive it through argument parsing. */
export function createSchedulesCommand(given?: SchedulesIo, exit: (code: number) => void = (code) => void (process.exitCode = code)): CommandModule {
  // Built on first use: touching process.stdin at import time would open it in every command.
  let made: SchedulesIo | undefined = given;
  const io = (): SchedulesIo => (made ??= processIo());
  const list: CommandModule = {
    command: 'list',
    describe: 'list schedules as the list gives them (get <id> for times and the next start/stop)',
    builder: (y) =>
      withVideoFlags(y)
        .usage('Usage: $0 schedules list [options]\n\nList schedules as the list gives them (get <id> for times and the next start/stop).')
        .example(`${VIDEO_TOKEN_ENV}=... $0 schedules list --json`, 'every schedule of the account, as JSON'),
    handler: async (a) => exit(await listSchedulesCommand(connection(a), output(a), io())),
  };
  const get: CommandModule = {
    command: 'get <id>',
    describe: 'show one schedule',
    builder: (y) => withId(y).usage('Usage: $0 schedules get <id> [options]\n\nShow one schedule.').example('$0 schedules get 4f3d2c1b --video.token-file /etc/wowza-exporter/secrets/video-token', 'one schedule, with its next start and stop'),
    handler: async (a) => exit(await getScheduleCommand(connection(a), String(a.id), output(a), io())),
  };
  const update: CommandModule = {
    command: 'update <id>',
    describe: 'change fields of a schedule (its state cannot be changed this way)',
    builder: (y) =>
      withId(y)
        .option('name', { type: 'string', describe: 'new name (at most 255 characters)', group: 'Fields:' })
        .option('action-type', { type: 'string', describe: 'start, stop or start_stop', group: 'Fields:' })
        .option('start-transcoder', { type: 'string', describe: 'UTC start, "YYYY-MM-DD HH:MM:SS" or ISO 8601 (2025-06-01T18:00:00Z)', group: 'Fields:' })
        .option('stop-transcoder', { type: 'string', describe: 'UTC stop, same formats', group: 'Fields:' })
        .option('recurrence-data', { type: 'string', describe: 'weekdays for recurring schedules, e.g. monday,wednesday', group: 'Fields:' })
        .option('start-repeat', { type: 'string', describe: 'first day of a recurring schedule, YYYY-MM-DD', group: 'Fields:' })
        .option('end-repeat', { type: 'string', describe: 'last day of a recurring schedule, YYYY-MM-DD', group: 'Fields:' })
        .usage('Usage: $0 schedules update <id> [fields] [options]\n\nChange fields of a schedule (its state cannot be changed this way).')
        .example("$0 schedules update 4f3d2c1b --start-transcoder '2025-06-01 18:00:00' --stop-transcoder '2025-06-01 20:00:00'", 'move a one-time schedule'),
    handler: async (a) =>
      exit(
        await updateScheduleCommand(
          connection(a),
          String(a.id),
          {
            name: optional(a, 'name'),
            actionType: optional(a, 'action-type'),
            startTranscoder: optional(a, 'start-transcoder'),
            stopTranscoder: optional(a, 'stop-transcoder'),
            recurrenceData: optional(a, 'recurrence-data'),
            startRepeat: optional(a, 'start-repeat'),
            endRepeat: optional(a, 'end-repeat'),
          },
          output(a),
          io(),
        ),
      ),
  };
  const del: CommandModule = {
    command: 'delete <id>',
    describe: 'delete a schedule (asks first; --yes to skip the question)',
    builder: (y) =>
      withId(y)
        .option('yes', { type: 'boolean', default: false, describe: 'delete without asking' })
        .usage('Usage: $0 schedules delete <id> [options]\n\nDelete a schedule (asks first; --yes to skip the question).')
        .example('$0 schedules delete 4f3d2c1b --yes', 'delete without asking'),
    handler: async (a) => exit(await deleteScheduleCommand(connection(a), String(a.id), { ...output(a), yes: a.yes === true }, io())),
  };
  return {
    command: 'schedules <command>',
    describe: 'list and change Wowza Video (hosted) transcoder schedules',
    builder: (y) =>
      y
        .command(list)
        .command(get)
        .command(update)
        .command(del)
        .demandCommand(1)
        .usage('Usage: $0 schedules <command> [options]\n\nList and change Wowza Video (hosted) transcoder schedules.')
        .example(`${VIDEO_TOKEN_ENV}=... $0 schedules list`, 'the schedules of a Wowza Video account'),
    handler: () => {},
  };
}

export const schedulesCommand: CommandModule = createSchedulesCommand();
