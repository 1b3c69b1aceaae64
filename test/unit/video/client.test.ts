import { inspect } from 'node:util';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/errors.js';
import { VideoClient, type VideoClientOptions } from '../../../src/video/client.js';
import {
  VideoHttpError,
  VideoInputError,
  VideoNetworkError,
  VideoRateLimitError,
  VideoTimeoutError,
  VideoTooLargeError,
  VideoUnparsableError,
} from '../../../src/video/errors.js';
import { parseRetryAfter } from '../../../src/video/retry-after.js';

const ORIGIN = 'https://api.video.test';
const BASE = `${ORIGIN}/api/v1.11`;
const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0ZXN0In0.s3cr3t-SIGNATURE_value';

function schedule(over: Record<string, unknown> = {}) {
  return {
    id: 'abc123',
    name: 'Morning show',
    state: 'enabled',
    transcoder_id: 'tx1',
    transcoder_name: 'Studio camera',
    action_type: 'start_stop',
    recurrence_type: 'once',
    start_transcoder: '2030-01-01T09:00:00.000Z',
    stop_transcoder: '2030-01-01T10:00:00.000Z',
    created_at: '2029-12-01T08:00:00.000Z',
    updated_at: '2029-12-02T08:00:00.000Z',
    ...over,
  };
}

const meta = (status: number, code: string, title: string, message: string, description = '') => ({
  meta: { status, code, title, message, description, links: [] },
});

/** The error envelopes the API reference documents for the schedule calls. */
const DOCUMENTED = [
  [401, meta(401, 'ERR-401-InvalidToken', 'Invalid Token Error', 'Invalid token.')],
  [403, meta(403, 'ERR-403-RecordUnaccessible', 'Record Unaccessible Error', "The requested resource isn't accessible.")],
  [404, meta(404, 'ERR-404-RecordNotFound', 'Record Not Found Error', "The requested resource couldn't be found.")],
  [410, meta(410, 'ERR-410-RecordDeleted', 'Record Deleted Error', 'The requested resource has been deleted.')],
  [422, meta(422, 'ERR-422-RecordInvalid', 'Record Invalid Error', "The request couldn't be processed. Name can't be blank")],
] as const;

let sleeps: number[] = [];

function client(over: Partial<VideoClientOptions> = {}): VideoClient {
  return new VideoClient({
    url: BASE,
    token: TOKEN,
    timeoutMs: 2000,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    now: () => Date.parse('2025-01-01T00:00:00Z'),
    ...over,
  });
}

const api = () => nock(ORIGIN, { reqheaders: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' } });

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the call to fail');
}

function expectNoToken(err: unknown): void {
  const text = `${(err as Error).message} ${(err as Error).stack ?? ''} ${JSON.stringify(err)} ${inspect(err, { depth: 5 })}`;
  expect(text).not.toContain(TOKEN);
  expect(text).not.toContain('s3cr3t');
}

beforeAll(() => nock.disableNetConnect());
afterEach(() => {
  sleeps = [];
  nock.cleanAll();
});
afterAll(() => nock.enableNetConnect());

describe('successful calls', () => {
  it('GET /schedules lists schedules with the bearer token, keeping unknown fields', async () => {
    const scope = api()
      .get('/api/v1.11/schedules')
      .query({ page: '1', per_page: '1000' })
      .reply(200, { schedules: [schedule({ begins_at: '2030-01-01T00:00:00.000Z' }), schedule({ id: 'def456', recurrence_type: 'recur', recurrence_data: 'monday,friday' })] });
    const list = await client().listSchedules();
    expect(list.map((s) => s.id)).toEqual(['abc123', 'def456']);
    expect(list[0]).toMatchObject({ name: 'Morning show', begins_at: '2030-01-01T00:00:00.000Z' });
    expect(scope.isDone()).toBe(true);
  });

  it('GET /schedules/{id} returns the schedule', async () => {
    api().get('/api/v1.11/schedules/abc123').reply(200, { schedule: schedule() });
    await expect(client().getSchedule('abc123')).resolves.toMatchObject({ id: 'abc123', state: 'enabled' });
  });

  it('PATCH sends {"schedule":{...}} in the request format and returns the updated schedule', async () => {
    let sent: unknown;
    api()
      .patch('/api/v1.11/schedules/abc123', (body) => {
        sent = body;
        return true;
      })
      .matchHeader('content-type', 'application/json')
      .reply(200, { schedule: schedule({ name: 'Evening show' }) });
    const updated = await client().updateSchedule('abc123', {
      name: 'Evening show',
      start_transcoder: '2030-02-01T18:00:00Z',
      stop_transcoder: '2030-02-01 19:30:00',
      recurrence_data: 'Monday, FRIDAY,monday',
      end_repeat: '2030-03-01',
    });
    expect(updated.name).toBe('Evening show');
    expect(sent).toEqual({
      schedule: {
        name: 'Evening show',
        start_transcoder: '2030-02-01 18:00:00',
        stop_transcoder: '2030-02-01 19:30:00',
        recurrence_data: 'monday,friday',
        end_repeat: '2030-03-01',
      },
    });
  });

  it('DELETE answers 204 and resolves', async () => {
    const scope = api().delete('/api/v1.11/schedules/abc123').reply(204);
    await expect(client().deleteSchedule('abc123')).resolves.toBeUndefined();
    expect(scope.isDone()).toBe(true);
  });

  it('encodes the id into one path segment', async () => {
    api().get('/api/v1.11/schedules/a%2F..%2Fb').reply(200, { schedule: schedule({ id: 'a/../b' }) });
    await expect(client().getSchedule('a/../b')).resolves.toMatchObject({ id: 'a/../b' });
  });

  it('reports each request to the observer with its endpoint template', async () => {
    api().get('/api/v1.11/schedules/abc123').reply(404, DOCUMENTED[2][1]);
    const seen: string[] = [];
    await failure(client({ onRequest: (endpoint, code) => seen.push(`${endpoint} ${code}`) }).getSchedule('abc123'));
    expect(seen).toEqual(['/schedules/{id} 404']);
  });
});

describe('PATCH never carries state', () => {
  it('refuses a patch with state before sending anything', async () => {
    const scope = api().patch('/api/v1.11/schedules/abc123').reply(200, { schedule: schedule() });
    const err = await failure(client().updateSchedule('abc123', { name: 'x', state: 'disabled' } as never));
    expect(err).toBeInstanceOf(VideoInputError);
    expect(err.message).toContain('state: cannot be changed');
    expect(scope.isDone()).toBe(false);
  });

  it('refuses unknown fields, bad enums, long names and bad dates, naming each', async () => {
    const scope = api().patch('/api/v1.11/schedules/abc123').reply(200, { schedule: schedule() });
    const err = (await failure(
      client().updateSchedule('abc123', {
        name: 'x'.repeat(256),
        action_type: 'restart',
        start_transcoder: '2030-02-30 10:00:00',
        start_repeat: '01/02/2030',
        transcoder_id: 'other',
      } as never),
    )) as VideoInputError;
    expect(err).toBeInstanceOf(VideoInputError);
    expect(err.issues.map((i) => i.field).sort()).toEqual(['action_type', 'name', 'start_repeat', 'start_transcoder', 'transcoder_id']);
    expect(err.message).toContain('name: must be at most 255 characters');
    expect(err.message).toContain('action_type: expected one of start, stop, start_stop');
    expect(scope.isDone()).toBe(false);
  });

  it('accepts a name of exactly 255 characters, counted as characters not UTF-16 units', async () => {
    let sent: { schedule: { name: string } } | undefined;
    api()
      .patch('/api/v1.11/schedules/abc123', (b) => ((sent = b), true))
      .reply(200, { schedule: schedule() });
    await client().updateSchedule('abc123', { name: '🎥'.repeat(255) });
    expect([...sent!.schedule.name]).toHaveLength(255);
  });

  it('refuses an empty patch and an end before the start', async () => {
    await expect(client().updateSchedule('abc123', {})).rejects.toThrow(/nothing to update/);
    await expect(client().updateSchedule('abc123', { start_repeat: '2030-03-02', end_repeat: '2030-03-01' })).rejects.toThrow(
      /end_repeat: must not be before start_repeat/,
    );
  });
});

describe('documented errors become one clear message', () => {
  for (const [status, body] of DOCUMENTED) {
    it(`HTTP ${status} on PATCH`, async () => {
      api().patch('/api/v1.11/schedules/abc123').reply(status, body);
      const err = await failure(client().updateSchedule('abc123', { name: 'New' }));
      expect(err).toBeInstanceOf(VideoHttpError);
      expect((err as VideoHttpError).status).toBe(status);
      expect((err as VideoHttpError).meta.code).toBe(body.meta.code);
      expect(err.message).toContain(`PATCH /schedules/abc123: HTTP ${status} ${body.meta.code} (${body.meta.title}): ${body.meta.message}`);
      expectNoToken(err);
    });
  }

  it('adds what to check for 401 and 410', async () => {
    api().get('/api/v1.11/schedules/abc123').reply(401, DOCUMENTED[0][1]);
    expect((await failure(client().getSchedule('abc123'))).message).toMatch(/token was refused/);
    api().delete('/api/v1.11/schedules/abc123').reply(410, DOCUMENTED[3][1]);
    expect((await failure(client().deleteSchedule('abc123'))).message).toMatch(/has been deleted/);
  });

  it('the exact message for a 404 on GET', async () => {
    api().get('/api/v1.11/schedules/nope').reply(404, DOCUMENTED[2][1]);
    expect((await failure(client().getSchedule('nope'))).message).toBe(
      "GET /schedules/nope: HTTP 404 ERR-404-RecordNotFound (Record Not Found Error): The requested resource couldn't be found.",
    );
  });

  it('includes a description that differs from the message, and accepts status as a string', async () => {
    api()
      .get('/api/v1.11/schedules/abc123')
      .reply(422, { meta: { status: '422', code: 'ERR-422-X', title: 'T', message: 'M', description: 'More detail', links: [] } });
    const err = (await failure(client().getSchedule('abc123'))) as VideoHttpError;
    expect(err.message).toBe('GET /schedules/abc123: HTTP 422 ERR-422-X (T): M - More detail');
    expect(err.meta.status).toBe(422);
  });

  it('non-JSON error bodies (an HTML proxy page) become a short excerpt', async () => {
    api()
      .get('/api/v1.11/schedules')
      .query(true)
      .reply(502, '<html><head><style>b{}</style></head><body><h1>502 Bad Gateway</h1>\n<p>nginx</p></body></html>', { 'content-type': 'text/html' });
    const err = await failure(client().listSchedules());
    expect(err).toBeInstanceOf(VideoHttpError);
    expect(err.message).toBe('GET /schedules: HTTP 502: 502 Bad Gateway nginx');
  });

  it('never puts the token in a message, even when the server echoes it', async () => {
    api()
      .get('/api/v1.11/schedules/abc123')
      .reply(401, { meta: { status: 401, code: 'ERR-401', title: 'Bad', message: `token ${TOKEN} is invalid`, description: `Authorization: Bearer ${TOKEN}` } });
    const err = await failure(client().getSchedule('abc123'));
    expect(err.message).toContain('[REDACTED]');
    expectNoToken(err);

    api().get('/api/v1.11/schedules/abc123').reply(500, `upstream said: Bearer ${TOKEN}`);
    expectNoToken(await failure(client().getSchedule('abc123')));

    // Nothing is intercepted for this host: a network failure.
    const offline = new VideoClient({ url: 'https://unreachable.video.test/api/v1.11', token: TOKEN });
    const net = await failure(offline.listSchedules());
    expect(net).toBeInstanceOf(VideoNetworkError);
    expect(net.message).toMatch(/^GET \/schedules: cannot reach https:\/\/unreachable\.video\.test: /);
    expectNoToken(net);
  });

  it('the client itself does not show the token when logged or serialised', () => {
    const c = client();
    expect(`${JSON.stringify(c)} ${inspect(c, { depth: 5, showHidden: true })}`).not.toContain('s3cr3t');
  });
});

describe('HTTP 429', () => {
  const limited = meta(429, 'ERR-429-TooManyRequests', 'Too Many Requests', 'Rate limit exceeded.');

  it('waits as Retry-After (seconds) asks, then succeeds', async () => {
    api()
      .get('/api/v1.11/schedules/abc123')
      .reply(429, limited, { 'Retry-After': '2' })
      .get('/api/v1.11/schedules/abc123')
      .reply(200, { schedule: schedule() });
    await expect(client().getSchedule('abc123')).resolves.toMatchObject({ id: 'abc123' });
    expect(sleeps).toEqual([2000]);
  });

  it('waits until a Retry-After HTTP date, then succeeds', async () => {
    api()
      .patch('/api/v1.11/schedules/abc123')
      .reply(429, limited, { 'Retry-After': 'Wed, 01 Jan 2025 00:00:05 GMT' })
      .patch('/api/v1.11/schedules/abc123')
      .reply(200, { schedule: schedule() });
    await client().updateSchedule('abc123', { name: 'x' });
    expect(sleeps).toEqual([5000]);
  });

  it('backs off 1 s, 2 s, 4 s without Retry-After', async () => {
    const scope = api().get('/api/v1.11/schedules/abc123').times(3).reply(429, limited).get('/api/v1.11/schedules/abc123').reply(200, { schedule: schedule() });
    await client().getSchedule('abc123');
    expect(sleeps).toEqual([1000, 2000, 4000]);
    expect(scope.isDone()).toBe(true);
  });

  it('gives up after the allowed retries with a clear error', async () => {
    const scope = api().get('/api/v1.11/schedules/abc123').times(3).reply(429, limited, { 'Retry-After': '1' });
    const err = await failure(client({ maxRetries: 2 }).getSchedule('abc123'));
    expect(err).toBeInstanceOf(VideoRateLimitError);
    expect(err.message).toBe(
      'GET /schedules/abc123: HTTP 429 ERR-429-TooManyRequests (Too Many Requests): Rate limit exceeded.; rate limited by Wowza Video: still HTTP 429 after 2 retries',
    );
    expect(sleeps).toEqual([1000, 1000]);
    expect(scope.isDone()).toBe(true);
  });

  it('fails at once when asked to wait longer than allowed', async () => {
    api().get('/api/v1.11/schedules/abc123').reply(429, 'slow down', { 'Retry-After': '3600' });
    const err = await failure(client({ maxRetryDelayMs: 30_000 }).getSchedule('abc123'));
    expect(err.message).toContain('asked to wait 3600 s, longer than the 30 s this client waits');
    expect(sleeps).toEqual([]);
  });

  it('every later call of the client waits out the Retry-After too, before sending', async () => {
    const scope = api()
      .get('/api/v1.11/schedules/a')
      .reply(429, limited, { 'Retry-After': '5' })
      .get('/api/v1.11/schedules/b')
      .reply(200, { schedule: schedule({ id: 'b' }) });
    const c = client({ maxRetries: 0 });
    expect(await failure(c.getSchedule('a'))).toBeInstanceOf(VideoRateLimitError);
    expect(sleeps).toEqual([]);
    await expect(c.getSchedule('b')).resolves.toMatchObject({ id: 'b' });
    // The clock of client() stands still: the whole wait is still ahead.
    expect(sleeps).toEqual([5000]);
    expect(scope.isDone()).toBe(true);
  });

  it('a call while a longer wait than allowed is pending fails without sending', async () => {
    api().get('/api/v1.11/schedules/a').reply(429, limited, { 'Retry-After': '600' });
    const c = client({ maxRetryDelayMs: 30_000 });
    expect((await failure(c.getSchedule('a'))).message).toContain('asked to wait 600 s');
    const err = await failure(c.getSchedule('b'));
    expect(err).toBeInstanceOf(VideoRateLimitError);
    expect(err.message).toBe('GET /schedules/b: HTTP 429; rate limited by Wowza Video: not sent: the API asked (Retry-After) not to be called before 2025-01-01T00:10:00.000Z');
    expect(nock.pendingMocks()).toEqual([]);
  });

  it('really sleeps with the default timer', async () => {
    api().get('/api/v1.11/schedules/abc123').reply(429, limited, { 'Retry-After': '0' }).get('/api/v1.11/schedules/abc123').reply(200, { schedule: schedule() });
    await expect(new VideoClient({ url: BASE, token: TOKEN }).getSchedule('abc123')).resolves.toMatchObject({ id: 'abc123' });
  });

  it('parses Retry-After forms', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe('pagination', () => {
  const many = (from: number, n: number) => Array.from({ length: n }, (_, i) => schedule({ id: `s${from + i}` }));

  it('follows pages while the response shows more', async () => {
    const scope = api()
      .get('/api/v1.11/schedules')
      .query({ page: '1', per_page: '2' })
      .reply(200, { schedules: many(1, 2), pagination: { page: 1, per_page: 2, total_pages: 3, total_records: 5 } })
      .get('/api/v1.11/schedules')
      .query({ page: '2', per_page: '2' })
      .reply(200, { schedules: many(3, 2), pagination: { page: 2, per_page: 2, total_pages: 3, total_records: 5 } })
      .get('/api/v1.11/schedules')
      .query({ page: '3', per_page: '2' })
      .reply(200, { schedules: many(5, 1), pagination: { page: 3, per_page: 2, total_pages: 3, total_records: 5 } });
    const list = await client({ perPage: 2 }).listSchedules();
    expect(list.map((s) => s.id)).toEqual(['s1', 's2', 's3', 's4', 's5']);
    expect(scope.isDone()).toBe(true);
  });

  it('stops after one page when the response has no pagination object', async () => {
    api().get('/api/v1.11/schedules').query(true).reply(200, { schedules: many(1, 2) });
    expect(await client({ perPage: 2 }).listSchedules()).toHaveLength(2);
  });

  it('stops on a short page even without totals', async () => {
    api()
      .get('/api/v1.11/schedules')
      .query({ page: '1', per_page: '2' })
      .reply(200, { schedules: many(1, 2), pagination: { page: '1', per_page: '2' } })
      .get('/api/v1.11/schedules')
      .query({ page: '2', per_page: '2' })
      .reply(200, { schedules: many(3, 1), pagination: { page: 2, per_page: 2 } });
    expect(await client({ perPage: 2 }).listSchedules()).toHaveLength(3);
  });

  it('stops on an empty page', async () => {
    api()
      .get('/api/v1.11/schedules')
      .query({ page: '1', per_page: '2' })
      .reply(200, { schedules: many(1, 2), pagination: { page: 1, per_page: 2 } })
      .get('/api/v1.11/schedules')
      .query({ page: '2', per_page: '2' })
      .reply(200, { schedules: [], pagination: { page: 2, per_page: 2 } });
    expect(await client({ perPage: 2 }).listSchedules()).toHaveLength(2);
  });

  it('stops when a server ignores page and repeats the first page', async () => {
    const scope = api()
      .get('/api/v1.11/schedules')
      .query(true)
      .times(2)
      .reply(200, { schedules: many(1, 2), pagination: { per_page: 2 } });
    expect((await client({ perPage: 2 }).listSchedules()).map((s) => s.id)).toEqual(['s1', 's2']);
    expect(scope.isDone()).toBe(true);
  });

  it('says why a list looks truncated: full without pagination, fewer than the pagination counts, or pages missing', async () => {
    api().get('/api/v1.11/schedules').query(true).reply(200, { schedules: many(1, 2) });
    expect((await client({ perPage: 2 }).listSchedulePages()).truncated).toBe('the list came back exactly full (2, per_page 2) without pagination');
    api().get('/api/v1.11/schedules').query(true).reply(200, { schedules: many(1, 1) });
    expect((await client({ perPage: 2 }).listSchedulePages()).truncated).toBeUndefined();
    // A server that ignores `page`: the walk stops on the repeat, short of the count.
    api().get('/api/v1.11/schedules').query(true).times(2).reply(200, { schedules: many(1, 2), pagination: { per_page: 2, total_records: 5 } });
    expect((await client({ perPage: 2 }).listSchedulePages()).truncated).toBe('2 schedules read, the pagination counts 5');
    api().get('/api/v1.11/schedules').query(true).reply(200, { schedules: many(1, 1), pagination: { page: 1, per_page: 2, total_pages: 3 } });
    expect((await client({ perPage: 2 }).listSchedulePages()).truncated).toBe('the list ended at page 1, the pagination counts 3 pages');
    api()
      .get('/api/v1.11/schedules')
      .query({ page: '1', per_page: '2' })
      .reply(200, { schedules: many(1, 2), pagination: { page: 1, per_page: 2, total_pages: 2, total_records: 3 } })
      .get('/api/v1.11/schedules')
      .query({ page: '2', per_page: '2' })
      .reply(200, { schedules: many(3, 1), pagination: { page: 2, per_page: 2, total_pages: 2, total_records: 3 } });
    expect((await client({ perPage: 2 }).listSchedulePages()).truncated).toBeUndefined();
  });

  it('gives up on a list that never ends', async () => {
    api()
      .get('/api/v1.11/schedules')
      .query(true)
      .times(3)
      .reply(200, (uri) => {
        const page = Number(new URL(uri, ORIGIN).searchParams.get('page'));
        return { schedules: many(page * 10, 1), pagination: { page, per_page: 1 } };
      });
    await expect(client({ perPage: 1, maxPages: 3 }).listSchedules()).rejects.toThrow('GET /schedules: unexpected response: the list did not end after 3 pages of 1');
  });
});

describe('bad responses and transport', () => {
  it('keeps values the reference does not list, and names the field of an item without an id', async () => {
    api()
      .get('/api/v1.11/schedules')
      .query(true)
      .reply(200, { schedules: [schedule(), schedule({ id: 'x2', state: 'paused', start_transcoder: 'tomorrow' })] });
    expect((await client().listSchedules()).map((s) => [s.id, s.state])).toEqual([
      ['abc123', 'enabled'],
      ['x2', 'paused'],
    ]);
    api().get('/api/v1.11/schedules').query(true).reply(200, { schedules: [schedule(), { name: 'no id' }] });
    const err = await failure(client().listSchedules());
    expect(err).toBeInstanceOf(VideoUnparsableError);
    expect(err.message).toContain('schedules[1].id');
  });

  it('a 200 that is not JSON', async () => {
    api().get('/api/v1.11/schedules/abc123').reply(200, '<html>login</html>');
    await expect(client().getSchedule('abc123')).rejects.toThrow('GET /schedules/abc123: unexpected response: HTTP 200 body is not JSON: login');
  });

  it('a redirect is not followed (it could carry the token elsewhere)', async () => {
    api().get('/api/v1.11/schedules/abc123').reply(301, '', { Location: 'https://elsewhere.test/x?token=abc' });
    const err = await failure(client().getSchedule('abc123'));
    expect(err.message).toBe('GET /schedules/abc123: HTTP 301; the API redirected to https://elsewhere.test/x; check the video URL');
  });

  it('times out', async () => {
    api().get('/api/v1.11/schedules/abc123').delay(1000).reply(200, { schedule: schedule() });
    const err = await failure(client({ timeoutMs: 50 }).getSchedule('abc123'));
    expect(err).toBeInstanceOf(VideoTimeoutError);
    expect(err.message).toBe('GET /schedules/abc123: no answer within 50 ms');
  });

  it('bounds the response size', async () => {
    api()
      .get('/api/v1.11/schedules')
      .query(true)
      .reply(200, { schedules: [schedule({ name: 'x'.repeat(5000) })] });
    await expect(client({ maxResponseBytes: 1024 }).listSchedules()).rejects.toBeInstanceOf(VideoTooLargeError);
  });

  it('stops when the caller aborts', async () => {
    api().get('/api/v1.11/schedules/abc123').reply(429, 'x', { 'Retry-After': '1' });
    const ac = new AbortController();
    const c = client({ sleep: async () => ac.abort() });
    await expect(c.getSchedule('abc123', { signal: ac.signal })).rejects.toThrow('GET /schedules/abc123: cancelled');
  });

  it('refuses unusable settings as configuration errors', async () => {
    expect(() => new VideoClient({ url: 'not a url', token: TOKEN })).toThrow(ConfigError);
    expect(() => new VideoClient({ url: 'ftp://api.video.test', token: TOKEN })).toThrow(/must be http/);
    expect(() => new VideoClient({ url: 'https://me:pw@api.video.test/api/v1.11', token: TOKEN })).toThrow(/must not contain credentials/);
    expect(() => new VideoClient({ url: BASE, token: 'two words' })).toThrow(ConfigError);
    expect(() => new VideoClient({ url: BASE, token: '' })).toThrow(ConfigError);
    await expect(client().getSchedule(' ')).rejects.toThrow(/schedule id: must not be empty/);
  });
});
