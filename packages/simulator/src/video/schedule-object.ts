/**
 * The schedule object of the Wowza Video reference (test/fixtures/reference/wowza-video-schedules-v1.11.md,
 * section 2) as responses carry it: every field of its table, times in ISO 8601 with `Z` ("responses use ISO
 * 8601 with Z"), repeat days as ISO 8601 date-times ("responses use ISO 8601 date-time").
 *
 * Written from the documents, not from src/video/: the simulator is what the client is tested against.
 */

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

/** Section 2, the values each enumerated field takes (a real service may send others: docs/wowza-api-notes.md). */
export const STATES = ['enabled', 'disabled', 'expired'] as const;
export const ACTION_TYPES = ['start', 'stop', 'start_stop'] as const;
export const RECURRENCE_TYPES = ['once', 'recur'] as const;
export const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
/** Section 2 / 8: `name` is at most 255 characters. */
export const NAME_MAX = 255;

/**
 * The fields of an item of `GET /schedules`. The list is not in the reference; the service's lists give
 * "limited details" per item (docs/wowza-api-notes.md, "List endpoints with limited details").
 */
export const SUMMARY_FIELDS = ['id', 'name', 'state', 'transcoder_id', 'created_at', 'updated_at'] as const;
export type VideoScheduleSummary = Pick<VideoSchedule, (typeof SUMMARY_FIELDS)[number]>;

export function summaryOf(s: VideoSchedule): VideoScheduleSummary {
  return Object.fromEntries(SUMMARY_FIELDS.map((f) => [f, s[f]])) as VideoScheduleSummary;
}

/** `2025-06-01T18:00:00Z`: the response format of times (section 2). */
export const isoTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
