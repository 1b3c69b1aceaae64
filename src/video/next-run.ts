import { actionType, parseRecurrenceDays, recurrenceType, type Schedule } from './schedule.js';
import { DAY_MS, parseVideoDate, parseVideoTimestamp, startOfUtcDay } from './video-time.js';

/**
 * When a schedule will next start and stop its transcoder, as far as the schedule itself says.
 *
 * - Only `enabled` schedules run; `disabled` and `expired` have no next run.
 * - `start` schedules never stop the transcoder and `stop` schedules never start it.
 * - `once`: `start_transcoder` / `stop_transcoder` themselves, while they are still ahead.
 * - `recur`: the time of day (UTC) of `start_transcoder` / `stop_transcoder`, on the next day listed in
 *   `recurrence_data`, from `start_repeat` through `end_repeat` (both days included; without
 *   `start_repeat` the series begins on the day of the time itself, without `end_repeat` it does not end).
 *   Start and stop recur independently, each at its own time of day: the API describes no other pairing.
 * - An absent `action_type` or `recurrence_type` is the reference's default (`start`, `once`); a value the
 *   reference does not list says nothing about when the transcoder runs, so such a schedule has no next run.
 */

export type ScheduleTiming = Pick<
  Schedule,
  'state' | 'action_type' | 'recurrence_type' | 'recurrence_data' | 'start_transcoder' | 'stop_transcoder' | 'start_repeat' | 'end_repeat'
>;

export interface NextRun {
  readonly start?: Date;
  readonly stop?: Date;
}

const present = (s: string | null | undefined): s is string => typeof s === 'string' && s !== '';

function nextOnce(time: string | null | undefined, now: Date): Date | undefined {
  const t = present(time) ? parseVideoTimestamp(time) : undefined;
  return t && t.getTime() > now.getTime() ? t : undefined;
}

function nextRecurring(time: string | null | undefined, s: ScheduleTiming, now: Date): Date | undefined {
  const t = present(time) ? parseVideoTimestamp(time) : undefined;
  const days = present(s.recurrence_data) ? parseRecurrenceDays(s.recurrence_data) : undefined;
  if (!t || !days || days.length === 0) return undefined;
  const timeOfDay = t.getTime() - startOfUtcDay(t.getTime());
  const firstDay = (present(s.start_repeat) ? parseVideoDate(s.start_repeat) : undefined) ?? startOfUtcDay(t.getTime());
  const lastDay = present(s.end_repeat) ? parseVideoDate(s.end_repeat) : undefined;
  const nowMs = now.getTime();
  // Today may already be past the time of day; a week and a day always reaches the next listed weekday.
  for (let day = Math.max(firstDay, startOfUtcDay(nowMs)), i = 0; i < 8; i++, day += DAY_MS) {
    if (lastDay !== undefined && day > lastDay) return undefined;
    if (!days.includes(new Date(day).getUTCDay())) continue;
    const at = day + timeOfDay;
    if (at > nowMs) return new Date(at);
  }
  return undefined;
}

export function nextRun(s: ScheduleTiming, now: Date): NextRun {
  const action = actionType(s);
  const recurrence = recurrenceType(s);
  if (s.state !== 'enabled' || !action || !recurrence) return {};
  const next = recurrence === 'recur' ? (time: string | null | undefined) => nextRecurring(time, s, now) : (time: string | null | undefined) => nextOnce(time, now);
  return {
    start: action === 'stop' ? undefined : next(s.start_transcoder),
    stop: action === 'start' ? undefined : next(s.stop_transcoder),
  };
}
