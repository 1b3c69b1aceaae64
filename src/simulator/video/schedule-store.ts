/**
 * The schedules of a simulated Wowza Video account, answered as the reference shows them
 * (../shared/reference/wowza-video-schedules-v1.11.md, section 2): the schedule object with every field of its
 * table, times in ISO 8601 with `Z`, repeat days as ISO 8601 date-times. The list is not in the reference; it
 * gives limited details per item, as the service's other lists do (shared/wowza-api.md, "Wowza Video API").
 *
 * Written from those documents, not from src/video/: this is what the client is tested against.
 */

/** The schedule object of section 2, as responses carry it. */
export interface VideoSchedule {
  id: string;
  name: string;
  state: string;
  transcoder_id: string;
  transcoder_name: string;
  action_type: string;
  recurrence_type: string;
  recurrence_data: string | null;
  start_transcoder: string | null;
  stop_transcoder: string | null;
  start_repeat: string | null;
  end_repeat: string | null;
  created_at: string;
  updated_at: string;
}

/** The fields of a list item: "limited details". */
export const SUMMARY_FIELDS = ['id', 'name', 'state', 'transcoder_id', 'created_at', 'updated_at'] as const;
export type VideoScheduleSummary = Pick<VideoSchedule, (typeof SUMMARY_FIELDS)[number]>;

/** Section 4, PATCH: the optional members of `schedule`. `state` is not among them. */
const PATCHABLE = ['action_type', 'name', 'end_repeat', 'recurrence_data', 'start_repeat', 'start_transcoder', 'stop_transcoder'] as const;
const ACTION_TYPES = ['start', 'stop', 'start_stop'];
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
/** Requests: "format YYYY-MM-DD HH:MM:SS on a 24-hour clock in UTC"; repeat days "YYYY-MM-DD". */
const REQUEST_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const REQUEST_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A problem with a PATCH body: 422 with the error envelope (section 4 documents 422 for PATCH). */
export class PatchRefused extends Error {}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function requestTime(field: string, v: unknown): string {
  const m = typeof v === 'string' ? REQUEST_TIME.exec(v) : null;
  const ms = m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : NaN;
  if (!m || Number.isNaN(ms) || iso(ms).slice(0, 19).replace('T', ' ') !== v) throw new PatchRefused(`${field} must be YYYY-MM-DD HH:MM:SS (UTC), got ${JSON.stringify(v)}`);
  return iso(ms);
}

function requestDate(field: string, v: unknown): string {
  const m = typeof v === 'string' ? REQUEST_DATE.exec(v) : null;
  const ms = m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!) : NaN;
  if (!m || Number.isNaN(ms) || iso(ms).slice(0, 10) !== v) throw new PatchRefused(`${field} must be YYYY-MM-DD, got ${JSON.stringify(v)}`);
  return iso(ms);
}

export class ScheduleStore {
  private readonly schedules = new Map<string, VideoSchedule>();
  private clock = Date.now();

  constructor(initial: readonly VideoSchedule[] = []) {
    for (const s of initial) this.put(s);
  }

  /** Adds or replaces a schedule as it is (tests use this to plant values the reference does not list). */
  put(s: VideoSchedule): void {
    this.schedules.set(s.id, { ...s });
  }

  get(id: string): VideoSchedule | undefined {
    const s = this.schedules.get(id);
    return s && { ...s };
  }

  all(): VideoSchedule[] {
    return [...this.schedules.values()].map((s) => ({ ...s }));
  }

  summaries(): VideoScheduleSummary[] {
    return [...this.schedules.values()].map((s) => Object.fromEntries(SUMMARY_FIELDS.map((f) => [f, s[f]])) as VideoScheduleSummary);
  }

  delete(id: string): boolean {
    return this.schedules.delete(id);
  }

  /** Applies a PATCH body (`{schedule: {...}}`); throws PatchRefused for what section 4 does not accept. */
  patch(id: string, body: unknown): VideoSchedule {
    const s = this.schedules.get(id);
    if (!s) throw new Error(`no schedule ${id}`);
    const inner = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).schedule : undefined;
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) throw new PatchRefused('the body must hold the object schedule');
    const changes = inner as Record<string, unknown>;
    for (const key of Object.keys(changes)) {
      if (key === 'state') throw new PatchRefused('state cannot be changed by an update');
      if (!(PATCHABLE as readonly string[]).includes(key)) throw new PatchRefused(`${key} is not a field an update accepts`);
    }
    const next = { ...s };
    if ('name' in changes) {
      if (typeof changes.name !== 'string' || changes.name === '' || [...changes.name].length > 255) throw new PatchRefused('name must be 1 to 255 characters');
      next.name = changes.name;
    }
    if ('action_type' in changes) {
      if (typeof changes.action_type !== 'string' || !ACTION_TYPES.includes(changes.action_type)) throw new PatchRefused(`action_type must be one of ${ACTION_TYPES.join(', ')}`);
      next.action_type = changes.action_type;
    }
    if ('recurrence_data' in changes) {
      const days = typeof changes.recurrence_data === 'string' ? changes.recurrence_data.split(',') : [];
      if (days.length === 0 || days.some((d) => !WEEKDAYS.includes(d))) throw new PatchRefused(`recurrence_data must be comma-separated lowercase weekdays (${WEEKDAYS.join(', ')})`);
      next.recurrence_data = changes.recurrence_data as string;
    }
    if ('start_transcoder' in changes) next.start_transcoder = requestTime('start_transcoder', changes.start_transcoder);
    if ('stop_transcoder' in changes) next.stop_transcoder = requestTime('stop_transcoder', changes.stop_transcoder);
    if ('start_repeat' in changes) next.start_repeat = requestDate('start_repeat', changes.start_repeat);
    if ('end_repeat' in changes) next.end_repeat = requestDate('end_repeat', changes.end_repeat);
    // A strictly later `updated_at` per change, even within one millisecond: clients cache by it.
    this.clock = Math.max(this.clock + 1000, Date.now());
    next.updated_at = iso(this.clock);
    this.schedules.set(id, next);
    return { ...next };
  }
}

/** A schedule with every field of section 2, for tests and the demo; `over` sets any of them. */
export function videoSchedule(id: string, over: Partial<VideoSchedule> = {}): VideoSchedule {
  const day = 86_400_000;
  const start = Math.ceil((Date.now() + day) / 3_600_000) * 3_600_000;
  return {
    id,
    name: `Schedule ${id}`,
    state: 'enabled',
    transcoder_id: `tr_${id}`,
    transcoder_name: `Transcoder ${id}`,
    action_type: 'start_stop',
    recurrence_type: 'once',
    recurrence_data: null,
    start_transcoder: iso(start),
    stop_transcoder: iso(start + 2 * 3_600_000),
    start_repeat: null,
    end_repeat: null,
    created_at: iso(Date.now() - 7 * day),
    updated_at: iso(Date.now() - day),
    ...over,
  };
}
