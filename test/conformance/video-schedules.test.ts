import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVideoSimulator, videoSchedule, type VideoSimulator } from '../../src/simulator/video/index.js';
import { problems, type Shape } from './shape.js';

/**
 * Conformance of the Wowza Video simulator with the schedules reference (../shared/reference/
 * wowza-video-schedules-v1.11.md): the schedule object of section 2, every row of section 4, the error body of
 * section 7. The list endpoint is not in the reference; its shape comes from shared/wowza-api.md ("limited
 * details per item"). Transcribed from the documents, not from src/video/.
 */

const REFERENCE = fileURLToPath(new URL('../../../shared/reference/wowza-video-schedules-v1.11.md', import.meta.url));
const TOKEN = 'conformance-token';

/** ISO 8601 date-time with Z ("responses use ISO 8601 with Z"). */
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Section 2, the schedule table. */
const SCHEDULE: Shape = {
  id: 'string',
  name: 'string',
  state: 'string',
  transcoder_id: 'string',
  transcoder_name: 'string',
  action_type: 'string',
  recurrence_type: 'string',
  recurrence_data: ['string', 'null'],
  start_transcoder: ['string', 'null'],
  stop_transcoder: ['string', 'null'],
  start_repeat: ['string', 'null'],
  end_repeat: ['string', 'null'],
  created_at: 'string',
  updated_at: 'string',
};
const ENUMS: Record<string, readonly string[]> = {
  state: ['enabled', 'disabled', 'expired'],
  action_type: ['start', 'stop', 'start_stop'],
  recurrence_type: ['once', 'recur'],
};
/** "Schedule object, wrapped in a key schedule". */
const ENVELOPE: Shape = { schedule: { object: SCHEDULE, open: false } };
/** wowza-api.md: `GET /schedules` lists `{"schedules":[...]}` with `id`, `name`, `state`, `transcoder_id`, `created_at`, `updated_at`. */
const SUMMARY: Shape = { id: 'string', name: 'string', state: 'string', transcoder_id: 'string', created_at: 'string', updated_at: 'string' };
const LIST: Shape = { schedules: { array: { object: SUMMARY, open: false } } };
/** Section 7. */
const ERROR: Shape = { meta: { object: { status: 'int', code: 'string', title: 'string', message: 'string', description: 'string', links: { array: 'any' } }, open: false } };

let api: VideoSimulator;
async function call(method: string, path: string, body?: unknown, token = TOKEN) {
  const res = await fetch(api.url + path, {
    method,
    headers: { accept: 'application/json', authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text, json: text ? (JSON.parse(text) as unknown) : undefined };
}
const conforms = (json: unknown, shape: Shape) => problems(json, { object: shape });

function timesAreIso(s: Record<string, unknown>): string[] {
  return ['start_transcoder', 'stop_transcoder', 'start_repeat', 'end_repeat', 'created_at', 'updated_at'].filter((f) => s[f] !== null && !ISO.test(String(s[f]))).map((f) => `${f}: ${String(s[f])}`);
}

beforeAll(async () => {
  api = await startVideoSimulator({
    token: TOKEN,
    schedules: [
      videoSchedule('a1'),
      videoSchedule('r1', { recurrence_type: 'recur', recurrence_data: 'monday,friday', start_repeat: '2026-01-05T00:00:00Z', end_repeat: '2026-12-28T00:00:00Z', action_type: 'start', stop_transcoder: null }),
      videoSchedule('del'),
    ],
  });
});
afterAll(() => api.close());

describe('Wowza Video reference, section 4: every row', () => {
  it('GET /schedules/{id} -> 200, body {schedule} with the fields of section 2, times in ISO 8601 with Z', async () => {
    for (const id of ['a1', 'r1']) {
      const res = await call('GET', `/schedules/${id}`);
      expect(res.status).toBe(200);
      expect(res.contentType).toMatch(/^application\/json/);
      expect(conforms(res.json, ENVELOPE)).toEqual([]);
      const s = (res.json as { schedule: Record<string, string> }).schedule;
      for (const [field, values] of Object.entries(ENUMS)) expect(values, field).toContain(s[field]);
      expect(timesAreIso(s)).toEqual([]);
    }
  });

  it('PATCH /schedules/{id} -> 200, body {schedule}, with the given fields changed; times sent as YYYY-MM-DD HH:MM:SS come back as ISO 8601', async () => {
    const before = (await call('GET', '/schedules/a1')).json as { schedule: Record<string, string> };
    const res = await call('PATCH', '/schedules/a1', { schedule: { name: 'Renamed', start_transcoder: '2026-12-01 18:30:00', action_type: 'start' } });
    expect(res.status).toBe(200);
    expect(conforms(res.json, ENVELOPE)).toEqual([]);
    const s = (res.json as { schedule: Record<string, string> }).schedule;
    expect(s).toMatchObject({ name: 'Renamed', start_transcoder: '2026-12-01T18:30:00Z', action_type: 'start', state: before.schedule.state });
    expect(Date.parse(s.updated_at!)).toBeGreaterThan(Date.parse(before.schedule.updated_at!));
  });

  it('PATCH errors: 422 for state ("does not accept state"), for a field or value it does not take; 404 for an unknown id; all with the error body', async () => {
    for (const body of [{ schedule: { state: 'disabled' } }, { schedule: { action_type: 'restart' } }, { schedule: { name: 'n'.repeat(256) } }, { schedule: { start_transcoder: '2026-12-01T18:30:00Z' } }, { name: 'no wrapper' }]) {
      const res = await call('PATCH', '/schedules/a1', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(conforms(res.json, ERROR)).toEqual([]);
    }
    const missing = await call('PATCH', '/schedules/nope', { schedule: { name: 'x' } });
    expect(missing.status).toBe(404);
    expect(conforms(missing.json, ERROR)).toEqual([]);
  });

  it('DELETE /schedules/{id} -> 204, no content; afterwards GET is 404', async () => {
    const res = await call('DELETE', '/schedules/del');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await call('GET', '/schedules/del')).status).toBe(404);
  });
});

describe('beyond the reference, as shared/wowza-api.md describes the service', () => {
  it('GET /schedules lists limited details per item: no action, recurrence or times', async () => {
    const res = await call('GET', '/schedules');
    expect(res.status).toBe(200);
    expect(conforms(res.json, LIST)).toEqual([]);
  });

  it('a bad token is 401 with the error body of section 7', async () => {
    const res = await call('GET', '/schedules', undefined, 'wrong');
    expect(res.status).toBe(401);
    expect(conforms(res.json, ERROR)).toEqual([]);
  });

  it('429 carries Retry-After and the error body', async () => {
    api.rateLimit(1, 2);
    const res = await fetch(`${api.url}/schedules`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(conforms(await res.json(), ERROR)).toEqual([]);
  });

  it('pages with page/per_page and a pagination object when asked to', async () => {
    const paged = await startVideoSimulator({ token: TOKEN, pageSize: 2, schedules: ['p1', 'p2', 'p3'].map((id) => videoSchedule(id)) });
    try {
      const first = (await (await fetch(`${paged.url}/schedules?page=1&per_page=2`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { schedules: unknown[]; pagination: unknown };
      expect(first.schedules).toHaveLength(2);
      expect(first.pagination).toEqual({ page: 1, per_page: 2, total_pages: 2, total_records: 3 });
    } finally {
      await paged.close();
    }
  });
});

describe('the transcription itself', () => {
  it('has the fields of the reference schedule table and its endpoint rows', () => {
    if (!existsSync(REFERENCE)) {
      console.warn(`SKIPPED: ${REFERENCE} is not here, so the transcription was not compared with it (CI has it)`);
      return;
    }
    const text = readFileSync(REFERENCE, 'utf8');
    const fields = [...text.slice(text.indexOf('| Field |'), text.indexOf('Fields of resources other')).matchAll(/^\| (\w+) \|/gm)].map((m) => m[1]).filter((f) => f !== 'Field');
    expect(fields.sort()).toEqual(Object.keys(SCHEDULE).sort());
    const rows = [...text.matchAll(/^\| (GET|PATCH|DELETE) \| `([^`]+)` \|/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect(rows).toEqual(['GET /schedules/{id}', 'PATCH /schedules/{id}', 'DELETE /schedules/{id}']);
    for (const [field, values] of Object.entries(ENUMS)) for (const v of values) expect(text, `${field} ${v}`).toContain(`\`${v}\``);
  });
});
