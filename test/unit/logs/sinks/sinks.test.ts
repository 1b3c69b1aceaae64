import { gunzipSync } from 'node:zlib';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger } from '../../../../src/base/logger.js';
import { LogsConfigSchema, type LogsConfigInput } from '../../../../src/config/logs.js';
import { logEntry, type LogEntry } from '../../../../src/logs/transform/entry.js';
import { startLogShipping, type LogShipping } from '../../../../src/logs/pipeline.js';
import { ACCESS_LOG_FIELDS, ERROR_LOG_FIELDS, MemoryLogSource, w3cLine } from '../../../helpers/memory-log-source.js';
import { FileSink } from '../../../../src/logs/sinks/file.js';
import { buildLokiPush, encodeLokiPush, lokiPushUrl, metadataKey } from '../../../../src/logs/sinks/loki.js';
import { waitFor } from '../../../helpers/ports.js';

const ACCESS = 'wowzastreamingengine_access';
const ERROR = 'wowzastreamingengine_error';
const PASSWORD = 'loki-s3cret-pw';
const TOKEN = 'siem-token-123';

let dir: string;
const cleanups: Array<() => Promise<void> | void> = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'log-sinks-'));
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

function access(comment: string, time: string, severity = 'INFO'): string {
  return w3cLine(ACCESS_LOG_FIELDS, {
    date: '2024-01-15', time, tz: 'UTC', 'x-event': 'play', 'x-category': 'stream', 'x-severity': severity, 'x-status': '200',
    'x-comment': comment, 'x-app': 'live', 'x-sname': 'cam1', 'sc-bytes': '4096', 's-port': '1935',
  });
}

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A loopback HTTP receiver; `respond` decides each answer (default 204). */
async function receiver(respond: (n: number, res: ServerResponse) => void = (_n, res) => res.writeHead(204).end(), port = 0) {
  const requests: Received[] = [];
  const server: Server = createServer((req, res) => {
    // When the request arrived (its headers), not when its body ended: the sender's timeout runs from the sending.
    const at = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      // The Loki sink gzips its bodies (Content-Encoding: gzip); the tests read what Loki would read.
      const raw = Buffer.concat(chunks);
      const body = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
      requests.push({ headers: req.headers, body, at });
      respond(requests.length, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  cleanups.push(close);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close };
}

function capture() {
  const text: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      text.push(chunk.toString('utf8'));
      cb();
    },
  });
  return { logger: createLogger({ level: 'debug', destination }), text: () => text.join('') };
}

async function ship(source: MemoryLogSource, input: LogsConfigInput) {
  const registry = new Registry();
  const logs = capture();
  const config = LogsConfigSchema.parse({
    positions_file: join(dir, 'positions.json'),
    dead_letter_file: join(dir, 'dead-letter.ndjson'),
    start_at: 'beginning',
    log_types: [ACCESS],
    follow_interval: '10ms',
    positions_sync_interval: '10ms',
    batch: { max_wait: '10ms' },
    retry: { min_backoff: '10ms', max_backoff: '40ms' },
    drain_timeout: '1s',
    ...input,
  });
  const shipping: LogShipping = await startLogShipping({ sources: [source], config, registry, logger: logs.logger });
  cleanups.push(() => shipping.stop());
  const metric = async (name: string, labels: Record<string, string> = {}) => {
    const m = registry.getSingleMetric(name);
    if (!m) return undefined;
    const values = (await m.get()).values.filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want));
    return values.reduce((sum, v) => sum + v.value, 0);
  };
  const position = () => {
    try {
      return (JSON.parse(readFileSync(config.positions_file, 'utf8')) as { positions: Array<{ log_type: string; offset: number }> }).positions;
    } catch {
      return [];
    }
  };
  return { shipping, registry, metric, logs, position };
}

const PushBody = z.strictObject({
  streams: z.array(z.strictObject({ stream: z.record(z.string(), z.string()), values: z.array(z.tuple([z.string().regex(/^\d+$/), z.string()])) })),
});

function pushedLines(requests: Received[]): Array<{ labels: Record<string, string>; ns: bigint; record: Record<string, unknown> }> {
  return requests.flatMap((r) =>
    PushBody.parse(JSON.parse(r.body)).streams.flatMap((s) => s.values.map(([ns, line]) => ({ labels: s.stream, ns: BigInt(ns), record: JSON.parse(line) as Record<string, unknown> }))),
  );
}

describe('loki sink', () => {
  it('pushes valid /loki/api/v1/push bodies with low-cardinality labels, ascending per stream, tenant and auth', async () => {
    const loki = await receiver();
    writeFileSync(join(dir, 'loki-password'), `${PASSWORD}\n`, { mode: 0o600 });
    const src = new MemoryLogSource('edge-1').addLog(ACCESS, ACCESS_LOG_FIELDS).addLog(ERROR, ERROR_LOG_FIELDS);
    // Out of time order on purpose: Loki needs each stream sorted.
    src.append(ACCESS, [access('a3', '10:00:03'), access('a1', '10:00:01'), access('w2', '10:00:02', 'WARN'), access('a2', '10:00:02')]);
    src.append(ERROR, [w3cLine(ERROR_LOG_FIELDS, { 'x-severity': 'ERROR', 'x-category': 'server', 'x-event': 'comment', date: '2024-01-15', time: '10:00:00', 'x-comment': 'disk full' })]);
    const { metric, logs } = await ship(src, {
      log_types: [ACCESS, ERROR],
      sinks: [{ type: 'loki', url: loki.url, tenant_id: 'media', username: 'wowza', password_file: join(dir, 'loki-password'), labels: { env: 'test' } }],
    });
    await waitFor('five lines at Loki', () => pushedLines(loki.requests).length === 5 || undefined);

    for (const r of loki.requests) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['content-encoding']).toBe('gzip');
      expect(r.headers['x-scope-orgid']).toBe('media');
      expect(r.headers.authorization).toBe(`Basic ${Buffer.from(`wowza:${PASSWORD}`).toString('base64')}`);
      for (const s of PushBody.parse(JSON.parse(r.body)).streams) {
        expect(Object.keys(s.stream).sort()).toEqual(['env', 'log_type', 'server', 'service_name', 'severity']);
        const ns = s.values.map(([t]) => BigInt(t));
        expect(ns).toEqual([...ns].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      }
    }
    const pushed = pushedLines(loki.requests);
    const a1 = pushed.find((p) => p.record['x-comment'] === 'a1')!;
    expect(a1.labels).toEqual({ env: 'test', service_name: 'wowza', server: 'edge-1', log_type: ACCESS, severity: 'info' });
    expect(a1.ns).toBe(BigInt(Date.UTC(2024, 0, 15, 10, 0, 1)) * 1_000_000n);
    expect(a1.record).toMatchObject({ timestamp: '2024-01-15T10:00:01.000Z', 'x-event': 'play', 'sc-bytes': 4096, 'x-file-size': null });
    expect(a1.record).not.toHaveProperty('server'); // it is a label
    expect(pushed.find((p) => p.record['x-comment'] === 'w2')!.labels.severity).toBe('warn');
    expect(pushed.find((p) => p.record['x-comment'] === 'disk full')!.labels).toMatchObject({ log_type: ERROR, severity: 'error' });

    await waitFor('forwarded metric', async () => (await metric('wowza_log_forwarded_lines_total', { sink: 'loki' })) === 5 || undefined);
    expect(await metric('wowza_log_forwarded_lines_total', { sink: 'loki', log_type: ERROR })).toBe(1);
    expect(logs.text()).not.toContain(PASSWORD);
    expect(logs.text()).not.toContain(Buffer.from(`wowza:${PASSWORD}`).toString('base64'));
  });

  it('retries while the receiver is down and delivers everything once it is up', async () => {
    const reserved = await receiver();
    const port = Number(new URL(reserved.url).port);
    await reserved.close();
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, Array.from({ length: 6 }, (_, i) => access(`line ${i}`, `10:00:0${i}`)));
    const { metric, position } = await ship(src, { sinks: [{ type: 'loki', url: `http://127.0.0.1:${port}` }] });

    await waitFor('failed pushes', async () => ((await metric('wowza_log_forward_failures_total', { sink: 'loki' })) ?? 0) >= 2 || undefined);
    expect(position().find((p) => p.log_type === ACCESS)?.offset ?? 0).toBe(0); // nothing acknowledged, nothing advanced
    const loki = await receiver(undefined, port);
    await waitFor('all lines after recovery', () => pushedLines(loki.requests).length >= 6 || undefined);
    expect(pushedLines(loki.requests).map((p) => p.record['x-comment']).sort()).toEqual(Array.from({ length: 6 }, (_, i) => `line ${i}`));
    await waitFor('positions at the end of the file', () => position().find((p) => p.log_type === ACCESS)?.offset === src.size(ACCESS) || undefined);
  });

  it('moves a batch refused with 400 to the dead-letter file, counts it, and moves on', async () => {
    const loki = await receiver((_n, res) => res.writeHead(400, { 'content-type': 'text/plain' }).end('entry for stream has timestamp too old'));
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, [access('old 1', '10:00:00'), access('old 2', '10:00:01')]);
    const { metric, position } = await ship(src, { sinks: [{ type: 'loki', url: loki.url }] });

    await waitFor('dead letters', async () => (await metric('wowza_log_dead_letter_lines_total', { sink: 'loki' })) === 2 || undefined);
    const dead = readFileSync(join(dir, 'dead-letter.ndjson'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(dead).toHaveLength(2);
    expect(dead[0]).toMatchObject({ sink: 'loki', status: 400, entry: { 'x-comment': 'old 1', log_type: ACCESS } });
    expect(dead[0]!.reason).toMatch(/answered HTTP 400: entry for stream has timestamp too old/);
    expect(dead[0]!.line).toBe(access('old 1', '10:00:00'));
    expect(loki.requests).toHaveLength(1); // a refusal is not retried
    await waitFor('positions advanced past the refused lines', () => position().find((p) => p.log_type === ACCESS)?.offset === src.size(ACCESS) || undefined);
  });

  it('retries 5xx and honours Retry-After on 429', async () => {
    const loki = await receiver((n, res) => {
      if (n === 1) res.writeHead(503).end('ingester not ready');
      else if (n === 2) res.writeHead(429, { 'retry-after': '1' }).end('rate limited');
      else res.writeHead(204).end();
    });
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, [access('x', '10:00:00')]);
    const { metric } = await ship(src, { sinks: [{ type: 'loki', url: loki.url }] });
    await waitFor('delivery', () => loki.requests.length === 3 || undefined, 45_000);
    expect(loki.requests[2]!.at - loki.requests[1]!.at).toBeGreaterThanOrEqual(950);
    expect(loki.requests.map((r) => r.body)).toEqual([loki.requests[0]!.body, loki.requests[0]!.body, loki.requests[0]!.body]);
    await waitFor('metrics', async () => (await metric('wowza_log_forwarded_lines_total')) === 1 || undefined);
    expect(await metric('wowza_log_forward_failures_total', { sink: 'loki', log_type: ACCESS })).toBe(2);
  });

  it('builds push URLs and bodies', () => {
    expect(lokiPushUrl('http://loki:3100')).toBe('http://loki:3100/loki/api/v1/push');
    expect(lokiPushUrl('https://logs.example.com/tenant-a/loki/api/v1/push')).toBe('https://logs.example.com/tenant-a/loki/api/v1/push');
    const entry = (ms: number, severity: string, comment = ''): LogEntry => logEntry('s', 't', '', { timestamp: null, 'x-severity': severity, 'x-comment': comment }, ms);
    const entries = [entry(3, 'INFO'), entry(1, 'INFO', 'quote " backslash \\ tab \t newline \n ∞ 🎥 \u2028 \ud800'), entry(2, 'BOGUS')];
    const body = buildLokiPush(entries, { env: 'prod "eu"' });
    expect(body.streams).toEqual([
      { stream: { env: 'prod "eu"', server: 's', log_type: 't', severity: 'info' }, values: [['1000000', expect.any(String)], ['3000000', expect.any(String)]] },
      { stream: { env: 'prod "eu"', server: 's', log_type: 't', severity: 'other' }, values: [['2000000', expect.any(String)]] },
    ]);
    expect(JSON.parse(body.streams[0]!.values[0]![1])).toEqual({ timestamp: null, 'x-severity': 'INFO', 'x-comment': 'quote " backslash \\ tab \t newline \n ∞ 🎥 \u2028 \ud800' });
    // The body written piece by piece is byte for byte the JSON of the push object.
    expect(encodeLokiPush(entries, { env: 'prod "eu"' }).toString('utf8')).toBe(JSON.stringify(body));
    expect(encodeLokiPush([]).toString('utf8')).toBe(JSON.stringify(buildLokiPush([])));

    // Structured metadata (Loki 3): only the fields asked for, only where the record has a value; keys as label names.
    const withIp = logEntry('s', 't', '', { 'x-severity': 'INFO', 'c-ip': '203.0.113.7', 'x-stream-id': '-', 'x-sname': 'cam1' }, 5);
    const meta = [{ field: 'c-ip', key: metadataKey('c-ip') }, { field: 'x-stream-id', key: metadataKey('x-stream-id') }, { field: 'x-sname', key: 'x_sname' }];
    const metaBody = buildLokiPush([withIp, entry(6, 'INFO')], {}, meta);
    expect(metaBody.streams[0]!.values).toEqual([
      ['5000000', expect.any(String), { c_ip: '203.0.113.7', x_sname: 'cam1' }],
      ['6000000', expect.any(String)],
    ]);
    expect(encodeLokiPush([withIp, entry(6, 'INFO')], {}, meta).toString('utf8')).toBe(JSON.stringify(metaBody));
  });

  it('sends service_name, gzip or plain bodies as configured, and structured metadata only when asked', async () => {
    const loki = await receiver();
    const src = new MemoryLogSource('edge-2').addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, [access('m1', '10:00:00')]);
    await ship(src, { sinks: [{ type: 'loki', url: loki.url, service_name: 'wowza-edge', compression: 'none', structured_metadata: ['c-ip', 'x-sname'] }] });
    await waitFor('the push', () => loki.requests.length >= 1 || undefined);
    const r = loki.requests[0]!;
    expect(r.headers['content-encoding']).toBeUndefined();
    const [stream] = (JSON.parse(r.body) as { streams: Array<{ stream: Record<string, string>; values: unknown[][] }> }).streams;
    expect(stream!.stream.service_name).toBe('wowza-edge');
    // c-ip is `-` in this line: left out rather than sent empty.
    expect(stream!.values[0]![2]).toEqual({ x_sname: 'cam1' });
  });
});

describe('http sink', () => {
  it('posts JSON arrays of records with the bearer token from its file', async () => {
    const http = await receiver((_n, res) => res.writeHead(200).end('ok'));
    writeFileSync(join(dir, 'token'), TOKEN);
    const src = new MemoryLogSource('edge-9').addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, [access('h1', '10:00:00'), access('h2', '10:00:01')]);
    const { logs } = await ship(src, { sinks: [{ type: 'http', url: `${http.url}/ingest?src=wowza`, headers: { 'X-Source': 'wowza' }, bearer_token_file: join(dir, 'token') }] });
    await waitFor('two records', () => http.requests.flatMap((r) => JSON.parse(r.body) as unknown[]).length === 2 || undefined);
    const records = http.requests.flatMap((r) => JSON.parse(r.body) as Array<Record<string, unknown>>);
    expect(records[0]).toMatchObject({ server: 'edge-9', log_type: ACCESS, 'x-comment': 'h1', 's-port': 1935 });
    expect(http.requests[0]!.headers).toMatchObject({ authorization: `Bearer ${TOKEN}`, 'x-source': 'wowza', 'content-type': 'application/json' });
    expect(logs.text()).not.toContain(TOKEN);
  });

  it('gives up on a receiver that does not answer in time and retries', async () => {
    const http = await receiver((n, res) => {
      if (n > 1) res.writeHead(204).end(); // the first request is left hanging
    });
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, [access('slow', '10:00:00')]);
    const { metric, logs } = await ship(src, { sinks: [{ type: 'http', url: http.url, timeout: '100ms' }] });
    await waitFor('the retry', () => http.requests.length === 2 || undefined);
    // That it gave up for want of an answer is in what it logged and counted, not in a wall-clock gap: on a busy
    // machine the receiver may see the first request late and the retry on time.
    await waitFor('forwarded', async () => (await metric('wowza_log_forwarded_lines_total', { sink: 'http' })) === 1 || undefined);
    expect(await metric('wowza_log_forward_failures_total', { sink: 'http' })).toBe(1);
    expect(logs.text()).toMatch(/no answer within 100 ms/);
  });

  it('fails to start with the field named when a secret file is missing', async () => {
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    await expect(ship(src, { sinks: [{ type: 'http', url: 'http://127.0.0.1:1/', bearer_token_file: join(dir, 'missing') }] })).rejects.toThrow(
      /logs\.sinks\[0\]\.bearer_token_file: cannot read .*missing \(ENOENT\)/,
    );
  });
});

describe('a server whose logs are handed over (its settings changed: removed, then added again)', () => {
  it('delivers every line once: the lines still queued reach the sink before the positions are saved', async () => {
    // A slow sink: each push is answered after 150 ms, so lines are queued when the follower stops.
    const http = await receiver((_n, res) => setTimeout(() => res.writeHead(204).end(), 150));
    const src = new MemoryLogSource('edge-5').addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, Array.from({ length: 40 }, (_, i) => access(`h${i}`, '10:00:00')));
    const { shipping } = await ship(src, { sinks: [{ type: 'http', url: http.url }], batch: { max_lines: 5, max_wait: '10ms' } });
    const comments = () => http.requests.flatMap((r) => (JSON.parse(r.body) as Array<Record<string, unknown>>).map((x) => String(x['x-comment'])));
    await waitFor('some lines delivered', () => (comments().length >= 5 ? true : undefined));
    await shipping.removeSource('edge-5');
    shipping.addSource(src);
    src.append(ACCESS, Array.from({ length: 10 }, (_, i) => access(`h${40 + i}`, '10:00:01')));
    await waitFor('every line', () => (new Set(comments()).size === 50 ? true : undefined));
    await new Promise((r) => setTimeout(r, 300)); // anything sent twice would have arrived by now
    const seen = comments();
    expect(seen.length, `duplicates: ${seen.filter((c, i) => seen.indexOf(c) !== i).join(', ')}`).toBe(50);
  });
});

describe('file and stdout sinks', () => {
  it('appends NDJSON and rotates by size, keeping max_files', async () => {
    const path = join(dir, 'out', 'wowza.ndjson');
    const sink = new FileSink('file', { path, maxBytes: 600, maxFiles: 2 });
    cleanups.push(() => sink.close());
    const entry = (i: number): LogEntry => logEntry('s', ACCESS, `l${i}`, { timestamp: null, 'x-comment': `entry ${i} ${'x'.repeat(150)}` }, 0);
    for (let i = 0; i < 12; i++) await sink.send([entry(i)]);
    expect(existsSync(`${path}.1`)).toBe(true);
    expect(existsSync(`${path}.2`)).toBe(true);
    expect(existsSync(`${path}.3`)).toBe(false);
    for (const p of [path, `${path}.1`, `${path}.2`]) expect(readFileSync(p).length).toBeLessThanOrEqual(600);
    const last = readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(last.at(-1)).toMatchObject({ server: 's', log_type: ACCESS, 'x-comment': expect.stringMatching(/^entry 11 /) });
  });

  it('writes one JSON object per line to stdout', async () => {
    let out = '';
    const stdout = new Writable({
      write(chunk: Buffer, _enc, cb) {
        out += chunk.toString('utf8');
        cb();
      },
    });
    const src = new MemoryLogSource().addLog(ACCESS, ACCESS_LOG_FIELDS);
    src.append(ACCESS, [access('s1', '10:00:00'), access('s2', '10:00:01')]);
    const registry = new Registry();
    const config = LogsConfigSchema.parse({ positions_file: join(dir, 'p.json'), dead_letter_file: join(dir, 'd'), start_at: 'beginning', log_types: ['access'], batch: { max_wait: '10ms' } });
    const shipping = await startLogShipping({ sources: [src], config, registry, logger: capture().logger, stdout });
    cleanups.push(() => shipping.stop());
    await waitFor('stdout lines', () => out.split('\n').length === 3 || undefined);
    expect(out.trim().split('\n').map((l) => (JSON.parse(l) as Record<string, unknown>)['x-comment'])).toEqual(['s1', 's2']);
  });
});
