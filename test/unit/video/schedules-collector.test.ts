import { spawnSync } from 'node:child_process';
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger, type Logger } from '../../../src/base/logger.js';
import { mergeRendered, renderSet } from '../../../src/metrics/exposition.js';
import { startVideoSimulator, videoSchedule, type VideoSimulator } from '@wowza-exporter/simulator/video';
import { VideoClient } from '../../../src/video/client.js';
import { VideoSchedulesCollector } from '../../../src/video/schedules-collector.js';
import { VideoHttpError } from '../../../src/video/errors.js';
import type { Schedule } from '../../../src/video/schedule.js';
import { ObjectErrorLog } from '../../../src/collectors/object-errors.js';

const TOKEN = 'collector-test-token';
// Wednesday.
const NOW = new Date('2025-06-04T12:00:00Z');

const SCHEDULES = [
  videoSchedule('once1', {
    name: 'Launch "event" \\ day\ntwo',
    transcoder_id: 'txA',
    transcoder_name: 'Camera A',
    action_type: 'start_stop',
    recurrence_type: 'once',
    start_transcoder: '2025-06-05T09:00:00Z',
    stop_transcoder: '2025-06-05T10:30:00Z',
    updated_at: '2025-06-01T00:00:00Z',
  }),
  videoSchedule('weekly', {
    name: 'Weekly sermon',
    transcoder_id: 'txB',
    action_type: 'start',
    recurrence_type: 'recur',
    recurrence_data: 'sunday',
    start_transcoder: '2025-01-05T08:00:00Z',
    stop_transcoder: null,
    start_repeat: '2025-01-05T00:00:00Z',
    end_repeat: '2025-12-28T00:00:00Z',
    updated_at: '2025-06-01T00:00:00Z',
  }),
  videoSchedule('off', { name: 'Paused', state: 'disabled', transcoder_id: 'txC', action_type: 'stop', stop_transcoder: '2025-07-01T00:00:00Z', updated_at: '2025-06-01T00:00:00Z' }),
  videoSchedule('old', { name: 'Last year', state: 'expired', transcoder_id: '', action_type: 'start', start_transcoder: '2024-01-01T00:00:00Z', updated_at: '2024-01-01T00:00:00Z' }),
];

function byId(samples: { labels: Readonly<Record<string, string>>; value: number }[]): Record<string, number> {
  return Object.fromEntries(samples.map((s) => [s.labels.schedule_id, s.value]));
}

let api: VideoSimulator | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** A clock that only moves when the client sleeps, and records each wait. */
function fakeClock() {
  let t = Date.parse('2025-06-04T12:00:00Z');
  const waits: number[] = [];
  return {
    waits,
    now: () => t,
    advance: (ms: number) => void (t += ms),
    sleep: async (ms: number) => {
      waits.push(ms);
      t += ms;
    },
  };
}

function collector(sim: VideoSimulator, o: { perPage?: number; logger?: Logger; clock?: ReturnType<typeof fakeClock>; maxRetryDelayMs?: number } = {}) {
  const registry = new Registry();
  const unknown = new Counter({ name: 'wowza_video_unknown_values_total', help: 'x', labelNames: ['field'], registers: [registry] });
  const client = new VideoClient({
    url: sim.url,
    token: TOKEN,
    perPage: o.perPage,
    maxRetryDelayMs: o.maxRetryDelayMs,
    ...(o.clock ? { sleep: o.clock.sleep, now: o.clock.now } : {}),
  });
  return { c: new VideoSchedulesCollector(client, { logger: o.logger ?? silentLogger(), unknownValues: unknown }), registry };
}
const requests = (sim: VideoSimulator, route: string) => sim.requests.get(route) ?? 0;

describe('VideoSchedulesCollector', () => {
  it('lists summaries, reads each schedule once, and exposes info, enabled and next start/stop across pages', async () => {
    api = await startVideoSimulator({ token: TOKEN, schedules: SCHEDULES, pageSize: 3 });
    const { c } = collector(api, { perPage: 3 });
    const set = await c.collect(NOW);

    expect(requests(api, 'GET /schedules')).toBe(2);
    expect(requests(api, 'GET /schedules/{id}')).toBe(4);
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

  it('reuses a schedule while the list shows the same updated_at, asks again when it changes, and forgets deleted ones', async () => {
    api = await startVideoSimulator({ token: TOKEN, schedules: SCHEDULES });
    const { c } = collector(api);
    await c.collect(NOW);
    expect(requests(api, 'GET /schedules/{id}')).toBe(4);

    // A steady account: one list request per poll, nothing else.
    await c.collect(NOW);
    expect(requests(api, 'GET /schedules')).toBe(2);
    expect(requests(api, 'GET /schedules/{id}')).toBe(4);

    // A change moves updated_at: only that schedule is read again, and its new values are exported.
    api.schedules.patch('once1', { schedule: { start_transcoder: '2025-06-06 09:00:00' } });
    const changed = await c.collect(NOW);
    expect(requests(api, 'GET /schedules/{id}')).toBe(5);
    expect(byId(changed.samples('wowza_video_schedule_next_start_timestamp_seconds')).once1).toBe(Date.parse('2025-06-06T09:00:00Z') / 1000);

    // Deleted: gone from the list, gone from the metrics, and gone from the cache: when a schedule with that id
    // comes back with the very same updated_at, it is read again rather than taken from the cache.
    const old = api.schedules.get('old')!;
    api.schedules.delete('old');
    expect(byId((await c.collect(NOW)).samples('wowza_video_schedule_enabled'))).toEqual({ once1: 1, weekly: 1, off: 0 });
    expect(requests(api, 'GET /schedules/{id}')).toBe(5);
    api.schedules.put({ ...old, state: 'enabled', start_transcoder: '2025-06-10T00:00:00Z' });
    const back = await c.collect(NOW);
    expect(requests(api, 'GET /schedules/{id}')).toBe(6);
    expect(byId(back.samples('wowza_video_schedule_next_start_timestamp_seconds')).old).toBe(Date.parse('2025-06-10T00:00:00Z') / 1000);

    // One deleted between list and detail (404) is left out.
    api.schedules.put(videoSchedule('late', { updated_at: '2025-06-02T00:00:00Z' }));
    api.schedules.delete('old');
    const real = api.schedules;
    const racing = { listSchedulePages: async () => ({ schedules: [...real.summaries(), { id: 'gone', state: 'enabled', updated_at: 'x' }] }), getSchedule: (id: string) => new VideoClient({ url: api!.url, token: TOKEN }).getSchedule(id) };
    const c2 = new VideoSchedulesCollector(racing, { logger: silentLogger(), unknownValues: new Counter({ name: 'u2', help: 'x', labelNames: ['field'], registers: [] }) });
    expect(Object.keys(byId((await c2.collect(NOW)).samples('wowza_video_schedule_info'))).sort()).toEqual(['late', 'off', 'once1', 'weekly']);
  });

  it('keeps a schedule with a value the reference does not list, exports what is known, and counts it once', async () => {
    api = await startVideoSimulator({
      token: TOKEN,
      schedules: [
        videoSchedule('new-state', { state: 'paused', start_transcoder: '2025-06-05T09:00:00Z' }),
        videoSchedule('new-action', { action_type: 'restart', start_transcoder: '2025-06-05T09:00:00Z' }),
        videoSchedule('bad-time', { start_transcoder: 'tomorrow morning', stop_transcoder: '2025-06-05T10:00:00Z' }),
        SCHEDULES[0]!,
      ],
    });
    const warnings: Array<Record<string, unknown>> = [];
    const logger = { ...silentLogger(), warn: (o: Record<string, unknown>) => warnings.push(o), child: () => logger } as unknown as Logger;
    const { c, registry } = collector(api, { logger });
    const set = await c.collect(NOW);
    await c.collect(NOW);

    expect(Object.keys(byId(set.samples('wowza_video_schedule_info'))).sort()).toEqual(['bad-time', 'new-action', 'new-state', 'once1']);
    expect(set.samples('wowza_video_schedule_info').find((s) => s.labels.schedule_id === 'new-state')!.labels.state).toBe('paused');
    // An unknown state says nothing about whether it runs: no enabled value, no next run.
    expect(byId(set.samples('wowza_video_schedule_enabled'))).toEqual({ 'new-action': 1, 'bad-time': 1, once1: 1 });
    const starts = byId(set.samples('wowza_video_schedule_next_start_timestamp_seconds'));
    expect(Object.keys(starts).sort()).toEqual(['once1']);
    // What is readable of bad-time is still used.
    expect(byId(set.samples('wowza_video_schedule_next_stop_timestamp_seconds'))['bad-time']).toBe(Date.parse('2025-06-05T10:00:00Z') / 1000);

    const counted = await registry.getSingleMetricAsString('wowza_video_unknown_values_total');
    expect(counted).toContain('wowza_video_unknown_values_total{field="state"} 1');
    expect(counted).toContain('wowza_video_unknown_values_total{field="action_type"} 1');
    expect(counted).toContain('wowza_video_unknown_values_total{field="start_transcoder"} 1');
    expect(warnings.map((w) => `${w.schedule} ${w.field} ${w.value}`).sort()).toEqual(['bad-time start_transcoder tomorrow morning', 'new-action action_type restart', 'new-state state paused']);
  });

  it('waits as Retry-After asks on 429 and then succeeds', async () => {
    api = await startVideoSimulator({ token: TOKEN, schedules: SCHEDULES.slice(0, 1) });
    const clock = fakeClock();
    const { c } = collector(api, { clock });
    api.faults.rateLimit(2, 3);
    const set = await c.collect(NOW);
    expect(clock.waits).toEqual([3000, 3000]);
    expect(requests(api, 'GET /schedules')).toBe(3);
    expect(set.samples('wowza_video_schedule_info')).toHaveLength(1);
  });

  it('a Retry-After longer than the client waits fails the poll, and no request is sent until that time has come', async () => {
    api = await startVideoSimulator({ token: TOKEN, schedules: SCHEDULES.slice(0, 1) });
    const clock = fakeClock();
    const { c } = collector(api, { clock, maxRetryDelayMs: 10_000 });
    api.faults.rateLimit(1, 120);
    await expect(c.collect(NOW)).rejects.toThrow('asked to wait 120 s, longer than the 10 s this client waits');
    expect(requests(api, 'GET /schedules')).toBe(1);

    // The next poll, a minute later: not sent at all.
    clock.advance(60_000);
    await expect(c.collect(NOW)).rejects.toThrow(/not sent: the API asked \(Retry-After\) not to be called before/);
    expect(requests(api, 'GET /schedules')).toBe(1);

    // 55 s later, 5 s remain: within what the client waits, so it waits them and goes on.
    clock.advance(55_000);
    const set = await c.collect(NOW);
    expect(clock.waits).toEqual([5000]);
    expect(requests(api, 'GET /schedules')).toBe(2);
    expect(set.samples('wowza_video_schedule_info')).toHaveLength(1);
  });

  it('counts an unknown value once per schedule and logs each distinct field and value once', async () => {
    api = await startVideoSimulator({
      token: TOKEN,
      schedules: ['u1', 'u2', 'u3'].map((id) => videoSchedule(id)),
      unknownValues: [
        { field: 'state', value: 'paused' },
        { id: 'u3', field: 'action_type', value: 'restart' },
      ],
    });
    const warnings: Array<Record<string, unknown>> = [];
    const logger = { ...silentLogger(), warn: (o: Record<string, unknown>) => warnings.push(o), child: () => logger } as unknown as Logger;
    const { c, registry } = collector(api, { logger });
    const set = await c.collect(NOW);
    await c.collect(NOW);
    expect(set.samples('wowza_video_schedule_info')).toHaveLength(3);
    const counted = await registry.getSingleMetricAsString('wowza_video_unknown_values_total');
    expect(counted).toContain('wowza_video_unknown_values_total{field="state"} 3');
    expect(counted).toContain('wowza_video_unknown_values_total{field="action_type"} 1');
    expect(counted).not.toContain('paused');
    expect(warnings.map((w) => `${w.field} ${w.value}`).sort()).toEqual(['action_type restart', 'state paused']);
  });

  it('says in a log line when the list looks truncated (exactly full, no pagination)', async () => {
    api = await startVideoSimulator({ token: TOKEN, schedules: SCHEDULES, truncateAt: 2 });
    const warnings: string[] = [];
    const logger = { ...silentLogger(), warn: (_o: unknown, msg: string) => warnings.push(msg), child: () => logger } as unknown as Logger;
    const { c } = collector(api, { perPage: 2, logger });
    await c.collect(NOW);
    await c.collect(NOW);
    expect(warnings.filter((w) => /list looks truncated/.test(w))).toHaveLength(1);
  });

  it('an empty account gives an empty set; a failed list throws, so no stale or partial values are kept', async () => {
    api = await startVideoSimulator({ token: TOKEN, schedules: [] });
    expect((await collector(api).c.collect(NOW)).size).toBe(0);
    const wrong = new VideoSchedulesCollector(new VideoClient({ url: api.url, token: 'wrong-token' }), { logger: silentLogger(), unknownValues: new Counter({ name: 'u3', help: 'x', labelNames: ['field'], registers: [] }) });
    await expect(wrong.collect(NOW)).rejects.toThrow('GET /schedules: HTTP 401 ERR-401-InvalidToken');
  });
});

describe('VideoSchedulesCollector: one schedule at a time', () => {
  const summaries = SCHEDULES.map((s) => ({ id: s.id, name: s.name, state: s.state, updated_at: s.updated_at }));
  const stub = (failing: Set<string>) => ({
    listSchedulePages: async () => ({ schedules: summaries }),
    getSchedule: async (id: string) => {
      if (failing.has(id)) throw new VideoHttpError(`GET /schedules/${id}`, 500, {});
      return SCHEDULES.find((s) => s.id === id) as Schedule;
    },
  });

  it('a schedule whose detail fails is left out and counted; the others stay and the poll succeeds', async () => {
    const registry = new Registry();
    const unknown = new Counter({ name: 'u', help: 'x', labelNames: ['field'], registers: [registry] });
    const reasons: string[] = [];
    const objectErrors = new ObjectErrorLog((reason) => reasons.push(reason));
    const c = new VideoSchedulesCollector(stub(new Set(['weekly'])), { logger: silentLogger(), unknownValues: unknown, objectErrors });
    const set = await c.collect(NOW);
    expect(Object.keys(byId(set.samples('wowza_video_schedule_enabled'))).sort()).toEqual(['off', 'old', 'once1']);
    expect(reasons).toEqual(['http']);
    expect(c.lastObjects).toMatchObject({ total: 4, failed: 1, lastReason: 'http' });
  });

  it('fails the poll only when every detail failed', async () => {
    const registry = new Registry();
    const unknown = new Counter({ name: 'u', help: 'x', labelNames: ['field'], registers: [registry] });
    const c = new VideoSchedulesCollector(stub(new Set(SCHEDULES.map((s) => s.id))), { logger: silentLogger(), unknownValues: unknown });
    await expect(c.collect(NOW)).rejects.toThrow(/500/);
  });
});
