import { ACTION_TYPES, isoTime, NAME_MAX, WEEKDAYS, type VideoSchedule } from './schedule-object.js';

/**
 * `PATCH /schedules/{id}` as section 4 of the reference describes it: a JSON body with the required object
 * `schedule`, whose optional members are `action_type`, `name`, `end_repeat`, `recurrence_data`,
 * `start_repeat`, `start_transcoder`, `stop_transcoder`. `state` is not accepted (section 3). Times are sent as
 * `YYYY-MM-DD HH:MM:SS` (UTC) and repeat days as `YYYY-MM-DD` (section 2), and come back in ISO 8601.
 */

export const PATCHABLE = ['action_type', 'name', 'end_repeat', 'recurrence_data', 'start_repeat', 'start_transcoder', 'stop_transcoder'] as const;

const REQUEST_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const REQUEST_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A body the update does not accept: 422, one of the statuses section 4 documents for PATCH. */
export class PatchRefused extends Error {}

function requestTime(field: string, v: unknown): string {
  const m = typeof v === 'string' ? REQUEST_TIME.exec(v) : null;
  const ms = m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : NaN;
  if (!m || Number.isNaN(ms) || isoTime(ms).slice(0, 19).replace('T', ' ') !== v) throw new PatchRefused(`${field} must be YYYY-MM-DD HH:MM:SS (UTC), got ${JSON.stringify(v)}`);
  return isoTime(ms);
}

function requestDate(field: string, v: unknown): string {
  const m = typeof v === 'string' ? REQUEST_DATE.exec(v) : null;
  const ms = m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!) : NaN;
  if (!m || Number.isNaN(ms) || isoTime(ms).slice(0, 10) !== v) throw new PatchRefused(`${field} must be YYYY-MM-DD, got ${JSON.stringify(v)}`);
  return isoTime(ms);
}

/** The schedule with the body's changes applied (`updated_at` is the caller's); throws PatchRefused. */
export function applyPatch(s: VideoSchedule, body: unknown): VideoSchedule {
  const inner = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).schedule : undefined;
  if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) throw new PatchRefused('the body must hold the object schedule');
  const changes = inner as Record<string, unknown>;
  for (const key of Object.keys(changes)) {
    if (key === 'state') throw new PatchRefused('state cannot be changed by an update');
    if (!(PATCHABLE as readonly string[]).includes(key)) throw new PatchRefused(`${key} is not a field an update accepts`);
  }
  const next = { ...s };
  if ('name' in changes) {
    if (typeof changes.name !== 'string' || changes.name === '' || [...changes.name].length > NAME_MAX) throw new PatchRefused(`name must be 1 to ${NAME_MAX} characters`);
    next.name = changes.name;
  }
  if ('action_type' in changes) {
    if (typeof changes.action_type !== 'string' || !(ACTION_TYPES as readonly string[]).includes(changes.action_type)) throw new PatchRefused(`action_type must be one of ${ACTION_TYPES.join(', ')}`);
    next.action_type = changes.action_type;
  }
  if ('recurrence_data' in changes) {
    const days = typeof changes.recurrence_data === 'string' ? changes.recurrence_data.split(',') : [];
    if (days.length === 0 || days.some((d) => !(WEEKDAYS as readonly string[]).includes(d))) {
      throw new PatchRefused(`recurrence_data must be comma-separated lowercase weekdays (${WEEKDAYS.join(', ')})`);
    }
    next.recurrence_data = changes.recurrence_data as string;
  }
  if ('start_transcoder' in changes) next.start_transcoder = requestTime('start_transcoder', changes.start_transcoder);
  if ('stop_transcoder' in changes) next.stop_transcoder = requestTime('stop_transcoder', changes.stop_transcoder);
  if ('start_repeat' in changes) next.start_repeat = requestDate('start_repeat', changes.start_repeat);
  if ('end_repeat' in changes) next.end_repeat = requestDate('end_repeat', changes.end_repeat);
  return next;
}
