import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVideoSimulator, videoSchedule, type VideoSimulator } from '@wowza-exporter/simulator/video';
import { problems, type Shape } from './shape.js';

/**
 * Conformance of the Wowza Video simulator with the schedules reference (test/fixtures/reference/
 * wowza-video-schedules-v1.11.md): a table transcribed here from the reference (the schedule object of section 2,
 * the rows of section 4 with their statuses and wrappers, the PATCH error statuses, the error body of section 7)
 * is walked, and every answer of the simulator is checked against it. Rows the reference does not have (the
 * list, 429, pagination) come from docs/wowza-api-notes.md and say so in `source`. Transcribed from the documents,
 * not from src/video/; the last block compares the transcription with the reference text itself.
 */

const REFERENCE = fileURLToPath(new URL('../fixtures/reference/wowza-video-schedules-v1.11.md', import.meta.url));
const TOKEN = 'conformance-token';
const READ_ONLY = 'conformance-read-only';

/** Section 2: "responses use ISO 8601 with Z" (times), "responses use ISO 8601 date-time" (repeat days). */
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const TIME_FIELDS = ['start_transcoder', 'stop_transcoder', 'start_repeat', 'end_repeat', 'created_at', 'updated_at'];

/** Section 2, the schedule table: every field a string; times and repeat days may be absent from a schedule that does not use them. */
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
/** Section 2, the values of the enumerated fields. */
const ENUMS: Record<string, readonly string[]> = {
  state: ['enabled', 'disabled', 'expired'],
  action_type: ['start', 'stop', 'start_stop'],
  recurrence_type: ['once', 'recur'],
};
/** Section 2: "Schedule object, wrapped in a key `schedule`"; section 4: "body `{schedule}`". */
const ENVELOPE: Shape = { schedule: { object: SCHEDULE, open: false } };
/** Section 7: "required `meta`, containing `status` (integer), `code`, `title`, `message`, `description` (string), `links` (array)". */
const ERROR: Shape = { meta: { object: { status: 'int', code: 'string', title: 'string', message: 'string', description: 'string', links: { array: 'any' } }, open: false } };
/** wowza-api.md: `{"schedules":[...]}`, limited details per item: `id`, `name`, `state`, `transcoder_id`, `created_at`, `updated_at`. */
const SUMMARY: Shape = { id: 'string', name: 'string', state: 'string', transcoder_id: 'string', created_at: 'string', updated_at: 'string' };
const LIST: Shape = { schedules: { array: { object: SUMMARY, open: false } } };
/** wowza-api.md: pagination with `page`, `per_page` (likely, not certain); the totals are the service's other lists'. */
const PAGED_LIST: Shape = { ...LIST, pagination: { object: { page: 'int', per_page: 'int', total_pages: 'int', total_records: 'int' } } };

interface Row {
  method: 'GET' | 'PATCH' | 'DELETE';
  path: string;
  /** Concrete path below the base. */
  example: string;
  body?: unknown;
  status: number;
  /** Body shape of the answer; 'none' for no content. */
  answer: Shape | 'none';
  source: string;
}

/** Section 4, every row, and the list (not in the reference). Run in this order: DELETE last. */
const ROWS: Row[] = [
  { method: 'GET', path: '/schedules/{id}', example: '/schedules/a1', status: 200, answer: ENVELOPE, source: 'reference, section 4' },
  { method: 'GET', path: '/schedules/{id}', example: '/schedules/r1', status: 200, answer: ENVELOPE, source: 'reference, section 4' },
  {
    method: 'PATCH',
    path: '/schedules/{id}',
    example: '/schedules/a1',
    // "JSON body with required object `schedule`; optional members action_type, name, end_repeat, recurrence_data, start_repeat, start_transcoder, stop_transcoder".
    body: { schedule: { action_type: 'start', name: 'Renamed', end_repeat: '2026-12-28', recurrence_data: 'monday', start_repeat: '2026-01-05', start_transcoder: '2026-12-01 18:30:00', stop_transcoder: '2026-12-01 19:30:00' } },
    status: 200,
    answer: ENVELOPE,
    source: 'reference, section 4',
  },
  { method: 'DELETE', path: '/schedules/{id}', example: '/schedules/del', status: 204, answer: 'none', source: 'reference, section 4' },
  { method: 'GET', path: '/schedules', example: '/schedules', status: 200, answer: LIST, source: 'docs/wowza-api-notes.md (the reference has no list)' },
];

/**
 * Section 4: "Error statuses documented for PATCH: 401, 403, 404, 410, 422", each with the body of section 7.
 * How each is reached is the simulator's choice (the reference does not say what they mean).
 */
const PATCH_ERRORS: Array<{ status: number; example: string; body: unknown; token?: string; why: string }> = [
  { status: 401, example: '/schedules/a1', body: { schedule: { name: 'x' } }, token: 'wrong', why: 'a bad token' },
  { status: 403, example: '/schedules/a1', body: { schedule: { name: 'x' } }, token: READ_ONLY, why: 'a read-only token' },
  { status: 404, example: '/schedules/nope', body: { schedule: { name: 'x' } }, why: 'an unknown id' },
  { status: 410, example: '/schedules/gone', body: { schedule: { name: 'x' } }, why: 'a deleted schedule' },
  { status: 422, example: '/schedules/a1', body: { schedule: { state: 'disabled' } }, why: '"does not accept state in its body" (section 3)' },
  { status: 422, example: '/schedules/a1', body: { schedule: { action_type: 'restart' } }, why: 'an action_type section 2 does not list' },
  { status: 422, example: '/schedules/a1', body: { schedule: { name: 'n'.repeat(256) } }, why: 'a name over 255 characters (section 8)' },
  { status: 422, example: '/schedules/a1', body: { schedule: { start_transcoder: '2026-12-01T18:30:00Z' } }, why: 'a time not as YYYY-MM-DD HH:MM:SS' },
  { status: 422, example: '/schedules/a1', body: { schedule: { recurrence_data: 'Monday' } }, why: 'weekdays not lowercase' },
  { status: 422, example: '/schedules/a1', body: { name: 'no wrapper' }, why: 'no required object schedule' },
];

let api: VideoSimulator;
async function call(method: string, path: string, body?: unknown, token = TOKEN, base = api.url) {
  const res = await fetch(base + path, {
    method,
    headers: { accept: 'application/json', authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as unknown) : undefined };
}
const conforms = (json: unknown, shape: Shape) => problems(json, { object: shape });

/** Every schedule object (detail or list item) of an answer. */
function schedulesIn(json: unknown): Array<Record<string, unknown>> {
  const o = json as { schedule?: Record<string, unknown>; schedules?: Array<Record<string, unknown>> };
  return o.schedule ? [o.schedule] : (o.schedules ?? []);
}
/** Enumerated values outside section 2's lists, and times not in the response format. */
function valueProblems(json: unknown): string[] {
  return schedulesIn(json).flatMap((s) => [
    ...Object.entries(ENUMS)
      .filter(([f, values]) => f in s && !values.includes(String(s[f])))
      .map(([f]) => `${String(s.id)}.${f}: ${String(s[f])}`),
    ...TIME_FIELDS.filter((f) => f in s && s[f] !== null && !ISO.test(String(s[f]))).map((f) => `${String(s.id)}.${f}: ${String(s[f])}`),
  ]);
}

beforeAll(async () => {
  api = await startVideoSimulator({
    token: TOKEN,
    readOnlyToken: READ_ONLY,
    schedules: [
      videoSchedule('a1'),
      videoSchedule('r1', { recurrence_type: 'recur', recurrence_data: 'monday,friday', start_repeat: '2026-01-05T00:00:00Z', end_repeat: '2026-12-28T00:00:00Z', action_type: 'start', stop_transcoder: null }),
      videoSchedule('x1', { state: 'expired', action_type: 'stop', start_transcoder: null }),
      videoSchedule('del'),
      videoSchedule('gone'),
    ],
  });
  expect((await call('DELETE', '/schedules/gone')).status).toBe(204);
});
afterAll(() => api.close());

describe('every row of the table: status, wrapper, fields, values', () => {
  for (const row of ROWS) {
    it(`${row.method} ${row.example} (${row.path}, ${row.source}) -> ${row.status}`, async () => {
      const res = await call(row.method, row.example, row.body);
      expect(res.status).toBe(row.status);
      if (row.answer === 'none') {
        expect(res.text).toBe('');
        return;
      }
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(conforms(res.json, row.answer)).toEqual([]);
      expect(valueProblems(res.json)).toEqual([]);
    });
  }

  it('PATCH changes what it was given, leaves state alone, and moves updated_at forward; requested times come back in ISO 8601', async () => {
    const before = (await call('GET', '/schedules/r1')).json as { schedule: Record<string, string> };
    const res = await call('PATCH', '/schedules/r1', { schedule: { start_transcoder: '2026-12-01 18:30:00', end_repeat: '2027-01-31' } });
    const s = (res.json as { schedule: Record<string, string> }).schedule;
    expect(s).toMatchObject({ start_transcoder: '2026-12-01T18:30:00Z', end_repeat: '2027-01-31T00:00:00Z', state: before.schedule.state, name: before.schedule.name });
    expect(Date.parse(s.updated_at!)).toBeGreaterThan(Date.parse(before.schedule.updated_at!));
  });

  it('the list gives limited details: no item carries action, recurrence or times', async () => {
    const res = await call('GET', '/schedules');
    for (const s of schedulesIn(res.json)) expect(Object.keys(s).sort()).toEqual(Object.keys(SUMMARY).sort());
  });

  it('after DELETE the schedule is gone from the list and GET is 404 with the error body', async () => {
    expect(schedulesIn((await call('GET', '/schedules')).json).map((s) => s.id)).not.toContain('del');
    const res = await call('GET', '/schedules/del');
    expect(res.status).toBe(404);
    expect(conforms(res.json, ERROR)).toEqual([]);
  });
});

describe('section 4, every error status documented for PATCH, with the body of section 7', () => {
  for (const e of PATCH_ERRORS) {
    it(`${e.status}: ${e.why}`, async () => {
      const res = await call('PATCH', e.example, e.body, e.token);
      expect(res.status).toBe(e.status);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(conforms(res.json, ERROR)).toEqual([]);
      expect((res.json as { meta: { status: number } }).meta.status).toBe(e.status);
    });
  }

  it('a read-only token still reads', async () => {
    expect((await call('GET', '/schedules/a1', undefined, READ_ONLY)).status).toBe(200);
    expect((await call('DELETE', '/schedules/a1', undefined, READ_ONLY)).status).toBe(403);
  });
});

describe('beyond the reference (docs/wowza-api-notes.md), and the simulator levers', () => {
  it('a bad token on any row is 401 with the error body', async () => {
    for (const row of ROWS) {
      const res = await call(row.method, row.example, row.body, 'wrong');
      expect(res.status, `${row.method} ${row.example}`).toBe(401);
      expect(conforms(res.json, ERROR)).toEqual([]);
    }
  });

  it('429 carries Retry-After and the error body; without a header when asked', async () => {
    api.faults.rateLimit(1, 2);
    const res = await call('GET', '/schedules');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(conforms(res.json, ERROR)).toEqual([]);
    api.faults.rateLimit(1, null);
    const bare = await call('GET', '/schedules/a1');
    expect(bare.status).toBe(429);
    expect(bare.headers.get('retry-after')).toBeNull();
    expect((await call('GET', '/schedules/a1')).status).toBe(200);
  });

  it('pages with page/per_page and a pagination object when asked to', async () => {
    const paged = await startVideoSimulator({ token: TOKEN, pageSize: 2, schedules: ['p1', 'p2', 'p3'].map((id) => videoSchedule(id)) });
    try {
      const first = await call('GET', '/schedules?page=1&per_page=2', undefined, TOKEN, paged.url);
      expect(conforms(first.json, PAGED_LIST)).toEqual([]);
      expect((first.json as { pagination: unknown }).pagination).toEqual({ page: 1, per_page: 2, total_pages: 2, total_records: 3 });
      const second = await call('GET', '/schedules?page=2&per_page=2', undefined, TOKEN, paged.url);
      expect(schedulesIn(second.json).map((s) => s.id)).toEqual(['p3']);
    } finally {
      await paged.close();
    }
  });

  it('an injected unknown value keeps the reference shape (a string) with a value section 2 does not list, in the list and in {schedule} answers', async () => {
    api.faults.unknownValue({ id: 'a1', field: 'state', value: 'paused' });
    api.faults.unknownValue({ id: 'a1', field: 'action_type', value: 'restart' });
    try {
      const list = await call('GET', '/schedules');
      expect(conforms(list.json, LIST)).toEqual([]);
      expect(valueProblems(list.json)).toEqual(['a1.state: paused']);
      const one = await call('GET', '/schedules/a1');
      expect(conforms(one.json, ENVELOPE)).toEqual([]);
      expect(valueProblems(one.json)).toEqual(['a1.state: paused', 'a1.action_type: restart']);
      const patched = await call('PATCH', '/schedules/a1', { schedule: { name: 'Again' } });
      expect(patched.status).toBe(200);
      expect(valueProblems(patched.json)).toEqual(['a1.state: paused', 'a1.action_type: restart']);
    } finally {
      api.faults.clear();
    }
    expect(valueProblems((await call('GET', '/schedules/a1')).json)).toEqual([]);
  });
});

describe('the transcription itself, against the reference text', () => {
  const text = existsSync(REFERENCE) ? readFileSync(REFERENCE, 'utf8') : undefined;
  const skipped = () => {
    if (text === undefined) console.warn(`SKIPPED: ${REFERENCE} is not here, so the transcription was not compared with it (CI has it)`);
    return text === undefined;
  };
  /** The rows of section 2's table: field -> rules column. */
  const fieldRows = () => new Map([...text!.slice(text!.indexOf('| Field |'), text!.indexOf('Fields of resources other')).matchAll(/^\| (\w+) \| [^|]+ \| ([^\n]+) \|$/gm)].filter((m) => m[1] !== 'Field').map((m) => [m[1]!, m[2]!]));

  it('section 2: the fields, and the values of each enumerated field', () => {
    if (skipped()) return;
    const rows = fieldRows();
    expect([...rows.keys()].sort()).toEqual(Object.keys(SCHEDULE).sort());
    for (const [field, values] of Object.entries(ENUMS)) {
      // The values are the backticked words before the first ";" of the rules (then come defaults and notes).
      const listed = [...rows.get(field)!.split(';')[0]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
      expect(listed, field).toEqual(values);
    }
  });

  it('section 4: the endpoint rows with their success statuses and wrappers, and the PATCH error statuses', () => {
    if (skipped()) return;
    const rows = [...text!.matchAll(/^\| (GET|PATCH|DELETE) \| `([^`]+)` \| [^|]+ \| (\d{3})(?:, body `\{(\w+)\}`)?[^|]* \|$/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]} ${m[4] ?? 'none'}`);
    const ours = ROWS.filter((r) => r.source.startsWith('reference')).map((r) => `${r.method} ${r.path} ${r.status} ${r.answer === 'none' ? 'none' : Object.keys(r.answer)[0]}`);
    expect(rows).toEqual([...new Set(ours)]);
    const errors = /Error statuses documented for PATCH: ([\d, ]+)\./.exec(text!)?.[1]?.split(',').map((s) => Number(s.trim()));
    expect(errors).toEqual([...new Set(PATCH_ERRORS.map((e) => e.status))]);
    const members = /optional members ([^|]+)\|/.exec(text!)?.[1];
    const patchable = [...(members ?? '').matchAll(/`(\w+)`/g)].map((m) => m[1]).sort();
    expect(patchable).toEqual(Object.keys((ROWS.find((r) => r.method === 'PATCH')!.body as { schedule: object }).schedule).sort());
  });

  it('section 7: the error body members and their types', () => {
    if (skipped()) return;
    const sentence = /An error body is a JSON object with required `meta`, containing ([^\n]+)/.exec(text!)?.[1] ?? '';
    const members: Record<string, string> = Object.fromEntries([...sentence.matchAll(/`(\w+)` \((\w+)\)/g)].map((m) => [m[1]!, m[2]!]));
    expect(Object.keys(members).length).toBeGreaterThan(0);
    const inner = (ERROR.meta as { object: Shape }).object;
    expect(Object.keys(inner)).toEqual(Object.keys(members));
    const asShape: Record<string, string> = { integer: 'int', string: 'string' };
    for (const [name, type] of Object.entries(members)) {
      if (type === 'array') expect(inner[name], name).toEqual({ array: 'any' });
      else expect(inner[name], name).toBe(asShape[type]);
    }
  });
});
