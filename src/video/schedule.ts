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

// An empty string is how some records say "not set"; anything else must be readable.
const Timestamp = z
  .string()
  .refine((s) => s === '' || parseVideoTimestamp(s) !== undefined, 'expected a UTC time (ISO 8601 or YYYY-MM-DD HH:MM:SS)');
const CalendarDate = z.string().refine((s) => s === '' || parseVideoDate(s) !== undefined, 'expected a date (YYYY-MM-DD or ISO 8601)');
const RecurrenceData = z
  .string()
  .refine((s) => parseRecurrenceDays(s) !== undefined, `expected comma-separated weekdays (${WEEKDAYS.join(', ')})`);

export const ScheduleSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string().nullish(),
  state: z.enum(SCHEDULE_STATES),
  transcoder_id: z.string().nullish(),
  transcoder_name: z.string().nullish(),
  action_type: z.enum(ACTION_TYPES),
  recurrence_type: z.enum(RECURRENCE_TYPES),
  recurrence_data: RecurrenceData.nullish(),
  start_transcoder: Timestamp.nullish(),
  stop_transcoder: Timestamp.nullish(),
  start_repeat: CalendarDate.nullish(),
  end_repeat: CalendarDate.nullish(),
  created_at: z.string().nullish(),
  updated_at: z.string().nullish(),
});

export type Schedule = z.infer<typeof ScheduleSchema>;

/** `GET /schedules`: one page of the list; `pagination` appears when the API pages. */
export const ScheduleListSchema = z.looseObject({
  schedules: z.array(ScheduleSchema),
  pagination: PaginationSchema.nullish(),
});

/** `GET|PATCH /schedules/{id}`. */
export const ScheduleEnvelopeSchema = z.looseObject({ schedule: ScheduleSchema });
