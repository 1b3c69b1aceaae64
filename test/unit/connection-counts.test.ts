import { describe, expect, it } from 'vitest';
import { parseConnectionCounts, streamKey } from '../../src/wowza/connection-counts.js';

const TREE = `<?xml version="1.0"?>
<WowzaStreamingEngine>
  <ConnectionsCurrent>12</ConnectionsCurrent>
  <MessagesInBytesRate>1234.0</MessagesInBytesRate>
  <VHost>
    <Name>_defaultVHost_</Name>
    <TimeRunning>1234.5</TimeRunning>
    <ConnectionsLimit>0</ConnectionsLimit>
    <Application>
      <Name>live</Name>
      <Status>loaded</Status>
      <ApplicationInstance>
        <Name>_definst_</Name>
        <Stream>
          <Name>cam1.sdp</Name>
          <SessionsFlash>3</SessionsFlash>
          <SessionsCupertino>5</SessionsCupertino>
          <SessionsSanJose>0</SessionsSanJose>
          <SessionsSmooth>0</SessionsSmooth>
          <SessionsRTSP>1</SessionsRTSP>
          <SessionsMPEGDash>2</SessionsMPEGDash>
          <SessionsWebRTC>4</SessionsWebRTC>
          <SomethingNew><Deep>x</Deep></SomethingNew>
          <SessionsTotal>15</SessionsTotal>
        </Stream>
        <Stream><Name>cam2</Name><SessionsTotal>0</SessionsTotal></Stream>
      </ApplicationInstance>
    </Application>
  </VHost>
</WowzaStreamingEngine>`;

const FLAT = `<?xml version="1.0"?>
<WowzaStreamingEngine>
<Stream vhostName="_defaultVHost_" applicationName="live" appInstanceName="_definst_" streamName="a&amp;b" sessionsFlash="1" sessionsCupertino="2" sessionsSanJose="0" sessionsSmooth="0" sessionsRTSP="0" sessionsMPEGDash="0" sessionsTotal="3"/>
</WowzaStreamingEngine>`;

describe('connectioncounts document', () => {
  it('reads the tree: names from Name elements, sessions by protocol, unknown elements ignored or kept as protocols', () => {
    const m = parseConnectionCounts(TREE);
    expect(m.size).toBe(2);
    const s = m.get(streamKey('_defaultVHost_', 'live', '_definst_', 'cam1.sdp'))!;
    expect(s.sessions).toEqual({ Flash: 3, Cupertino: 5, SanJose: 0, Smooth: 0, RTSP: 1, MPEGDash: 2, WebRTC: 4 });
    expect(s.total).toBe(15);
    expect(m.get(streamKey('_defaultVHost_', 'live', '_definst_', 'cam2'))!.total).toBe(0);
  });

  it('reads the flat form from attributes, entities decoded', () => {
    const s = parseConnectionCounts(FLAT).get(streamKey('_defaultVHost_', 'live', '_definst_', 'a&b'))!;
    expect(s).toMatchObject({ sessions: { Flash: 1, Cupertino: 2, SanJose: 0, Smooth: 0, RTSP: 0, MPEGDash: 0 }, total: 3 });
  });

  it('says what is wrong with a document it cannot read', () => {
    expect(() => parseConnectionCounts('<html><body>login</body></html>')).toThrow(/root element is <html>, not <WowzaStreamingEngine>/);
    expect(() => parseConnectionCounts('<WowzaStreamingEngine><VHost>')).toThrow(/not well-formed XML/);
    expect(() => parseConnectionCounts(TREE.replace('<SessionsFlash>3<', '<SessionsFlash>lots<'))).toThrow(/stream cam1.sdp SessionsFlash is not a count: "lots"/);
    expect(() => parseConnectionCounts('<WowzaStreamingEngine><VHost><Name>v</Name><Application><Name>a</Name><ApplicationInstance><Name>i</Name><Stream><SessionsTotal>1</SessionsTotal></Stream></ApplicationInstance></Application></VHost></WowzaStreamingEngine>')).toThrow(/<Stream> has no <Name>/);
  });
});
