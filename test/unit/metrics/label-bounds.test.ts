import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { Discovery } from '../../../src/collectors/discovery.js';
import { instanceCollector } from '../../../src/collectors/instance.js';
import { vocabularyCache } from '../../../src/collectors/label-vocabulary.js';
import { untrackedObjects } from '../../../src/collectors/object-errors.js';
import { eachConnection, protocolLabel, unknownProtocols } from '../../../src/collectors/protocol.js';
import type { PollContext } from '../../../src/collectors/collector.js';
import { ConfigSchema } from '../../../src/config/schema.js';
import { M } from '../../../src/metrics/definitions.js';
import { labelValueTooLong, MAX_LABEL_BYTES, MAX_LABEL_VALUE_BYTES, shortenLabelValue } from '../../../src/metrics/label-bounds.js';
import { MetricSet } from '../../../src/metrics/metric-set.js';
import type { WowzaClient } from '../../../src/wowza/client.js';

/** What eachConnection hands over, as an object; a protocol handed twice would show as a failure here. */
function byProtocol(counts: Record<string, number>, onUnknown?: (key: string) => void): Record<string, number> {
  const out: Record<string, number> = {};
  eachConnection(counts, onUnknown, (protocol, value) => {
    expect(out).not.toHaveProperty(protocol);
    out[protocol] = value;
  });
  return out;
}

describe('protocol labels', () => {
  it('maps every documented key of both sources to the contract names', () => {
    const rest = ['RTMP', 'CUPERTINO', 'MPEGDASH', 'SANJOSE', 'SMOOTH', 'RTP', 'WEBM', 'DVRCHUNKS', 'WEBRTC'];
    expect(rest.map(protocolLabel)).toEqual(['rtmp', 'hls', 'mpeg_dash', 'hds', 'smooth', 'rtsp', 'webm', 'dvr_chunks', 'webrtc']);
    // connectioncounts `Sessions*` names without the prefix (wowza-api.md: Flash = RTMP, RTSP = RTP).
    const sessions = ['Flash', 'Cupertino', 'SanJose', 'Smooth', 'RTSP', 'MPEGDash', 'WebRTC'];
    expect(sessions.map(protocolLabel)).toEqual(['rtmp', 'hls', 'hds', 'smooth', 'rtsp', 'mpeg_dash', 'webrtc']);
  });

  it('anything else is `other`, summed, and only a bounded few of the unknown keys are reported', () => {
    const counts: Record<string, number> = { RTMP: 2, rtmp: 1, CUPERTINO: 4, constructor: 1, __proto__x: 1, ['x'.repeat(1 << 20)]: 1 };
    for (let i = 0; i < 14_000; i++) counts[`K${i}`] = 1;
    const heard: string[] = [];
    expect(byProtocol(counts, (k) => heard.push(k))).toEqual({ rtmp: 3, hls: 4, other: 14_003 });
    expect(heard.length).toBeLessThanOrEqual(21);
  });

  it('maps keys the same once many different keys were met (what it learns of keys is bounded)', () => {
    for (let i = 0; i < 500; i++) protocolLabel(`k${i}`);
    expect(['Flash', 'flash', 'RTMP', 'WebRTC', 'webrtc', 'k1', 'nonsense'].map(protocolLabel)).toEqual(['rtmp', 'rtmp', 'rtmp', 'webrtc', 'webrtc', 'other', 'other']);
    expect(byProtocol({ Flash: 1, flash: 2, Cupertino: 3, k1: 4, k999: 5 })).toEqual({ rtmp: 3, hls: 3, other: 9 });
  });

  it('unknown keys are counted by a bounded, cut name: never the megabyte key, at most 21 names per field', () => {
    const out = new MetricSet();
    const report = unknownProtocols(vocabularyCache(), out, 'sessions');
    report('y'.repeat(1 << 20));
    for (let i = 0; i < 100; i++) report(`K${i}`);
    const names = [...out.unknowns.get('sessions')!.keys()];
    expect(names.length).toBeLessThanOrEqual(21);
    expect(names).toContain('other');
    expect(Math.max(...names.map((n) => n.length))).toBeLessThanOrEqual(64);
  });
});

describe('label value length cap', () => {
  it('is 256 UTF-8 bytes, counted in bytes', () => {
    expect(MAX_LABEL_VALUE_BYTES).toBe(256);
    expect(labelValueTooLong('a'.repeat(256))).toBe(false);
    expect(labelValueTooLong('a'.repeat(257))).toBe(true);
    expect(labelValueTooLong('é'.repeat(128))).toBe(false);
    expect(labelValueTooLong('é'.repeat(129))).toBe(true);
    expect(labelValueTooLong('€'.repeat(86))).toBe(true);
  });

  it('a series with an over-long label value from the server is left out and counted as too_long of that label', () => {
    const out = new MetricSet();
    out.add(M.streamConnected, { server: 's', stream: 'cam1' }, 1);
    out.add(M.streamConnected, { server: 's', stream: 'x'.repeat(257) }, 1);
    out.add(M.serverInfo, { server: 's', version: 'v'.repeat(1 << 20), build: '', license_type: '', mode: '' }, 1);
    expect(out.samples('wowza_stream_connected').map((s) => s.labels.stream)).toEqual(['cam1']);
    expect(out.samples('wowza_server_info')).toEqual([]);
    expect(out.drops.get('stream\u0000too_long')).toBe(1);
    expect(out.drops.get('version\u0000too_long')).toBe(1);
  });

  it('discovery leaves out objects whose names are too long, asks nothing about them, and the instance collector counts them', async () => {
    const long = 'n'.repeat(300);
    const asked: string[] = [];
    const client = {
      vhosts: async () => ({ vhosts: [{ id: '_defaultVHost_' }, { id: long }] }),
      applications: async (v: string) => (asked.push(`apps of ${v.length}`), { applications: [{ id: 'live' }, { id: long }] }),
      instances: async (_v: string, a: string) => (
        asked.push(`instances of ${a}`),
        { instanceList: [{ name: '_definst_', incomingStreams: [{ name: 'cam1' }, { name: long }, { name: 'é'.repeat(200) }] }, { name: long, incomingStreams: [{ name: 'cam2' }] }] }
      ),
    } as unknown as WowzaClient;
    const log = pino({ level: 'silent' });
    const discovery = new Discovery(client, (fn) => fn(), ConfigSchema.parse({}).discovery, 1000, log);
    const topology = await discovery.get(new AbortController().signal);
    expect(asked).toEqual(['apps of 14', 'instances of live']);
    expect(topology.streams.map((s) => s.name)).toEqual(['cam1']);
    expect(Object.fromEntries(topology.tooLong)).toEqual({ vhost: 1, application: 1, app_instance: 1, stream: 2 });

    const out = new MetricSet();
    const ctx = { server: 's', discovery, vocabulary: vocabularyCache(), objects: untrackedObjects(), log, signal: new AbortController().signal } as unknown as PollContext;
    await instanceCollector.poll(ctx, out);
    expect(out.samples('wowza_stream_connected').map((s) => s.labels.stream)).toEqual(['cam1']);
    expect(Object.fromEntries(out.drops)).toEqual({ 'vhost\u0000too_long': 1, 'application\u0000too_long': 1, 'app_instance\u0000too_long': 1, 'stream\u0000too_long': 2 });
  });
});

describe('shortening label values', () => {
  const bytes = (v: string) => Buffer.byteLength(v, 'utf8');
  /** Valid UTF-8 that decodes back to the same text: no lone surrogate, no cut character. */
  const validUtf8 = (v: string) => new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(v, 'utf8')) === v && !/[\ud800-\udfff]/u.test(v);

  it('leaves a value of up to MAX_LABEL_BYTES bytes alone', () => {
    expect(MAX_LABEL_BYTES).toBe(96);
    for (const v of ['', 'cam1', 'a'.repeat(96), 'é'.repeat(48), '3f2a9c1e-8d4b-4c2a-9e1f-7b6a5d4c3b2a_720p']) expect(shortenLabelValue(v)).toBe(v);
  });

  it('keeps a prefix and appends ~ and 16 hex digits of the hash of the whole value, never over the cap', () => {
    const v = 'x'.repeat(250);
    const s = shortenLabelValue(v);
    expect(s).toMatch(/^x{79}~[0-9a-f]{16}$/);
    expect(bytes(s)).toBe(96);
    for (let n = 97; n <= 300; n++) expect(bytes(shortenLabelValue('y'.repeat(n)))).toBeLessThanOrEqual(96);
  });

  it('is unique for names sharing a long prefix, and the same at every call', () => {
    const prefix = 'p'.repeat(240);
    const names = Array.from({ length: 5000 }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`);
    const short = names.map((n) => shortenLabelValue(n));
    expect(new Set(short).size).toBe(5000);
    expect(names.map((n) => shortenLabelValue(n))).toEqual(short);
    // A name one past the cap and the same name one byte longer differ too.
    expect(shortenLabelValue('a'.repeat(97))).not.toBe(shortenLabelValue('a'.repeat(98)));
  });

  it('cuts between characters, never inside one: 2-, 3- and 4-byte characters and surrogate pairs', () => {
    for (const ch of ['é', '€', '😀', '𝄞']) {
      for (let lead = 0; lead < 4; lead++) {
        const v = 'a'.repeat(lead) + ch.repeat(100);
        const s = shortenLabelValue(v);
        expect(bytes(s)).toBeLessThanOrEqual(96);
        expect(bytes(s)).toBeGreaterThan(96 - 4);
        expect(validUtf8(s)).toBe(true);
        expect(v.startsWith(s.slice(0, s.lastIndexOf('~')))).toBe(true);
      }
    }
  });

  it('shortens to any given cap', () => {
    const s = shortenLabelValue('z'.repeat(100), 40);
    expect(s).toMatch(/^z{23}~[0-9a-f]{16}$/);
  });
});
