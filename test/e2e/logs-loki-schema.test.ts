import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { logEntry } from '../../src/logs/transform/entry.js';
import { buildLokiPush, encodeLokiPush } from '../../src/logs/sinks/loki.js';
import { startLokiReceiver, validateLokiPush, type LokiReceiver } from '../helpers/loki-receiver.js';

/**
 * The receiver the log e2e tests ship to is their schema check (issue 5: "the Loki push body passes
 * the schema check"). These cases show that check bites: off-schema bodies get 400 and are counted, so
 * "zero rejections" in the other tests means something. Also its outage switch.
 */

const push = (receiver: LokiReceiver, body: unknown, contentType = 'application/json') =>
  fetch(`${receiver.url}/loki/api/v1/push`, { method: 'POST', headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : JSON.stringify(body) });

const good = { streams: [{ stream: { server: 'wse-1', log_type: 'wowzastreamingengine_access', severity: 'info' }, values: [['1700000000000000000', '{}'], ['1700000000000000000', '{"a":1}']] }] };

describe('Loki-compatible test receiver', () => {
  let receiver: LokiReceiver | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  it('accepts a valid push and records its lines in order', async () => {
    receiver = await startLokiReceiver();
    expect((await push(receiver, good)).status).toBe(204);
    expect(receiver.lines.map((l) => l.line)).toEqual(['{}', '{"a":1}']);
    expect(receiver.rejections).toEqual([]);
  });

  it.each([
    ['not JSON', '{streams:'],
    ['an extra top-level key', { ...good, extra: 1 }],
    ['no streams', { streams: [] }],
    ['a label the shipper must not set', { streams: [{ ...good.streams[0], stream: { ...good.streams[0]!.stream, stream: 'cam1' } }] }],
    ['an empty label value', { streams: [{ ...good.streams[0], stream: { server: '' } }] }],
    ['a numeric timestamp', { streams: [{ ...good.streams[0], values: [[1700000000000000000, 'x']] }] }],
    ['a timestamp in milliseconds with a dot', { streams: [{ ...good.streams[0], values: [['1700000000000.5', 'x']] }] }],
    ['timestamps going back', { streams: [{ ...good.streams[0], values: [['2', 'x'], ['1', 'y']] }] }],
    ['a line that is not a string', { streams: [{ ...good.streams[0], values: [['1', { a: 1 }]] }] }],
    ['empty structured metadata', { streams: [{ ...good.streams[0], values: [['1', 'x', {}]] }] }],
    ['structured metadata that is not a string', { streams: [{ ...good.streams[0], values: [['1', 'x', { c_ip: 7 }]] }] }],
    ['a value with a fourth element', { streams: [{ ...good.streams[0], values: [['1', 'x', { a: 'b' }, 'y']] }] }],
    ['an extra key in a stream', { streams: [{ ...good.streams[0], labels: '{}' }] }],
  ])('refuses %s with 400 and counts it', async (_name, body) => {
    receiver = await startLokiReceiver();
    expect((await push(receiver, body)).status).toBe(400);
    expect(receiver.rejections).toHaveLength(1);
    expect(receiver.lines).toEqual([]);
  });

  it('takes gzip bodies as Loki does, and structured metadata of string values', async () => {
    receiver = await startLokiReceiver();
    const withMeta = { streams: [{ ...good.streams[0], values: [['1', 'x', { c_ip: '203.0.113.7' }]] }] };
    const res = await fetch(`${receiver.url}/loki/api/v1/push`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(JSON.stringify(withMeta)) });
    expect(res.status).toBe(204);
    expect(receiver.gzipped).toBe(1);
    expect(receiver.lines[0]!.metadata).toEqual({ c_ip: '203.0.113.7' });
  });

  it.each([
    ['deflate', 'deflate', Buffer.from('x')],
    ['a body that is not gzip', 'gzip', Buffer.from('{"streams":[]}')],
  ])('refuses %s', async (_name, encoding, body) => {
    receiver = await startLokiReceiver();
    const res = await fetch(`${receiver.url}/loki/api/v1/push`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body });
    expect(res.status).toBe(400);
  });

  it('refuses a body that is not sent as application/json', async () => {
    receiver = await startLokiReceiver();
    expect((await push(receiver, good, 'text/plain')).status).toBe(400);
  });

  it('the shipper builds bodies it accepts, several severities and out-of-order times included', () => {
    const entry = (severity: string, timeMs: number) => logEntry('wse-1', 'wowzastreamingengine_error', '', { 'x-severity': severity }, timeMs);
    const entries = [entry('WARN', 2000), entry('ERROR', 1000), entry('WARN', 1000), entry('weird', 5), entry('', 7)];
    expect(validateLokiPush(JSON.parse(JSON.stringify(buildLokiPush(entries))))).toMatchObject({ ok: true });
    // What the sink sends: the same body, written piece by piece.
    expect(validateLokiPush(JSON.parse(encodeLokiPush(entries).toString('utf8')))).toMatchObject({ ok: true });
  });

  it('goes down (refused, then 503) and comes back on the same port', async () => {
    receiver = await startLokiReceiver();
    await receiver.down('refuse');
    await expect(push(receiver, good)).rejects.toThrow();
    await receiver.down('unavailable');
    expect((await push(receiver, good)).status).toBe(503);
    expect(receiver.unavailableAnswers).toBe(1);
    await receiver.up();
    expect((await push(receiver, good)).status).toBe(204);
    expect(receiver.pushes).toBe(1);
    expect(receiver.rejections).toEqual([]);
  });
});
