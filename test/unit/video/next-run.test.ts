import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextRun, type ScheduleTiming } from '../../../src/video/next-run.js';
import { WEEKDAYS } from '../../../src/video/schedule.js';
import { formatRequestTimestamp, parseVideoDate, parseVideoTimestamp } from '../../../src/video/video-time.js';

// Wednesday.
const NOW = new Date('2025-06-04T12:00:00Z');

function once(over: Partial<ScheduleTiming> = {}): ScheduleTiming {
  return {
    state: 'enabled',
    action_type: 'start_stop',
    recurrence_type: 'once',
    start_transcoder: '2025-06-05T09:00:00.000Z',
    stop_transcoder: '2025-06-05T10:00:00.000Z',
    ...over,
  };
}

function recur(over: Partial<ScheduleTiming> = {}): ScheduleTiming {
  return {
    state: 'enabled',
    action_type: 'start',
    recurrence_type: 'recur',
    recurrence_data: 'monday',
    start_transcoder: '2025-01-06T09:00:00.000Z',
    start_repeat: '2025-01-06T00:00:00.000Z',
    end_repeat: '2025-12-31T00:00:00.000Z',
    ...over,
  };
}

const iso = (d: Date | undefined) => d?.toISOString();

describe('once', () => {
  it('in the future: the given start and stop', () => {
    const next = nextRun(once(), NOW);
    expect(iso(next.start)).toBe('2025-06-05T09:00:00.000Z');
    expect(iso(next.stop)).toBe('2025-06-05T10:00:00.000Z');
  });

  it('in the past: nothing, even while still enabled', () => {
    expect(nextRun(once({ start_transcoder: '2025-06-01T09:00:00Z', stop_transcoder: '2025-06-01T10:00:00Z' }), NOW)).toEqual({
      start: undefined,
      stop: undefined,
    });
  });

  it('running now: only the stop is ahead', () => {
    const next = nextRun(once({ start_transcoder: '2025-06-04 11:00:00', stop_transcoder: '2025-06-04 13:00:00' }), NOW);
    expect(next.start).toBeUndefined();
    expect(iso(next.stop)).toBe('2025-06-04T13:00:00.000Z');
  });

  it('a time exactly now is not ahead', () => {
    expect(nextRun(once({ start_transcoder: NOW.toISOString() }), NOW).start).toBeUndefined();
  });

  it('start-only schedules have no stop, stop-only schedules have no start', () => {
    expect(nextRun(once({ action_type: 'start' }), NOW).stop).toBeUndefined();
    expect(nextRun(once({ action_type: 'start' }), NOW).start).toBeDefined();
    expect(nextRun(once({ action_type: 'stop' }), NOW).start).toBeUndefined();
    expect(nextRun(once({ action_type: 'stop' }), NOW).stop).toBeDefined();
  });

  it('missing or empty times give nothing', () => {
    expect(nextRun(once({ start_transcoder: null, stop_transcoder: '' }), NOW)).toEqual({ start: undefined, stop: undefined });
  });
});

describe('disabled and expired', () => {
  it('have no next run whatever their times say', () => {
    expect(nextRun(once({ state: 'disabled' }), NOW)).toEqual({});
    expect(nextRun(once({ state: 'expired' }), NOW)).toEqual({});
    expect(nextRun(recur({ state: 'disabled' }), NOW)).toEqual({});
    expect(nextRun(recur({ state: 'expired' }), NOW)).toEqual({});
  });
});

describe('recur', () => {
  it('crosses the week boundary to the next listed weekday', () => {
    // Saturday evening -> Monday morning.
    expect(iso(nextRun(recur(), new Date('2025-06-07T20:00:00Z')).start)).toBe('2025-06-09T09:00:00.000Z');
    // Saturday 23:30 -> Sunday 00:15.
    const sunday = recur({ recurrence_data: 'sunday', start_transcoder: '2025-01-05T00:15:00Z' });
    expect(iso(nextRun(sunday, new Date('2025-06-07T23:30:00Z')).start)).toBe('2025-06-08T00:15:00.000Z');
  });

  it("today's time already passed: the same weekday next week", () => {
    const wed = recur({ recurrence_data: 'wednesday' });
    expect(iso(nextRun(wed, NOW).start)).toBe('2025-06-11T09:00:00.000Z');
  });

  it("today's time still ahead: today", () => {
    const wed = recur({ recurrence_data: 'wednesday', start_transcoder: '2025-01-01 18:00:00' });
    expect(iso(nextRun(wed, NOW).start)).toBe('2025-06-04T18:00:00.000Z');
  });

  it('picks the nearest of several days, in any case and order', () => {
    expect(iso(nextRun(recur({ recurrence_data: 'Friday, monday' }), NOW).start)).toBe('2025-06-06T09:00:00.000Z');
  });

  it('end_repeat passed: nothing', () => {
    expect(nextRun(recur({ end_repeat: '2025-06-01' }), NOW)).toEqual({ start: undefined, stop: undefined });
  });

  it('end_repeat day is included, the day after is not', () => {
    const lastDayToday = recur({ recurrence_data: 'wednesday', end_repeat: '2025-06-04', start_transcoder: '2025-01-01T18:00:00Z' });
    expect(iso(nextRun(lastDayToday, NOW).start)).toBe('2025-06-04T18:00:00.000Z');
    // The next Wednesday would be after the end.
    expect(nextRun({ ...lastDayToday, start_transcoder: '2025-01-01T09:00:00Z' }, NOW).start).toBeUndefined();
  });

  it('does not start before start_repeat', () => {
    expect(iso(nextRun(recur({ start_repeat: '2025-07-01' }), NOW).start)).toBe('2025-07-07T09:00:00.000Z');
  });

  it('without start_repeat, begins on the day of the time itself; without end_repeat, never ends', () => {
    const s = recur({ start_repeat: null, end_repeat: null, start_transcoder: '2025-08-01T09:00:00Z' });
    expect(iso(nextRun(s, NOW).start)).toBe('2025-08-04T09:00:00.000Z');
    expect(iso(nextRun({ ...s, start_transcoder: '2020-01-01T09:00:00Z' }, new Date('2040-01-01T00:00:00Z')).start)).toBe('2040-01-02T09:00:00.000Z');
  });

  it('start and stop each recur at their own time of day', () => {
    const s = recur({ action_type: 'start_stop', recurrence_data: 'wednesday,thursday', start_transcoder: '2025-01-01T09:00:00Z', stop_transcoder: '2025-01-01T17:00:00Z' });
    const next = nextRun(s, NOW);
    expect(iso(next.start)).toBe('2025-06-05T09:00:00.000Z');
    expect(iso(next.stop)).toBe('2025-06-04T17:00:00.000Z');
  });

  it('no weekdays: nothing', () => {
    expect(nextRun(recur({ recurrence_data: '' }), NOW).start).toBeUndefined();
    expect(nextRun(recur({ recurrence_data: null }), NOW).start).toBeUndefined();
  });

  it('is always the earliest listed-weekday time after now within the window', () => {
    const DAY = 86_400_000;
    fc.assert(
      fc.property(
        fc.integer({ min: Date.parse('2024-01-01T00:00:00Z'), max: Date.parse('2026-12-31T00:00:00Z') }),
        fc.subarray([0, 1, 2, 3, 4, 5, 6], { minLength: 1 }),
        fc.integer({ min: 0, max: DAY / 1000 - 1 }),
        fc.integer({ min: -20, max: 20 }),
        fc.integer({ min: 0, max: 30 }),
        (nowMs, days, secondOfDay, startOffsetDays, lengthDays) => {
          const now = new Date(nowMs);
          const firstDay = Math.floor(nowMs / DAY) * DAY + startOffsetDays * DAY;
          const lastDay = firstDay + lengthDays * DAY;
          const s = recur({
            recurrence_data: days.map((d) => WEEKDAYS[d]).join(','),
            start_transcoder: formatRequestTimestamp(new Date(firstDay + secondOfDay * 1000)),
            start_repeat: new Date(firstDay).toISOString().slice(0, 10),
            end_repeat: new Date(lastDay).toISOString().slice(0, 10),
          });
          const got = nextRun(s, now).start?.getTime();
          // Brute force: every day of the window, in order.
          let want: number | undefined;
          for (let day = firstDay; day <= lastDay; day += DAY) {
            const at = day + secondOfDay * 1000;
            if (at > nowMs && days.includes(new Date(day).getUTCDay())) {
              want = at;
              break;
            }
          }
          expect(got).toBe(want);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('Video API times', () => {
  it('reads the request format as UTC and ISO 8601 with any zone', () => {
    expect(parseVideoTimestamp('2025-06-04 12:30:00')?.toISOString()).toBe('2025-06-04T12:30:00.000Z');
    expect(parseVideoTimestamp('2025-06-04T12:30:00.250Z')?.toISOString()).toBe('2025-06-04T12:30:00.250Z');
    expect(parseVideoTimestamp('2025-06-04T14:30:00+02:00')?.toISOString()).toBe('2025-06-04T12:30:00.000Z');
    expect(parseVideoTimestamp('2025-06-04T12:30Z')?.toISOString()).toBe('2025-06-04T12:30:00.000Z');
  });

  it('refuses impossible or zone-less ISO times', () => {
    for (const bad of ['2025-02-30 10:00:00', '2025-06-04 24:00:00', '2025-06-04T12:30:00', '2025-06-04', 'tomorrow', '2025-06-04T12:30:00+25:00', '']) {
      expect(parseVideoTimestamp(bad), bad).toBeUndefined();
    }
  });

  it('reads dates plain or as midnight timestamps', () => {
    expect(parseVideoDate('2025-06-04')).toBe(Date.parse('2025-06-04T00:00:00Z'));
    expect(parseVideoDate('2025-06-04T00:00:00.000Z')).toBe(Date.parse('2025-06-04T00:00:00Z'));
    expect(parseVideoDate('2025-13-01')).toBeUndefined();
  });
});
