import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { problems, type Shape } from './shape.js';
import { ERROR_BODY, LOG_CONTENTS, NOT_SERVED, ROWS, SAVE_RESULT } from './wse-reference.js';

/**
 * Conformance: every row of the WSE reference's endpoint tables the simulator serves answers with the status and
 * the shape the reference documents (wse-reference.ts). The simulator is what every other test trusts to be a
 * Wowza server; this suite is what keeps it one.
 */

const REFERENCE = fileURLToPath(new URL('../fixtures/reference/wse-rest-api.md', import.meta.url));

let sim: Simulator;
const auth = () => `Basic ${Buffer.from(`${sim.username}:${sim.password}`).toString('base64')}`;

async function call(method: string, path: string, init: { body?: string; contentType?: string; authorize?: boolean } = {}) {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.authorize !== false) headers.authorization = auth();
  if (init.contentType) headers['content-type'] = init.contentType;
  const res = await fetch(sim.url + path, { method, headers, body: init.body });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', headers: res.headers, json, text };
}

function conforms(json: unknown, shape: Shape): string[] {
  return problems(json, { object: shape });
}

beforeAll(async () => {
  sim = await startSimulator({ auth: 'basic', frozen: true });
});
afterAll(() => sim.close());

describe('WSE REST reference, section 4 rows the simulator serves', () => {
  for (const row of ROWS) {
    it(`${row.method} ${row.path} -> ${row.status}, the documented shape, as JSON`, async () => {
      const res = await call(row.method, row.example);
      expect(res.status).toBe(row.status);
      // Section 1, convention 1: bodies are JSON.
      expect(res.contentType).toMatch(/^application\/json/);
      expect(conforms(res.json, row.shape)).toEqual([]);
    });
  }

  it('PUT {S} takes the GET body back (convention 5) and answers a save result (convention 6)', async () => {
    const body = (await call('GET', '/v2/servers/_defaultServer_')).json;
    const res = await call('PUT', '/v2/servers/_defaultServer_', { body: JSON.stringify(body), contentType: 'application/json' });
    expect(res.status).toBe(200);
    expect(conforms(res.json, SAVE_RESULT)).toEqual([]);
  });

  it('log query parameters: lineCount both ways, head, tail, filter, search, regexSearch, and date bounds on /logs only', async () => {
    const S = '/v2/servers/_defaultServer_';
    const type = 'wowzastreamingengine_access';
    sim.logs.generate(type, 30);
    const all = (await call('GET', `${S}/logs/${type}?lineCount=1000`)).json as { logLines: string[]; endOffset: number; fileLength: number };
    const before = (await call('GET', `${S}/logs/${type}?startOffset=${all.endOffset}&lineCount=-3`)).json as { logLines: string[] };
    expect(before.logLines).toEqual(all.logLines.slice(-3));
    expect(((await call('GET', `${S}/logs/${type}?head=2`)).json as { logLines: string[] }).logLines).toEqual(all.logLines.slice(0, 2));
    expect(((await call('GET', `${S}/logs/${type}?tail=2`)).json as { logLines: string[] }).logLines).toEqual(all.logLines.slice(-2));
    const filtered = await call('GET', `${S}/logs/${type}?lineCount=1000&filter=noHeader|noColumnHeadings`);
    expect((filtered.json as { logLines: string[] }).logLines.some((l) => l.startsWith('#'))).toBe(false);
    expect(conforms(filtered.json, LOG_CONTENTS)).toEqual([]);
    const searched = (await call('GET', `${S}/logs/${type}?lineCount=1000&search=${encodeURIComponent('^#Fields')}&regexSearch=true`)).json as { logLines: string[]; regexSearch: boolean };
    expect(searched.logLines).toHaveLength(1);
    expect(searched.regexSearch).toBe(true);
    const dated = await call('GET', `${S}/logs/${type}?lineCount=10&startDate=0&endDate=${Date.now() + 60_000}`);
    expect(dated.status).toBe(200);
    expect(conforms(dated.json, LOG_CONTENTS)).toEqual([]);
  });
});

describe('WSE REST reference, section 7 statuses', () => {
  it('404 for what does not exist, with the error envelope', async () => {
    for (const path of [
      '/v2/servers/other/status',
      '/v2/servers/_defaultServer_/vhosts/nope/monitoring/current',
      '/v2/servers/_defaultServer_/vhosts/_defaultVHost_/applications/nope/monitoring/current',
      '/v2/servers/_defaultServer_/logs/nope',
      '/v2/servers/_defaultServer_/logfiles/nope.log',
    ]) {
      const res = await call('GET', path);
      expect(res.status, path).toBe(404);
      expect(conforms(res.json, ERROR_BODY), path).toEqual([]);
    }
  });

  it('400 for a bad query, 401 without credentials (with the challenge), 415 for a body that is not JSON', async () => {
    const bad = await call('GET', '/v2/servers/_defaultServer_/logs/wowzastreamingengine_access?lineCount=many');
    expect(bad.status).toBe(400);
    expect(conforms(bad.json, ERROR_BODY)).toEqual([]);
    const anonymous = await call('GET', '/v2/machine/monitoring/current', { authorize: false });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Basic /);
    const text = await call('PUT', '/v2/servers/_defaultServer_', { body: 'x', contentType: 'text/plain' });
    expect(text.status).toBe(415);
  });
});

describe('the transcription itself', () => {
  it('covers every served row or says why not, and names only paths of the reference', () => {
    const paths = [...ROWS.map((r) => r.path), ...NOT_SERVED.map((r) => r.path)];
    expect(new Set(paths).size).toBe(paths.length);
    if (!existsSync(REFERENCE)) {
      console.warn(`SKIPPED: ${REFERENCE} is not here, so the transcription was not compared with it (CI has it)`);
      return;
    }
    const reference = readFileSync(REFERENCE, 'utf8');
    for (const p of paths) expect(reference, p).toContain(`\`${p}\``.replace('{streamName}', '{streamName}'));
  });
});
