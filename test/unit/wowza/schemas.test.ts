import { describe, expect, it } from 'vitest';
import { licenseExpiry, versionOf } from '../../../src/collectors/status.js';
import { protocolLabel } from '../../../src/collectors/protocol.js';
import { M } from '../../../src/metrics/definitions.js';
import { mergeRendered, renderSet } from '../../../src/metrics/exposition.js';
import { MetricSet } from '../../../src/metrics/metric-set.js';
import { redactUrl, urlScheme } from '../../../src/base/redact.js';
import { ApplicationList, CurrentStats, InstanceList, LogFileList, LogTypeList, MachineCurrent, parseJavaSize, VHostList } from '../../../src/wowza/schemas.js';

describe('response schemas accept what real servers send', () => {
  it('machine values as numbers, numeric strings or objects holding a value', () => {
    const m = MachineCurrent.parse({ cpuIdle: 90, cpuUser: '7', cpuSystem: { value: 3 }, heapUsed: { value: '123', unit: 'bytes' }, extra: 'kept' });
    expect(m).toMatchObject({ cpuIdle: 90, cpuUser: 7, cpuSystem: 3, heapUsed: 123, extra: 'kept' });
  });
  it('rejects a non-numeric value, or an object without a value, naming the field', () => {
    const r = MachineCurrent.safeParse({ cpuIdle: 'lots' });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.path).toEqual(['cpuIdle']);
    // The first numeric-looking member is not a value: it could be a version or a timestamp.
    const o = MachineCurrent.safeParse({ heapUsed: { version: '1.0', bytes: 123 } });
    expect(o.success).toBe(false);
    expect(o.error!.issues[0]!.path).toEqual(['heapUsed']);
    expect(o.error!.issues[0]!.message).toMatch(/expected a number, or an object holding it in "value"; got \{"version":"1.0","bytes":123\}/);
  });
  it('appType null, booleans as strings, null lists', () => {
    const a = ApplicationList.parse({ applications: [{ id: 'vod', appType: null, dvrEnabled: 'false', transcoderEnabled: true }] });
    expect(a.applications[0]).toMatchObject({ appType: null, dvrEnabled: false, transcoderEnabled: true });
    expect(InstanceList.parse({ instanceList: null }).instanceList).toEqual([]);
    const i = InstanceList.parse({ instanceList: [{ name: '_definst_', incomingStreams: [{ name: 'cam', isConnected: 'true' }] }] });
    expect(i.instanceList[0]!.incomingStreams[0]!.isConnected).toBe(true);
    // Lists the reference does not promise stay absent rather than read as zero.
    expect(i.instanceList[0]!.recorders).toBeUndefined();
  });
  it('a missing list wrapper key is an unreadable answer naming the key', () => {
    const cases: Array<[{ safeParse(v: unknown): { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } } }, unknown, PropertyKey[], string]> = [
      [VHostList, { serverName: '_defaultServer_' }, ['vhosts'], 'vhosts'],
      [ApplicationList, { serverName: '_defaultServer_', version: '1' }, ['applications'], 'applications'],
      [InstanceList, { serverName: '_defaultServer_' }, ['instanceList'], 'instanceList'],
      [InstanceList, { instanceList: [{ name: '_definst_' }] }, ['instanceList', 0, 'incomingStreams'], 'incomingStreams'],
      [LogFileList, { serverName: '_defaultServer_' }, ['serverLogFiles'], 'serverLogFiles'],
      [LogTypeList, {}, ['serverLogType'], 'serverLogType'],
    ];
    for (const [schema, body, path, key] of cases) {
      const r = schema.safeParse(body);
      expect(r.success, key).toBe(false);
      expect(r.error!.issues[0]!.path).toEqual(path);
      expect(r.error!.issues[0]!.message).toBe(`missing: the answer has no "${key}" list`);
    }
  });
  it('names items whose fields the reference does not show by id, name or href', () => {
    const v = VHostList.parse({ vhosts: [{ id: 'a' }, { name: 'b' }, { href: '/v2/servers/_defaultServer_/vhosts/c%20d' }] });
    expect(v.vhosts.map((x) => x.id)).toEqual(['a', 'b', 'c d']);
    const bad = VHostList.safeParse({ vhosts: [{ connectingPort: 1935 }] });
    expect(bad.error!.issues[0]!.path).toEqual(['vhosts', 0, 'id']);
    // A log file without a name cannot be read and is skipped; the others stay.
    const f = LogFileList.parse({ serverLogFiles: [{ href: '/v2/servers/_defaultServer_/logfiles/x.log' }, { fileSize: 3 }, { id: 'y.log' }] });
    expect(f.serverLogFiles.map((x) => x.id)).toEqual(['x.log', 'y.log']);
  });
  it('connection maps keep unknown protocols', () => {
    const c = CurrentStats.parse({ totalConnections: 3, connectionCount: { RTMP: 1, WEBRTC: '2' } });
    expect(c.connectionCount).toEqual({ RTMP: 1, WEBRTC: 2 });
  });
  it('java heap sizes', () => {
    expect(parseJavaSize('3160MB')).toBe(3160 * 1024 * 1024);
    expect(parseJavaSize('4G')).toBe(4 * 1024 ** 3);
    expect(parseJavaSize(1024)).toBe(1024);
    expect(parseJavaSize('lots')).toBeUndefined();
  });
});

describe('status facts', () => {
  it('version and build from the version string', () => {
    expect(versionOf({ serverVersion: 'Wowza Streaming Engine 4.9.4 build20250114124522' } as never)).toEqual({ version: '4.9.4', build: '20250114124522' });
    expect(versionOf({ serverVersion: 'x', serverBuild: 'b1' } as never)).toEqual({ version: 'x', build: 'b1' });
  });
  it('licence expiry as UTC midnight, absent when empty', () => {
    expect(licenseExpiry('2027-03-31')).toBe(Date.UTC(2027, 2, 31) / 1000);
    expect(licenseExpiry('')).toBeUndefined();
    expect(licenseExpiry(null)).toBeUndefined();
  });
});

describe('labels never carry secrets', () => {
  it('strips credentials from source URLs', () => {
    expect(redactUrl('rtsp://camuser:campass@192.0.2.10:554/live')).toBe('rtsp://192.0.2.10:554/live');
    expect(redactUrl('http://h/x?token=abc&x=1')).toBe('http://h/x?token=REDACTED&x=1');
    expect(urlScheme('rtsp://camuser:campass@192.0.2.10/live')).toBe('rtsp');
    expect(urlScheme('wowz://198.51.100.7:50213')).toBe('wowz');
    expect(urlScheme('local (Transcoder)')).toBe('local');
    expect(urlScheme('198.51.100.7')).toBe('unknown');
  });
  it('maps protocols to the contract names', () => {
    // Keys outside the documented set are summed as `other` (issue 41): a server cannot mint a series per key.
    expect(['RTMP', 'CUPERTINO', 'MPEGDASH', 'SANJOSE', 'SMOOTH', 'RTP', 'WEBM', 'DVRCHUNKS', 'New Thing'].map(protocolLabel)).toEqual([
      'rtmp', 'hls', 'mpeg_dash', 'hds', 'smooth', 'rtsp', 'webm', 'dvr_chunks', 'other',
    ]);
  });
});

describe('exposition', () => {
  it('merges families from several sets under one HELP/TYPE and escapes labels', () => {
    const a = new MetricSet();
    a.add(M.streamConnected, { server: 's1', stream: 'a"b\\c\nd' }, 1);
    a.add(M.streamConnected, { server: 's1', stream: 'x' }, null);
    const b = new MetricSet();
    b.add(M.streamConnected, { server: 's2', stream: 'y', rendition: '' }, 0);
    b.add(M.vhostReceived, { server: 's2' }, 1e21);
    const text = mergeRendered([renderSet(a), renderSet(b)]);
    expect(text).toBe(
      '# HELP wowza_stream_connected 1 when the incoming stream is connected, else 0.\n' +
        '# TYPE wowza_stream_connected gauge\n' +
        'wowza_stream_connected{server="s1",stream="a\\"b\\\\c\\nd"} 1\n' +
        'wowza_stream_connected{server="s2",stream="y"} 0\n' +
        '# HELP wowza_vhost_received_bytes_total Bytes received by the virtual host since it started.\n' +
        '# TYPE wowza_vhost_received_bytes_total counter\n' +
        'wowza_vhost_received_bytes_total{server="s2"} 1e+21\n',
    );
  });
});
