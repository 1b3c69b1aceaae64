import fc from 'fast-check';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EncodedText, gzipJoined } from '../../../src/metrics/metrics-body.js';
import { sendMetrics, type MetricsParts } from '../../../src/http/server.js';
import type { MetricDef } from '../../../src/metrics/definitions.js';
import { mergeRendered, renderSet } from '../../../src/metrics/exposition.js';
import { MetricSet } from '../../../src/metrics/metric-set.js';
import { SnapshotStore } from '../../../src/metrics/snapshot-store.js';

/** Checks that `zipped` is exactly one gzip member holding `text`. */
function singleMember(zipped: Buffer, text: Buffer): void {
  expect(gunzipSync(zipped).equals(text)).toBe(true);
  // One deflate stream between the 10-byte header and the 8-byte trailer, and a trailer that covers all.
  expect(inflateRawSync(zipped.subarray(10, -8)).equals(text)).toBe(true);
  expect(zipped.readUInt32LE(zipped.length - 8)).toBe(crc32(text));
  expect(zipped.readUInt32LE(zipped.length - 4)).toBe(text.length);
}

const text = fc.string({ unit: 'binary', maxLength: 300 });

describe('EncodedText and gzipJoined', () => {
  it('encodes chunks as their joined UTF-8 text', () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 8 }), (chunks) => {
        expect(EncodedText.fromChunks(chunks).toBuffer().equals(Buffer.from(chunks.join(''), 'utf8'))).toBe(true);
      }),
    );
  });

  it('makes one gzip member of the cached part and a fresh tail', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(text, { maxLength: 5 }), text, async (chunks, tail) => {
        const head = EncodedText.fromChunks(chunks);
        const tailBytes = Buffer.from(tail, 'utf8');
        singleMember(await gzipJoined(head, tailBytes), Buffer.concat([head.toBuffer(), tailBytes]));
      }),
      { numRuns: 200 },
    );
  });

  it('handles empty parts and megabytes, and reuses the compressed head', async () => {
    const empty = EncodedText.fromChunks([]);
    singleMember(await gzipJoined(empty, Buffer.alloc(0)), Buffer.alloc(0));
    singleMember(await gzipJoined(empty, Buffer.from('own 1\n')), Buffer.from('own 1\n'));
    // Long repeats: back-references may only point into the part they belong to.
    const big = EncodedText.fromChunks(Array.from({ length: 20_000 }, (_, i) => `wowza_stream_uptime_seconds{server="s",stream="cam${i % 97}"} ${i}\n`));
    const first = big.deflate();
    expect(big.deflate()).toBe(first);
    for (const tail of ['', 'wowza_stream_uptime_seconds{server="s",stream="cam1"} 5\n', 'é\n'.repeat(5000)]) {
      const t = Buffer.from(tail);
      singleMember(await gzipJoined(big, t), Buffer.concat([big.toBuffer(), t]));
    }
  });

  it('deflates an exposition of tens of megabytes in pieces that join into one member holding every byte', async () => {
    // 28 MB in 290 KB byte parts: four pieces of zlib's work, the last a short one; repeats cross every boundary.
    const line = (i: number) => `wowza_stream_bytes_in_total{server="edge-${i % 1000}",stream="cam${i % 97}"} ${i}\n`;
    const parts = Array.from({ length: 96 }, (_, p) => Buffer.from(Array.from({ length: 4_200 }, (_, i) => line(p * 4_200 + i)).join('')));
    const big = EncodedText.fromChunks(parts);
    expect(big.length).toBeGreaterThan(3 * 8 * 1024 * 1024);
    singleMember(await gzipJoined(big, Buffer.from('own 1\n')), Buffer.concat([...parts, Buffer.from('own 1\n')]));
  });
});

describe('a body put together in slices (a fleet-sized scrape)', () => {
  // 6 MB in 300,000 small pieces (each server's lines of one family, as the merge gives them) and a few big ones.
  const line = (i: number) => `wowza_stream_uptime_seconds{server="http://127.2.${i % 4}.${i % 250}:8087",stream="cam${i % 97}"} ${i}\n`;
  const chunks: Array<string | Uint8Array> = [];
  for (let i = 0; i < 300_000; i++) {
    chunks.push(i % 50_000 === 0 ? `# HELP f${i} help\n# TYPE f${i} gauge\n` : Buffer.from(line(i)));
    if (i % 100_000 === 0) chunks.push(Buffer.from(line(i).repeat(500)));
  }
  const joined = Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)));

  it('is the same bytes as fromChunks, in runs of about a megabyte, and hands the event loop back meanwhile', async () => {
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    const sliced = await EncodedText.fromChunksInSlices(chunks);
    clearInterval(ticking);
    expect(sliced.toBuffer().equals(joined)).toBe(true);
    expect(sliced.toBuffer().equals(EncodedText.fromChunks(chunks).toBuffer())).toBe(true);
    expect(Math.max(...sliced.parts.map((p) => p.length))).toBeLessThan(1024 * 1024 + 64 * 1024);
    expect(turns).toBeGreaterThan(0);
  });

  it('deflates the pieces while it is put together, into one gzip member holding every byte', async () => {
    const sliced = await EncodedText.fromChunksInSlices(chunks, true);
    singleMember(await gzipJoined(sliced, Buffer.from('own 1\n')), Buffer.concat([joined, Buffer.from('own 1\n')]));
    const empty = await EncodedText.fromChunksInSlices([], true);
    singleMember(await gzipJoined(empty, Buffer.alloc(0)), Buffer.alloc(0));
  });
});

const def = (name: string): MetricDef => ({ name, type: 'gauge', help: `help of ${name}\nwith \\ escapes` });

function set(server: string, names: string[], value: number): MetricSet {
  const s = new MetricSet();
  const labels = { server, stream: 'a"b\\c' };
  for (const n of names) {
    s.add(def(n), labels, value);
    s.add(def(n), { server, stream: 'ü' }, -Infinity);
  }
  return s;
}

/** The text format written the plain way, one string per line: what renderSet's bytes must equal. */
function plainExposition(set: MetricSet, extra: string): string {
  const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
  const value = (v: number) => (Number.isNaN(v) ? 'NaN' : v === Infinity ? '+Inf' : v === -Infinity ? '-Inf' : String(v));
  let text = '';
  const names = [...set.families.keys()].sort();
  for (const name of names) {
    const family = set.families.get(name)!;
    text += `# HELP ${name} ${family.def.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}\n# TYPE ${name} ${family.def.type}\n`;
    for (const s of family.samples) {
      const pairs = Object.entries(s.labels)
        .filter(([, v]) => v !== '')
        .map(([k, v]) => `${k}="${esc(v)}"`);
      const all = [extra, ...pairs].filter((p) => p !== '');
      text += `${name}${all.length > 0 ? `{${all.join(',')}}` : ''} ${value(s.value)}\n`;
    }
  }
  return text;
}

describe('renderSet', () => {
  it('writes the text format byte for byte, whatever the label values, numbers and shared label objects', () => {
    const labelValue = fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.constantFrom('', 'a"b', 'c\\d', 'e\nf', 'ü', '🎥', '\ud83c'));
    const labels = fc.dictionary(fc.constantFrom('server', 'vhost', 'application', 'stream', 'protocol'), labelValue, { maxKeys: 5 });
    const value = fc.oneof(
      fc.integer(),
      fc.double(),
      fc.constantFrom(0, -0, 1e21, -1e21, 2 ** 53, -(2 ** 53), Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1.5e-7, Infinity, -Infinity),
      fc.bigInt({ min: 0n, max: 2n ** 64n }).map(Number),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('wowza_a', 'wowza_b_total', 'wowza_c'), fc.nat(4), value), { maxLength: 40 }),
        fc.array(labels, { minLength: 5, maxLength: 5 }),
        fc.constantFrom('', 'site="x"', 'site="ü",dc="\\"a\\""'),
        (samples, labelSets, extra) => {
          const set = new MetricSet();
          // Label objects are shared between samples, as collectors share a stream's between its families.
          for (const [name, k, v] of samples) set.add(def(name), labelSets[k]!, v);
          // As UTF-8 (a lone surrogate becomes U+FFFD, as any encoder writes it).
          expect(mergeRendered([renderSet(set, extra)])).toBe(Buffer.from(plainExposition(set, extra), 'utf8').toString('utf8'));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('SnapshotStore', () => {
  it('renders what mergeRendered renders, and rebuilds only after a change', async () => {
    const store = new SnapshotStore();
    expect(store.render()).toBe('');
    const a = set('a', ['wowza_z', 'wowza_a'], 1);
    const b = set('b', ['wowza_m', 'wowza_a'], 2);
    await store.put('a', 'stream', a);
    await store.put('b', 'stream', b);
    expect(store.render()).toBe(mergeRendered([renderSet(a), renderSet(b)]));
    const first = store.encoded();
    expect(store.encoded()).toBe(first);
    store.delete('x', 'stream'); // nothing there: no rebuild
    expect(store.encoded()).toBe(first);
    store.delete('a', 'stream');
    expect(store.encoded()).not.toBe(first);
    expect(store.render()).toBe(mergeRendered([renderSet(b)]));
    const second = store.encoded();
    await store.put('b', 'stream', b);
    expect(store.encoded()).not.toBe(second);
  });

  it('sizes a render from the one before of the same collector, and writes the same text when its series grow, shrink or get longer', async () => {
    const store = new SnapshotStore();
    const sized = (n: number, name: string) => {
      const s = new MetricSet();
      for (let i = 0; i < n; i++) s.add(def('wowza_stream_uptime_seconds'), { server: 'a', stream: `${name}${i}` }, i);
      return s;
    };
    for (const next of [sized(10, 's'), sized(3000, 's'), sized(3000, 'a much longer stream name than before, '.repeat(20)), sized(2, 'x'), sized(500, 'ü')]) {
      await store.put('a', 'stream', next);
      expect(store.render()).toBe(mergeRendered([renderSet(next)]));
    }
  });

  it('puts a scrape\'s body together in slices: the same text, shared by scrapes meanwhile, built again after a change', async () => {
    const store = new SnapshotStore();
    const a = set('a', ['wowza_z', 'wowza_a'], 1);
    await store.put('a', 'stream', a);
    const one = store.encodedInSlices();
    expect(store.encodedInSlices(true)).toBe(one);
    expect((await one).toBuffer().toString()).toBe(store.render());
    expect(await store.encodedInSlices()).toBe(await one);
    const b = set('b', ['wowza_m'], 2);
    const building = store.encodedInSlices();
    await store.put('b', 'stream', b); // a change while it is built: that scrape answers with what it had
    expect((await building).toBuffer().toString()).toBe(mergeRendered([renderSet(a)]));
    const after = await store.encodedInSlices(true);
    expect(after.toBuffer().toString()).toBe(mergeRendered([renderSet(a), renderSet(b)]));
    singleMember(await gzipJoined(after, Buffer.alloc(0)), after.toBuffer());
  });

  it('answers from the sets before a put until that put is rendered, and lets a delete meanwhile win', async () => {
    const store = new SnapshotStore();
    const a1 = set('a', ['wowza_a'], 1);
    await store.put('a', 'stream', a1);
    const big = new MetricSet();
    for (let i = 0; i < 20_000; i++) big.add(def('wowza_stream_uptime_seconds'), { server: 'a', stream: `s${i}` }, i);
    const putting = store.put('a', 'stream', big);
    expect(store.render()).toBe(mergeRendered([renderSet(a1)])); // not rendered yet: the poll before
    await putting;
    expect(store.render()).toBe(mergeRendered([renderSet(big)]));
    const again = store.put('a', 'stream', big);
    store.delete('a', 'stream');
    await again;
    expect(store.render()).toBe('');
  });
});

describe('sendMetrics', () => {
  let server: Server;
  let body: string | MetricsParts = '';
  let base = '';
  beforeAll(async () => {
    server = createServer((req, res) => void sendMetrics(req, res, body));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const get = (headers: Record<string, string>) =>
    new Promise<{ headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      request(`${base}/metrics`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      })
        .on('error', reject)
        .end();
    });

  const cases: Array<[string, string[], string]> = [
    ['both parts', ['# HELP wowza_a x\n', 'wowza_a{s="é"} 1\n'], 'own 2\n'],
    ['no Wowza series yet', [], 'own 2\n'],
    ['large', Array.from({ length: 5000 }, (_, i) => `wowza_b{i="${i}"} ${i}\n`), 'own 3\n'],
  ];
  for (const [name, chunks, fresh] of cases) {
    it(`sends the cached part then the fresh one, plain and gzipped (${name})`, async () => {
      const expected = Buffer.from(chunks.join('') + fresh);
      body = { cached: EncodedText.fromChunks(chunks), fresh };
      const plain = await get({});
      expect(plain.body.equals(expected)).toBe(true);
      expect(plain.headers['content-length']).toBe(String(expected.length));
      expect(plain.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(plain.headers['content-encoding']).toBeUndefined();
      const zipped = await get({ 'accept-encoding': 'gzip' });
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(zipped.headers['content-length']).toBe(String(zipped.body.length));
      singleMember(zipped.body, expected);
      // Compressing must leave the cached bytes as they were for the next plain scrape.
      expect((await get({})).body.equals(expected)).toBe(true);
    });
  }

  it('still sends a plain string body (probe)', async () => {
    body = 'wowza_up 1\n';
    expect((await get({})).body.toString()).toBe('wowza_up 1\n');
    expect(gunzipSync((await get({ 'accept-encoding': 'deflate, gzip' })).body).toString()).toBe('wowza_up 1\n');
  });
});
