import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { AnswerParser, THREAD_MIN_BYTES } from '../../../src/wowza/answer-parser.js';
import { assembleValue, sliceValue } from '../../../src/wowza/answer-slices.js';
import { validateAnswer } from '../../../src/wowza/answer-validation.js';
import { capLists } from '../../../src/wowza/list-cap.js';
import { InstanceList, VHostList } from '../../../src/wowza/schemas.js';

const instances = (streams: number, padding = 0) =>
  Buffer.from(
    JSON.stringify({
      serverName: '_defaultServer_',
      instanceList: [
        {
          name: '_definst_',
          incomingStreams: Array.from({ length: streams }, (_, i) => ({ name: `s${i}`, sourceIp: 'rtmp://192.0.2.1', isConnected: true, junk: 'x'.repeat(padding) })),
          recorders: [],
        },
      ],
    }),
  );

describe('capLists', () => {
  it('cuts every array to the cap, nested ones too, and counts what it left out', () => {
    const v = { a: [1, 2, 3, 4], b: { c: [[1, 2, 3], [4]] } };
    expect(capLists(v, 2)).toBe(2 + 1);
    expect(v).toEqual({ a: [1, 2], b: { c: [[1, 2], [4]] } });
  });
});

describe('validateAnswer', () => {
  it('keeps the first items of a list over the cap, counts the rest, and strips fields the lists do not name', () => {
    const out = validateAnswer(instances(12, 10), InstanceList, 5);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.dropped).toBe(7);
    const streams = (out.data as InstanceList).instanceList[0]!.incomingStreams;
    expect(streams.map((s) => s.name)).toEqual(['s0', 's1', 's2', 's3', 's4']);
    expect(streams[0]).not.toHaveProperty('junk');
  });

  it('says why an answer is not JSON, or not the expected shape', () => {
    expect(validateAnswer(Buffer.from('{"vhosts": ['), VHostList, 10)).toMatchObject({ ok: false, problem: 'json', bytes: 12 });
    expect(validateAnswer(Buffer.from('{"other": []}'), VHostList, 10)).toMatchObject({ ok: false, problem: 'schema', at: 'vhosts' });
  });
});

describe('sliced values', () => {
  it('come back whole, nested long lists included', async () => {
    const value = { a: Array.from({ length: 2500 }, (_, i) => ({ i })), b: [{ c: Array.from({ length: 1001 }, (_, i) => i) }], d: 'x' };
    const copy = structuredClone(value);
    const sliced = sliceValue(value);
    expect(sliced.slices.length).toBe(3 + 2);
    expect(await assembleValue(sliced)).toEqual(copy);
  });
});

const compiled = new URL('../../../dist/wowza/answer-worker.js', import.meta.url);

describe.skipIf(!existsSync(fileURLToPath(compiled)))('the parser thread (needs npm run build)', () => {
  const parser = new AnswerParser(compiled);
  afterAll(() => parser.close());

  it('gives a big answer the same result as the event loop does, lists cut the same way', async () => {
    const body = instances(20_000, 20);
    expect(body.length).toBeGreaterThan(THREAD_MIN_BYTES);
    expect(parser.usesThread(body.length, InstanceList)).toBe(true);
    const inline = validateAnswer(body, InstanceList, 15_000);
    const threaded = await parser.parse(Buffer.from(body), InstanceList, 15_000);
    expect(threaded).toEqual(inline);
    expect(threaded).toMatchObject({ ok: true, dropped: 5000 });
  });

  it('reports a big answer that is not valid the same way', async () => {
    const body = Buffer.concat([instances(20_000), Buffer.from('}')]);
    const bytes = body.length; // the body moves to the thread: it is the parser's now
    expect(await parser.parse(body, InstanceList, 100_000)).toMatchObject({ ok: false, problem: 'json', bytes });
  });
});
