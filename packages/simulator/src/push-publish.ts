import { DEFAULT_INSTANCE, type AppNode } from './topology.js';

/**
 * `{A}/pushpublish/mapentries`: the stream targets of an application, with every field of the server's
 * PushPublishStreamAppConfig model (test/fixtures/reference/wse-swagger-4.9.0, MODELS.md). A real entry carries all
 * of them, most unset; the simulator sets the ones an RTMP target uses and leaves the others at their type's
 * empty value. Entries carry secrets (`password`, the destination `streamName`), as real ones do (wowza-api.md).
 */

const BOOLEANS = [
  'adaptiveStreaming', 'akamai.hdNetwork', 'akamai.sendToBackupServer', 'autoStartTranscoder', 'debugLog', 'debugLogChildren', 'debugPackets',
  'enabled', 'facebook.continuousLive', 'facebook.useAppSecret', 'http.fakePosts', 'http.playlistAcrossSessions', 'http.writerDebug',
  'icecast2.public', 'removeDefaultAppInstance', 'rtpWrap', 'sendFCPublish', 'sendOriginalTimecodes', 'sendReleaseStream', 'sendSSL',
  'sendStreamCloseCommands', 'shoutcast.public', 'srtTimestampBasedDeliveryMode', 'srtTooLatePacketDrop', 'wowzaCloud.adaptiveStreaming',
] as const;
const INTEGERS = [
  'http.playlistCount', 'http.playlistTimeout', 'port', 'srtConnectTimeout', 'srtFlightFlagSize', 'srtInputBandwidth', 'srtKeyAnnounce',
  'srtKeyLength', 'srtKeyRefreshRate', 'srtLatency', 'srtMaximumBandwidth', 'srtMaximumSegmentSize', 'srtMinimumVersion',
  'srtOverheadBandwidth', 'srtPeerIdleTimeout', 'srtSendBufferSize', 'srtSendBufferSizeUDP', 'srtTimesToPrintStats', 'streamWaitTimeout',
  'timeToLive', 'wowzaVideoTranscoder.height', 'wowzaVideoTranscoder.width',
] as const;
const STRINGS = [
  'adaptiveGroup', 'adaptiveGroups', 'akamai.destinationServer', 'akamai.eventName', 'akamai.hostId', 'akamai.streamId', 'appInstance',
  'application', 'audioPort', 'childProfile', 'connectionCode', 'connectionFlashVersion', 'cupertino.renditions', 'destinationServer',
  'entryName', 'facebook.360Projection', 'facebook.accessToken', 'facebook.description', 'facebook.destId', 'facebook.destName',
  'facebook.destType', 'facebook.privacy', 'facebook.title', 'facebook.userName', 'group.name', 'group.streamMatcher', 'host',
  'icecast2.aim', 'icecast2.description', 'icecast2.destination', 'icecast2.genre', 'icecast2.icq', 'icecast2.irc', 'icecast2.metaname',
  'icecast2.name', 'icecast2.url', 'localBindAddress', 'mpegdash.audioRepresentationId', 'mpegdash.videoRepresentationId',
  'originalTimecodeThreshold', 'password', 'playbackHost', 'profile', 'queryString', 'sanjose.representationId', 'secureTokenSharedSecret',
  'sessionStatus', 'shoutcast.aim', 'shoutcast.destination', 'shoutcast.genre', 'shoutcast.icq', 'shoutcast.irc', 'shoutcast.metaname',
  'shoutcast.name', 'shoutcast.url', 'sourceStreamName', 'srtPassPhrase', 'srtStreamId', 'streamName', 'userName', 'videoPort',
  'wowzaCloud.accountAccessKey', 'wowzaCloud.accountApiKey', 'wowzaCloud.accountId', 'wowzaCloud.accountName', 'wowzaCloud.playbackUrl',
  'wowzaCloud.targetId', 'wowzaVideo.liveStreamEmbedCode', 'wowzaVideo.liveStreamId', 'wowzaVideo.liveStreamPlayerUrl',
  'wowzaVideo.playbackUrl', 'wowzaVideo.region', 'wowzaVideo.streamTargetId', 'wowzaVideoTranscoder.region',
] as const;

export type MapEntry = Record<string, string | number | boolean>;

const UNSET: MapEntry = Object.fromEntries([...BOOLEANS.map((k) => [k, false]), ...INTEGERS.map((k) => [k, 0]), ...STRINGS.map((k) => [k, ''])]);

/** One RTMP target per source stream of an application with stream targets; none otherwise. */
export function mapEntries(a: AppNode): MapEntry[] {
  if (!a.streamTargetsEnabled) return [];
  return [...a.streams.values()]
    .filter((s) => s.renditionOf === undefined)
    .map((s) => ({
      ...UNSET,
      entryName: `${s.name}-rtmp`,
      profile: 'rtmp',
      enabled: true,
      // `Active` while pushing; other strings otherwise (wowza-api.md).
      sessionStatus: s.targetStatus ?? (s.connected ? 'Active' : 'Waiting'),
      sourceStreamName: s.name,
      host: 'live.example.net',
      port: 1935,
      application: 'ingest',
      appInstance: DEFAULT_INSTANCE,
      streamName: `${s.name}-key-7f3a9c`,
      userName: 'publisher',
      password: 'push-secret',
      sendFCPublish: true,
      sendReleaseStream: true,
      sendStreamCloseCommands: true,
      connectionFlashVersion: 'LNX 9,0,124,2',
      originalTimecodeThreshold: '0x100000',
      streamWaitTimeout: 5000,
      timeToLive: 63,
    }));
}
