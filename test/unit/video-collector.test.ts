import { spawnSync } from 'node:child_process';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mergeRendered, renderSet } from '../../src/metrics/exposition.js';
import { VideoClient } from '../../src/video/client.js';
import { collectVideoSchedules } from '../../src/video/schedules-collector.js';

const ORIGIN = 'https://api.video.test';
const TOKEN = 'collector-test-token';
// Wednesday.
const NOW = new Date('2025-06-04T12:00:00Z');

const SCHEDULES = [
  {
    id: 'once1',
    name: 'Launch "event" \\ day\ntwo',
    state: 'enabled',
    transcoder_id: 'txA',
    transcoder_name: 'Camera A',
    action_type: 'start_stop',
    recurrence_type: 'once',
    start_transcoder: '2025-06-05T09:00:00.000Z',
    stop_transcoder: '2025-06-05T10:30:00.000Z',
  },
  {
    id: 'weekly',
    name: 'Weekly sermon',
    state: 'enabled',
    transcoder_id: 'txB',
    action_type: 'start',
    recurrence_type: 'recur',
    recurrence_data: 'sunday',
    start_transcoder: '2025-01-05T08:00:00.000Z',
    start_repeat: '2025-01-05T00:00:00.000Z',
    end_repeat: '2025-12-28T00:00:00.000Z',
  },
  {
    id: 'off',
    name: 'Paused',
    state: 'disabled',
    transcoder_id: 'txC',
    action_type: 'stop',
    recurrence_type: 'once',
    stop_transcoder: '2025-07-01T00:00:00.000Z',
  },
  { id: 'old', name: 'Last year', state: 'expired', transcoder_id: null, action_type: 'start', recurrence_type: 'once', start_transcoder: '2024-01-01T00:00:00.000Z' },
];

const client = () => new VideoClient({ url: `${ORIGIN}/api/v1.11`, token: TOKEN, perPage: 3 });

function byId(samples: { labels: Readonly<Record<string, string>>; value: number }[]): Record<string, number> {
  return Object.fromEntries(samples.map((s) => [s.labels.schedule_id, s.value]));
}

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());
afterAll(() => nock.enableNetConnect());

describe('collectVideoSchedules', () => {
  it('exposes info, enabled and next start/stop for every schedule across pages', async () => {
    nock(ORIGIN, { reqheaders: { authorization: `Bearer ${TOKEN}` } })
      .get('/api/v1.11/schedules')
      .query({ page: '1', per_page: '3' })
      .reply(200, { schedules: SCHEDULES.slice(0, 3), pagination: { page: 1, per_page: 3, total_pages: 2, total_records: 4 } })
      .get('/api/v1.11/schedules')
      .query({ page: '2', per_page: '3' })
      .reply(200, { schedules: SCHEDULES.slice(3), pagination: { page: 2, per_page: 3, total_pages: 2, total_records: 4 } });

    const set = await collectVideoSchedules(client(), NOW);

    expect(set.samples('wowza_video_schedule_info')).toEqual([
      {
        labels: { schedule_id: 'once1', name: 'Launch "event" \\ day\ntwo', transcoder_id: 'txA', action_type: 'start_stop', recurrence_type: 'once', state: 'enabled' },
        value: 1,
      },
      { labels: { schedule_id: 'weekly', name: 'Weekly sermon', transcoder_id: 'txB', action_type: 'start', recurrence_type: 'recur', state: 'enabled' }, value: 1 },
      { labels: { schedule_id: 'off', name: 'Paused', transcoder_id: 'txC', action_type: 'stop', recurrence_type: 'once', state: 'disabled' }, value: 1 },
      { labels: { schedule_id: 'old', name: 'Last year', transcoder_id: '', action_type: 'start', recurrence_type: 'once', state: 'expired' }, value: 1 },
    ]);
    expect(byId(set.samples('wowza_video_schedule_enabled'))).toEqual({ once1: 1, weekly: 1, off: 0, old: 0 });
    expect(byId(set.samples('wowza_video_schedule_next_start_timestamp_seconds'))).toEqual({
      once1: Date.parse('2025-06-05T09:00:00Z') / 1000,
      weekly: Date.parse('2025-06-08T08:00:00Z') / 1000,
    });
    // `weekly` only starts; `off` is disabled.
    expect(byId(set.samples('wowza_video_schedule_next_stop_timestamp_seconds'))).toEqual({ once1: Date.parse('2025-06-05T10:30:00Z') / 1000 });

    const text = mergeRendered([renderSet(set)]);
    expect(text).toContain('wowza_video_schedule_info{schedule_id="once1",name="Launch \\"event\\" \\\\ day\\ntwo"');
    expect(text).toContain('wowza_video_schedule_next_start_timestamp_seconds{schedule_id="weekly"} 1749369600\n');
    expect(text).not.toContain(TOKEN);

    const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    if (!promtool.error) expect(`${promtool.stdout}${promtool.stderr}`.trim()).toBe('');
  });

  it('an empty account gives an empty set', async () => {
    nock(ORIGIN).get('/api/v1.11/schedules').query(true).reply(200, { schedules: [] });
    expect((await collectVideoSchedules(client(), NOW)).size).toBe(0);
  });

  it('a failed list throws, so no stale or partial values are kept', async () => {
    nock(ORIGIN)
      .get('/api/v1.11/schedules')
      .query(true)
      .reply(401, { meta: { status: 401, code: 'ERR-401-InvalidToken', title: 'Invalid Token Error', message: 'Invalid token.', description: '', links: [] } });
    await expect(collectVideoSchedules(client(), NOW)).rejects.toThrow('GET /schedules: HTTP 401 ERR-401-InvalidToken');
  });
});
