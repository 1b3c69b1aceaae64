import { z } from 'zod';
import { VideoInputError, type VideoInputIssue } from './errors.js';
import { ACTION_TYPES, parseRecurrenceDays, WEEKDAYS } from './schedule.js';
import { formatRequestTimestamp, isRequestDate, parseVideoDate, parseVideoTimestamp } from './video-time.js';

/**
 * What `PATCH /schedules/{id}` may carry, checked and normalised before anything is sent. `state` is not
 * among the fields: the API refuses it in a PATCH, so it is rejected here with a clear reason instead of a
 * 422 from the server.
 */

export const PATCH_FIELDS = ['name', 'action_type', 'start_transcoder', 'stop_transcoder', 'recurrence_data', 'start_repeat', 'end_repeat'] as const;
export type PatchField = (typeof PATCH_FIELDS)[number];

const NAME_MAX = 255;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

const Name = z
  .string()
  .refine((s) => s.trim() !== '', 'must not be empty')
  .refine((s) => [...s].length <= NAME_MAX, `must be at most ${NAME_MAX} characters`)
  .refine((s) => !CONTROL.test(s), 'must not contain control characters');

/** Either the request format or ISO 8601 with a zone; always sent as `YYYY-MM-DD HH:MM:SS` UTC. */
const RequestTimestamp = z.string().transform((s, ctx) => {
  const d = parseVideoTimestamp(s.trim());
  if (!d) {
    ctx.addIssue({ code: 'custom', message: 'expected a UTC time as "YYYY-MM-DD HH:MM:SS" or ISO 8601 with a zone, e.g. 2025-06-01T18:00:00Z' });
    return z.NEVER;
  }
  return formatRequestTimestamp(d);
});

const RequestDate = z
  .string()
  .transform((s) => s.trim())
  .refine(isRequestDate, 'expected a date as YYYY-MM-DD');

/** Any case, spaces allowed; sent lowercase without duplicates, e.g. `monday,wednesday`. */
const RecurrenceData = z.string().transform((s, ctx) => {
  const days = parseRecurrenceDays(s);
  if (days === undefined || days.length === 0) {
    ctx.addIssue({ code: 'custom', message: `expected comma-separated weekdays from ${WEEKDAYS.join(', ')}` });
    return z.NEVER;
  }
  return days.map((d) => WEEKDAYS[d]!).join(',');
});

const ACTION_MESSAGE = `expected one of ${ACTION_TYPES.join(', ')}`;

export const SchedulePatchSchema = z
  .strictObject({
    name: Name.optional(),
    action_type: z.enum(ACTION_TYPES, { error: ACTION_MESSAGE }).optional(),
    start_transcoder: RequestTimestamp.optional(),
    stop_transcoder: RequestTimestamp.optional(),
    recurrence_data: RecurrenceData.optional(),
    start_repeat: RequestDate.optional(),
    end_repeat: RequestDate.optional(),
  })
  .superRefine((p, ctx) => {
    if (p.start_repeat && p.end_repeat && parseVideoDate(p.end_repeat)! < parseVideoDate(p.start_repeat)!) {
      ctx.addIssue({ code: 'custom', path: ['end_repeat'], message: 'must not be before start_repeat' });
    }
  });

/** What callers hand in (times in either format, weekdays in any case). */
export type SchedulePatchInput = z.input<typeof SchedulePatchSchema>;
/** What is sent inside `{"schedule": ...}`. */
export type SchedulePatch = z.output<typeof SchedulePatchSchema>;

/**
 * Checks a requested update and returns the body to send. Throws VideoInputError naming every bad field;
 * `state`, unknown fields and an empty update are refused.
 */
export function validateSchedulePatch(input: Readonly<Record<string, unknown>>): SchedulePatch {
  const issues: VideoInputIssue[] = [];
  const given: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    if (key === 'state') {
      issues.push({ field: 'state', message: 'cannot be changed with PATCH /schedules/{id} and is never sent' });
    } else if (!(PATCH_FIELDS as readonly string[]).includes(key)) {
      issues.push({ field: key, message: `is not a field an update may change (${PATCH_FIELDS.join(', ')})` });
    } else {
      given[key] = value;
    }
  }
  if (issues.length === 0 && Object.keys(given).length === 0) {
    issues.push({ field: 'schedule', message: `nothing to update: give at least one of ${PATCH_FIELDS.join(', ')}` });
  }
  const parsed = SchedulePatchSchema.safeParse(given);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) issues.push({ field: issue.path.map(String).join('.') || 'schedule', message: issue.message });
  }
  if (issues.length > 0 || !parsed.success) throw new VideoInputError(issues);
  return parsed.data;
}
