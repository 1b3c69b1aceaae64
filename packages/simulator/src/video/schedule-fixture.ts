import { isoTime, type VideoSchedule } from './schedule-object.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * A schedule with every field of section 2 filled, for tests and the demo: enabled, `start_stop`, `once`,
 * starting on the hour a day from now for two hours. `over` sets any field, values the reference does not
 * list included.
 */
export function videoSchedule(id: string, over: Partial<VideoSchedule> = {}): VideoSchedule {
  const start = Math.ceil((Date.now() + DAY) / HOUR) * HOUR;
  return {
    id,
    name: `Schedule ${id}`,
    state: 'enabled',
    transcoder_id: `tr_${id}`,
    transcoder_name: `Transcoder ${id}`,
    action_type: 'start_stop',
    recurrence_type: 'once',
    recurrence_data: null,
    start_transcoder: isoTime(start),
    stop_transcoder: isoTime(start + 2 * HOUR),
    start_repeat: null,
    end_repeat: null,
    created_at: isoTime(Date.now() - 7 * DAY),
    updated_at: isoTime(Date.now() - DAY),
    ...over,
  };
}
