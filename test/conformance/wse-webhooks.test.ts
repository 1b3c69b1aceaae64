import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { problems, type Field, type Shape, type Type } from './shape.js';

/**
 * Conformance of the simulator's webhook API (4.9.6+) with the WSE reference: the shapes of section 2 "Webhooks"
 * and every row of section 4 "Webhooks (base {S}/webhooks)", transcribed here from the document (not from
 * src/webhooks/ nor from the simulator). Where the reference says "as usual" for `serverName`, `version`,
 * `saveFieldList`, section 1's convention applies: the first two present, the last optional.
 */

const REFERENCE = fileURLToPath(new URL('../fixtures/reference/wse-rest-api.md', import.meta.url));
const S = '/v2/servers/_defaultServer_';
const W = `${S}/webhooks`;

const optional = (type: Type): Field => ({ type, optional: true });
const ENVELOPE: Shape = { serverName: 'string', version: 'string', saveFieldList: optional({ array: 'string' }) };

/** Section 2, Filter table. */
const FILTER: Shape = {
  id: 'string',
  enabled: 'boolean',
  criteria: 'string',
  targetRef: 'string',
  maxRetryAttempts: ['int', 'null'],
  retryDelay: ['int', 'null'],
  retryDelayUnit: ['string', 'null'],
};
/** Section 2, Target: `headers` an array of {name, value} or null, `auth` {type, secret} or null. */
const TARGET: Shape = {
  id: 'string',
  url: 'string',
  headers: [{ array: { object: { name: 'string', value: 'string' }, open: false } }, 'null'],
  auth: [{ object: { type: 'string', secret: 'string' } }, 'null'],
};
/** "plus serverName, version, saveFieldList on single-resource forms". */
const ONE_FILTER: Shape = { ...ENVELOPE, ...FILTER };
const ONE_TARGET: Shape = { ...ENVELOPE, ...TARGET };
/** The `webhooks` object: `debugLog`, `source`, `filters`, `targets`. */
const WEBHOOKS: Shape = { debugLog: 'boolean', source: 'string', filters: { array: { object: FILTER } }, targets: { array: { object: TARGET } } };
/** The wrapper of GET and PUT `{S}/webhooks`: `webhooks`, `serverName`, `saveFieldList`, `version`. */
const WRAPPER: Shape = { ...ENVELOPE, webhooks: { object: WEBHOOKS } };
const FILTER_LIST: Shape = { serverName: 'string', filters: { array: { object: FILTER } } };
const TARGET_LIST: Shape = { serverName: 'string', targets: { array: { object: TARGET } } };
const SOURCE: Shape = { source: 'string' };
/** DELETE "returns success, message, data". */
const DELETED: Shape = { success: 'boolean', message: 'string', data: 'any' };
/** Section 7: statuses; the error body is not shown, wowza-api.md gives the envelope. */
const ERROR: Shape = { success: 'boolean', message: 'string' };

interface Row {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  /** As the reference's table writes it. */
  path: string;
  url: string;
  body?: unknown;
  status: number;
  shape: Shape;
}

const hook = 'http://127.0.0.1:9/hook';
const target = { serverName: '_defaultServer_', id: 'c-target', url: hook, headers: [{ name: 'X-Team', value: 'ops' }], auth: { type: 'jwt', secret: 'c-secret' } };
const filter = { serverName: '_defaultServer_', id: 'c-filter', enabled: true, criteria: 'vHost.*.app.live.>', targetRef: 'c-target', maxRetryAttempts: 2, retryDelay: 500, retryDelayUnit: 'ms' };

/** Every row of the section 4 table, one per method, in an order that works against one server. */
const ROWS: Row[] = [
  { method: 'GET', path: '{S}/webhooks', url: W, status: 200, shape: WRAPPER },
  { method: 'POST', path: '{S}/webhooks/targets', url: `${W}/targets`, body: target, status: 201, shape: ONE_TARGET },
  { method: 'GET', path: '{S}/webhooks/targets', url: `${W}/targets`, status: 200, shape: TARGET_LIST },
  { method: 'GET', path: '{S}/webhooks/targets/{id}', url: `${W}/targets/c-target`, status: 200, shape: ONE_TARGET },
  { method: 'PUT', path: '{S}/webhooks/targets/{id}', url: `${W}/targets/c-target`, body: { ...target, url: `${hook}2` }, status: 200, shape: ONE_TARGET },
  { method: 'POST', path: '{S}/webhooks/filters', url: `${W}/filters`, body: filter, status: 201, shape: ONE_FILTER },
  { method: 'GET', path: '{S}/webhooks/filters', url: `${W}/filters`, status: 200, shape: FILTER_LIST },
  { method: 'GET', path: '{S}/webhooks/filters/{id}', url: `${W}/filters/c-filter`, status: 200, shape: ONE_FILTER },
  { method: 'PUT', path: '{S}/webhooks/filters/{id}', url: `${W}/filters/c-filter`, body: { ...filter, enabled: false }, status: 200, shape: ONE_FILTER },
  { method: 'GET', path: '{S}/webhooks/source', url: `${W}/source`, status: 200, shape: SOURCE },
  { method: 'PUT', path: '{S}/webhooks/source', url: `${W}/source`, body: { source: 'edge-eu-1' }, status: 200, shape: SOURCE },
  // "PUT {S}/webhooks: body: webhooks wrapper (source, filters, targets); response: the webhooks object".
  { method: 'PUT', path: '{S}/webhooks', url: W, body: 'the GET answer', status: 200, shape: WEBHOOKS },
  { method: 'DELETE', path: '{S}/webhooks/filters/{id}', url: `${W}/filters/c-filter`, status: 200, shape: DELETED },
  { method: 'DELETE', path: '{S}/webhooks/targets/{id}', url: `${W}/targets/c-target`, status: 200, shape: DELETED },
];

let sim: Simulator;
async function call(method: string, url: string, body?: unknown, contentType = 'application/json') {
  const headers: Record<string, string> = { accept: 'application/json', authorization: `Basic ${Buffer.from(`${sim.username}:${sim.password}`).toString('base64')}` };
  if (body !== undefined) headers['content-type'] = contentType;
  const res = await fetch(sim.url + url, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', json };
}
const conforms = (json: unknown, shape: Shape) => problems(json, { object: shape });

beforeAll(async () => {
  sim = await startSimulator({ auth: 'basic', frozen: true, serverVersion: 'Wowza Streaming Engine 4.9.6 build20250620000000' });
});
afterAll(() => sim.close());

describe('WSE reference, section 4 "Webhooks (base {S}/webhooks)": every row', () => {
  for (const row of ROWS) {
    it(`${row.method} ${row.path} -> ${row.status}, the documented shape`, async () => {
      const body = row.body === 'the GET answer' ? (await call('GET', W)).json : row.body;
      const res = await call(row.method, row.url, body);
      expect(res.status).toBe(row.status);
      expect(res.contentType).toMatch(/^application\/json/);
      expect(conforms(res.json, row.shape)).toEqual([]);
    });
  }

  it('POST of a target without headers or auth answers both as null', async () => {
    const res = await call('POST', `${W}/targets`, { id: 'bare', url: hook });
    expect(res.json).toMatchObject({ id: 'bare', url: hook, headers: null, auth: null });
    await call('DELETE', `${W}/targets/bare`);
  });

  it('the schema form of POST (a list wrapper) is taken too', async () => {
    const res = await call('POST', `${W}/targets`, { serverName: '_defaultServer_', targets: [{ id: 'list-1', url: hook }] });
    expect(res.status).toBe(201);
    expect(conforms(res.json, TARGET_LIST)).toEqual([]);
    const filters = await call('POST', `${W}/filters`, { serverName: '_defaultServer_', filters: [{ ...filter, id: 'list-f', targetRef: 'list-1' }] });
    expect(filters.status).toBe(201);
    expect(conforms(filters.json, FILTER_LIST)).toEqual([]);
    await call('DELETE', `${W}/filters/list-f`);
    await call('DELETE', `${W}/targets/list-1`);
  });
});

describe('WSE reference, statuses of the webhook endpoints (section 7, and the rules of section 4)', () => {
  it('409 for a POST of an id that exists; 400 for a filter whose target does not exist; 404 for an unknown id; 415 for a body that is not JSON', async () => {
    expect((await call('POST', `${W}/targets`, { ...target, id: 'dup' })).status).toBe(201);
    const dup = await call('POST', `${W}/targets`, { ...target, id: 'dup' });
    expect(dup.status).toBe(409);
    expect(conforms(dup.json, ERROR)).toEqual([]);
    const orphan = await call('POST', `${W}/filters`, { ...filter, id: 'orphan', targetRef: 'missing' });
    expect(orphan.status).toBe(400);
    expect(conforms(orphan.json, ERROR)).toEqual([]);
    for (const url of [`${W}/targets/nope`, `${W}/filters/nope`]) {
      const res = await call('GET', url);
      expect(res.status, url).toBe(404);
      expect(conforms(res.json, ERROR), url).toEqual([]);
    }
    expect((await call('POST', `${W}/targets`, 'not json', 'text/plain')).status).toBe(415);
    // PUT cannot change an id.
    expect((await call('PUT', `${W}/targets/dup`, { ...target, id: 'other' })).status).toBe(400);
    await call('DELETE', `${W}/targets/dup`);
  });

  it('404 on every webhook path of a server before 4.9.6 (section 9, item 4)', async () => {
    const old = await startSimulator({ auth: 'none', serverVersion: 'Wowza Streaming Engine 4.9.4 build20250114124522' });
    try {
      for (const row of ROWS) {
        const res = await fetch(old.url + row.url, { method: row.method, headers: { accept: 'application/json', 'content-type': 'application/json' }, body: row.method === 'GET' || row.method === 'DELETE' ? undefined : '{}' });
        await res.arrayBuffer();
        expect(res.status, `${row.method} ${row.path}`).toBe(404);
      }
    } finally {
      await old.close();
    }
  });
});

describe('the transcription itself', () => {
  it('has a row for every method of every path in the reference table, and no other', () => {
    if (!existsSync(REFERENCE)) {
      console.warn(`SKIPPED: ${REFERENCE} is not here, so the transcription was not compared with it (CI has it)`);
      return;
    }
    const text = readFileSync(REFERENCE, 'utf8');
    const section = text.slice(text.indexOf('### Webhooks (base `{S}/webhooks`)'));
    const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| Method')));
    const documented = new Set<string>();
    for (const line of table.split('\n')) {
      const m = /^\| ([A-Z, ]+) \| `([^`]+)`(?:, `([^`]+)`)? \|/.exec(line);
      if (!m) continue;
      for (const method of m[1]!.split(',').map((x) => x.trim())) for (const path of [m[2], m[3]].filter(Boolean)) documented.add(`${method} ${path}`);
    }
    expect(documented.size).toBeGreaterThan(10);
    expect(new Set(ROWS.map((r) => `${r.method} ${r.path}`))).toEqual(documented);
  });
});
