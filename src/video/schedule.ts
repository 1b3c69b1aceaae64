import { z } from 'zod';
import { PaginationSchema } from './pagination.js';
import { parseVideoDate, parseVideoTimestamp } from './video-time.js';

/**
 * A Wowza Video schedule as the API (v1.11) returns it. Unknown fields are kept so `--json` shows what the
 * API sent and a new field never breaks a poll; the fields the exporter reads are checked strictly.
 */

export const SCHEDULE_STATES = ['enabled', 'disabled', 'expired'] as const;
export const ACTION_TYPES = ['start', 'stop', 'start_stop'] as const;
export const RECURRENCE_TYPES = ['once', 'recur'] as const;
/** Index = `Date#getUTCDay()`. */
export const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;

export type ScheduleState = (typeof SCHEDULE_STATES)[number];
export type ActionType = (typeof ACTION_TYPES)[number];
export type RecurrenceType = (typeof RECURRENCE_TYPES)[number];
export type Weekday = (typeof WEEKDAYS)[number];

/** Weekday indexes (0 = Sunday) of a `recurrence_data` list such as `monday,friday`; undefined if a token is no weekday. */
export function parseRecurrenceDays(text: string): number[] | undefined {
  const days: number[] = [];
  for (const raw of text.split(',')) {
    const token = raw.trim().toLowerCase();
    if (token === '') continue;
    const day = (WEEKDAYS as readonly string[]).indexOf(token);
    if (day < 0) return undefined;
    if (!days.includes(day)) days.push(day);
  }
  return days;
}

/**
 * Field rules of the reference (wowza-video-schedules-v1.11.md, section 2). The schemas below only require what
 * identifies a schedule (`id`); everything else may be absent or hold a value the reference does not list (a new
 * `state` or `action_type`, a time in another format). Such a value never fails a poll: `readSchedule` keeps the
 * schedule, exports what is known, and reports the field (wowza_video_unknown_values_total).
 */
const text = z.string().nullish();

/**
 * One item of `GET /schedules`. The list is not in the reference; like the service's other lists it gives
 * limited details per item (docs/wowza-api-notes.md, "List endpoints with limited details"): `id`, `name`, `state`, `transcoder_id`,
 * `created_at`, `updated_at`. The rest comes from `GET /schedules/{id}`.
 */
export const ScheduleSummarySchema = z.looseObject({
  id: z.string().min(1),
  name: text,
  state: text,
  transcoder_id: text,
  created_at: text,
  updated_at: text,
});
export type ScheduleSummary = z.infer<typeof ScheduleSummarySchema>;

/** The schedule object of `GET|PATCH /schedules/{id}` (section 2), every field but `id` optional here. */
export const ScheduleSchema = ScheduleSummarySchema.extend({
  transcoder_name: text,
  action_type: text,
  recurrence_type: text,
  recurrence_data: text,
  start_transcoder: text,
  stop_transcoder: text,
  start_repeat: text,
  end_repeat: text,
});

export type Schedule = z.infer<typeof ScheduleSchema>;

/** `GET /schedules`: one page of the list; `pagination` appears when the API pages. */
export const ScheduleListSchema = z.looseObject({
  schedules: z.array(ScheduleSummarySchema),
  pagination: PaginationSchema.nullish(),
});

/** `GET|PATCH /schedules/{id}`: "body {schedule}" (section 4). */
export const ScheduleEnvelopeSchema = z.looseObject({ schedule: ScheduleSchema });

/** A field whose value the reference does not describe. */
export interface UnknownValue {
  field: 'state' | 'action_type' | 'recurrence_type' | 'recurrence_data' | 'start_transcoder' | 'stop_transcoder' | 'start_repeat' | 'end_repeat';
  value: string;
}

const present = (v: string | null | undefined): v is string => typeof v === 'string' && v !== '';

/**
 * The values of a schedule that are not what the reference lists, so the caller can count and log them. An
 * absent `action_type` or `recurrence_type` is not one: the reference gives their defaults (`start`, `once`).
 */
export function unknownValues(s: Schedule): UnknownValue[] {
  const out: UnknownValue[] = [];
  const oneOf = (field: UnknownValue['field'], v: string | null | undefined, known: readonly string[]) => {
    if (present(v) && !known.includes(v)) out.push({ field, value: v });
  };
  oneOf('state', s.state, SCHEDULE_STATES);
  oneOf('action_type', s.action_type, ACTION_TYPES);
  oneOf('recurrence_type', s.recurrence_type, RECURRENCE_TYPES);
  if (present(s.recurrence_data) && parseRecurrenceDays(s.recurrence_data) === undefined) out.push({ field: 'recurrence_data', value: s.recurrence_data });
  for (const f of ['start_transcoder', 'stop_transcoder'] as const) if (present(s[f]) && parseVideoTimestamp(s[f]) === undefined) out.push({ field: f, value: s[f] });
  for (const f of ['start_repeat', 'end_repeat'] as const) if (present(s[f]) && parseVideoDate(s[f]) === undefined) out.push({ field: f, value: s[f] });
  return out;
}

/** `action_type` with the reference's default (`start`), or undefined when it is a value the reference does not list. */
export function actionType(s: Pick<Schedule, 'action_type'>): ActionType | undefined {
  const v = present(s.action_type) ? s.action_type : 'start';
  return (ACTION_TYPES as readonly string[]).includes(v) ? (v as ActionType) : undefined;
}

/** `recurrence_type` with the reference's default (`once`), or undefined when not a listed value. */
export function recurrenceType(s: Pick<Schedule, 'recurrence_type'>): RecurrenceType | undefined {
  const v = present(s.recurrence_type) ? s.recurrence_type : 'once';
  return (RECURRENCE_TYPES as readonly string[]).includes(v) ? (v as RecurrenceType) : undefined;
}
