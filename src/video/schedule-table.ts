import { nextRun } from './next-run.js';
import type { Schedule, ScheduleSummary } from './schedule.js';

/**
 * Schedules as text for a terminal: a table for lists, `key: value` lines for one schedule. Values come
 * from the API and may hold anything, so control and bidi-override characters are replaced before they
 * can move the cursor or reorder the line.
 */

// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const NAME_WIDTH = 40;

function safe(v: string | null | undefined): string {
  return v === null || v === undefined || v === '' ? '-' : v.replace(UNSAFE, '?');
}

function clip(v: string, width: number): string {
  const chars = [...v];
  return chars.length > width ? `${chars.slice(0, width - 1).join('')}…` : v;
}

/** `2025-06-02 09:00:00Z`, or `-`. */
export function formatUtc(d: Date | undefined): string {
  return d ? `${d.toISOString().slice(0, 19).replace('T', ' ')}Z` : '-';
}

/**
 * The list as `GET /schedules` gives it: limited details per schedule (no action, recurrence or times), so the
 * table shows those and says where the rest is.
 */
export function scheduleTable(schedules: readonly ScheduleSummary[]): string {
  if (schedules.length === 0) return 'No schedules.\n';
  const header = ['ID', 'NAME', 'STATE', 'TRANSCODER', 'UPDATED'];
  const rows = schedules.map((s) => [safe(s.id), clip(safe(s.name), NAME_WIDTH), safe(s.state), safe(s.transcoder_id), safe(s.updated_at)]);
  const widths = header.map((h, i) => Math.max([...h].length, ...rows.map((r) => [...r[i]!].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat(widths[i]! - [...c].length)))
      .join('  ')
      .trimEnd();
  return [header, ...rows].map(line).join('\n') + '\n';
}

export function scheduleDetail(s: Schedule, now: Date): string {
  const next = nextRun(s, now);
  const fields: Array<[string, string]> = [
    ['id', safe(s.id)],
    ['name', safe(s.name)],
    ['state', safe(s.state)],
    ['action_type', safe(s.action_type)],
    ['transcoder', s.transcoder_name ? `${safe(s.transcoder_id)} (${safe(s.transcoder_name)})` : safe(s.transcoder_id)],
    ['recurrence_type', safe(s.recurrence_type)],
    ['recurrence_data', safe(s.recurrence_data)],
    ['start_transcoder', safe(s.start_transcoder)],
    ['stop_transcoder', safe(s.stop_transcoder)],
    ['start_repeat', safe(s.start_repeat)],
    ['end_repeat', safe(s.end_repeat)],
    ['next_start', formatUtc(next.start)],
    ['next_stop', formatUtc(next.stop)],
    ['created_at', safe(s.created_at)],
    ['updated_at', safe(s.updated_at)],
  ];
  const width = Math.max(...fields.map(([k]) => k.length));
  return fields.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n') + '\n';
}
