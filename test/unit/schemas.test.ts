import { describe, expect, it } from 'vitest';
import { licenseExpiry, versionOf } from '../../src/collectors/status.js';
import { protocolLabel } from '../../src/collectors/protocol.js';
import { M } from '../../src/metrics/definitions.js';
import { mergeRendered, renderSet } from '../../src/metrics/exposition.js';
import { MetricSet } from '../../src/metrics/metric-set.js';
import { redactUrl, urlScheme } from '../../src/wowza/redact.js';
import { ApplicationList, CurrentStats, InstanceList, MachineCurrent, parseJavaSize } from '../../src/wowza/schemas.js';

describe('response schemas accept what real servers send', () => {
  it('machine values as numbers, numeric strings or objects', () => {
    const m = MachineCurrent.parse({ cpuIdle: 90, cpuUser: '7', cpuSystem: { value: 3 }, heapUsed: { bytes: 123 }, extra: 'kept' });
    expect(m).toMatchObject({ cpuIdle: 90, cpuUser: 7, cpuSystem: 3, heapUsed: 123, extra: 'kept' });
  });
  it('rejects a non-numeric value with the field path', () => {
    const r = MachineCurrent.safeParse({ cpuIdle: 'lots' });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.path).toEqual(['cpuIdle']);
  });
  it('appType null, booleans as strings, null lists', () => {
    const a = ApplicationList.parse({ applications: [{ id: 'vod', appType: null, dvrEnabled: 'false', transcoderEnabled: true }] });
    expect(a.applications[0]).toMatchObject({ appType: null, dvrEnabled: false, transcoderEnabled: true });
    expect(InstanceList.parse({ instanceList: null }).instanceList).toEqual([]);
    const i = InstanceList.parse({ instanceList: [{ name: '_definst_', incomingStreams: [{ name: 'cam', isConnected: 'true' }] }] });
    expect(i.instanceList[0]!.incomingStreams[0]!.isConnected).toBe(true);
    expect(i.instanceList[0]!.recorders).toEqual([]);
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
    expect(urlScheme('198.51.100.7')).toBe('unknown');
  });
  it('maps protocols to the contract names', () => {
    expect(['RTMP', 'CUPERTINO', 'MPEGDASH', 'SANJOSE', 'SMOOTH', 'RTP', 'WEBM', 'DVRCHUNKS', 'New Thing'].map(protocolLabel)).toEqual([
      'rtmp', 'hls', 'mpeg_dash', 'hds', 'smooth', 'rtsp', 'webm', 'dvr_chunks', 'new_thing',
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
