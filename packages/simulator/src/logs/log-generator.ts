import { SeededRandom } from '../seeded.js';
import type { LogRecord, LogType } from './log-format.js';

/**
 * Realistic log records: the events, categories and severities of a WSE server whose clients connect, play
 * and stop, whose publishers come and go, with the occasional warning, error and debug line, and comments
 * in any language (multi-byte UTF-8, sometimes long).
 */

export interface StreamRef {
  vhost: string;
  app: string;
  stream: string;
}

const SERVER_IP = '192.0.2.1';
const AGENTS = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.0.0 Safari/537.36',
  'VLC/3.0.20 LibVLC/3.0.20',
  'Lavf/60.16.100',
  'AppleCoreMedia/1.0.0.21D50 (iPhone; U; CPU OS 17_3 like Mac OS X; en_us)',
  'ExoPlayerLib/2.19.1',
] as const;
const PUBLISHERS = ['FMLE/3.0 (compatible; FMSc/1.0)', 'OBS-Studio/30.0.2 (linux)', 'Wirecast/15.1.2', 'Larix Broadcaster/1.3.9'] as const;
const PLAY_PROTOCOLS = [
  ['cupertino', 'http (cupertino)', '/playlist.m3u8'],
  ['mpegdash', 'http (mpegdash)', '/manifest.mpd'],
  ['rtmp', 'rtmp', ''],
  ['rtsp', 'rtsp', ''],
  ['webrtc', 'webrtc', ''],
] as const;
const WARNINGS = [
  'Stream «{s}»: bitrate dropped below 500 kbps — vérifiez l’encodeur',
  'Client {ip} (東京オフィス) reconnected after 3 s of silence',
  'Überlast: {n} Verbindungen auf {v}, Warteschlange wächst',
  'Low memory: heap at 87% of 3160MB, GC pauses above 400 ms',
  'Keyframe interval of {n} s on {s} is too long for low-latency HLS',
  'Transcoder: decoder fell behind on {s}, dropping frames (📉 {n} fps)',
] as const;
const ERRORS = [
  'RTSP source unreachable for {s}: connection refused, retrying in 10 s (attempt {n}/∞)',
  'Failed to write recording for {s}: No space left on device',
  'Handshake failed from {ip}: invalid RTMP version byte 0x{n}',
  'Ошибка: поток {s} отклонён — неверный ключ публикации',
] as const;
const DEBUGS = [
  'session {n}: sending HLS chunk {n} for {s} (duration 2.002 s)',
  'RTP sequence gap on {s}: expected {n}, got {n}',
  'pulse: {n} sockets open, {n} idle, 0 closing',
] as const;

export class LogGenerator {
  private readonly rnd: SeededRandom;
  private clientId = 100_000;

  constructor(
    seed: number,
    private readonly streams: () => StreamRef[],
  ) {
    this.rnd = new SeededRandom(seed);
  }

  /** What a server writes as it starts: server, vhosts and applications start, publishers connect. */
  startup(type: LogType, version: string): LogRecord[] {
    const streams = this.streams();
    const vhosts = [...new Set(streams.map((s) => s.vhost))];
    const apps = [...new Set(streams.map((s) => `${s.vhost}\u0000${s.app}`))].map((k) => k.split('\u0000') as [string, string]);
    const out: LogRecord[] = [{ 'x-event': 'server-start', 'x-category': 'server', 'x-severity': 'INFO', 'x-status': 200, 'x-comment': `${version} started` }];
    for (const v of vhosts) out.push({ 'x-event': 'vhost-start', 'x-category': 'vhost', 'x-severity': 'INFO', 'x-status': 200, 'x-ctx': v, 'x-vhost': v });
    for (const [v, a] of apps) out.push({ 'x-event': 'app-start', 'x-category': 'application', 'x-severity': 'INFO', 'x-status': 200, 'x-ctx': `${a}/_definst_`, 'x-vhost': v, 'x-app': a, 'x-appinst': '_definst_' });
    if (type === 'wowzastreamingengine_access') for (const s of streams) out.push(this.streamEvent('publish', s));
    return out;
  }

  /** The next record for a log type. */
  next(type: LogType): LogRecord {
    if (type === 'wowzastreamingengine_stats') return this.stats();
    if (type === 'wowzastreamingengine_error') {
      const severity = this.rnd.weighted([['WARN', 5], ['ERROR', 3], ['INFO', 2], ['DEBUG', 2]] as const);
      return this.comment(severity);
    }
    const event = this.rnd.weighted([
      ['play', 25], ['stop', 15], ['connect-pending', 8], ['connect', 10], ['disconnect', 10], ['publish', 3], ['unpublish', 3],
      ['pause', 2], ['seek', 2], ['create', 3], ['destroy', 3], ['announce', 1], ['record', 1], ['recordstop', 1], ['comment', 12],
    ] as const);
    if (event === 'comment') return this.comment(this.rnd.weighted([['WARN', 4], ['ERROR', 2], ['DEBUG', 5], ['INFO', 1]] as const));
    if (event === 'connect-pending' || event === 'connect' || event === 'disconnect') return this.sessionEvent(event);
    return this.streamEvent(event, this.pickStream());
  }

  private pickStream(): StreamRef {
    const streams = this.streams();
    return streams.length > 0 ? this.rnd.pick(streams) : { vhost: '_defaultVHost_', app: 'live', stream: 'stream1' };
  }

  private clientIp(): string {
    return `203.0.113.${this.rnd.int(1, 254)}`;
  }

  private fill(template: string, s: StreamRef): string {
    return template.replace(/\{(\w)\}/g, (_, k: string) =>
      k === 's' ? s.stream : k === 'v' ? s.vhost : k === 'ip' ? this.clientIp() : String(this.rnd.int(2, 9999)),
    );
  }

  private sessionEvent(event: 'connect-pending' | 'connect' | 'disconnect'): LogRecord {
    const s = this.pickStream();
    const ip = this.clientIp();
    const duration = event === 'disconnect' ? (this.rnd.next() * 3600).toFixed(3) : '0.0';
    return {
      'x-event': event,
      'x-category': 'session',
      'x-severity': 'INFO',
      'x-status': event === 'connect-pending' ? 100 : 200,
      'x-ctx': ip,
      'x-vhost': s.vhost,
      'x-app': s.app,
      'x-appinst': '_definst_',
      'x-duration': duration,
      's-ip': SERVER_IP,
      's-port': 1935,
      's-uri': `rtmp://${SERVER_IP}:1935/${s.app}`,
      'c-ip': ip,
      'c-port': this.rnd.int(1024, 65535),
      'c-proto': 'rtmp',
      'c-user-agent': this.rnd.pick(PUBLISHERS),
      'c-client-id': this.clientId++,
      'cs-bytes': this.rnd.int(3000, 4000),
      'sc-bytes': this.rnd.int(3000, 4000),
      'cs-uri-stem': `rtmp://${SERVER_IP}:1935/${s.app}`,
    };
  }

  private streamEvent(event: string, s: StreamRef): LogRecord {
    const ip = this.clientIp();
    const publishing = event === 'publish' || event === 'unpublish' || event === 'announce' || event === 'record' || event === 'recordstop';
    const [proto, cproto, suffix] = publishing ? (['rtmp', 'rtmp', ''] as const) : this.rnd.pick(PLAY_PROTOCOLS);
    const uri = proto === 'cupertino' || proto === 'mpegdash' ? `http://${SERVER_IP}:1935/${s.app}/${s.stream}${suffix}` : `${proto}://${SERVER_IP}:1935/${s.app}/${s.stream}`;
    const seconds = event === 'stop' || event === 'unpublish' || event === 'recordstop' ? this.rnd.next() * 5400 : 0;
    const bytes = Math.floor(seconds * this.rnd.int(50_000, 500_000));
    return {
      'x-event': event,
      'x-category': event === 'announce' ? 'rtsp' : 'stream',
      'x-severity': 'INFO',
      'x-status': 200,
      'x-ctx': s.stream,
      'x-vhost': s.vhost,
      'x-app': s.app,
      'x-appinst': '_definst_',
      'x-duration': seconds.toFixed(3),
      's-ip': SERVER_IP,
      's-port': 1935,
      's-uri': uri,
      'c-ip': ip,
      'c-port': this.rnd.int(1024, 65535),
      'c-proto': cproto,
      'c-user-agent': publishing ? this.rnd.pick(PUBLISHERS) : this.rnd.pick(AGENTS),
      'c-client-id': this.clientId++,
      'cs-bytes': publishing ? bytes : this.rnd.int(300, 4000),
      'sc-bytes': publishing ? this.rnd.int(300, 4000) : bytes,
      'x-stream-id': this.rnd.int(1, 20),
      'x-spos': Math.floor(seconds * 1000),
      'cs-stream-bytes': publishing ? bytes : 0,
      'sc-stream-bytes': publishing ? 0 : bytes,
      'x-sname': s.stream,
      'x-file-name': event.startsWith('record') ? `${s.stream}.mp4` : undefined,
      'x-file-ext': event.startsWith('record') ? 'mp4' : undefined,
      'x-suri': uri,
      'x-suri-stem': uri,
      'cs-uri-stem': uri,
    };
  }

  private comment(severity: 'INFO' | 'WARN' | 'ERROR' | 'DEBUG'): LogRecord {
    const s = this.pickStream();
    const pool = severity === 'ERROR' ? ERRORS : severity === 'DEBUG' ? DEBUGS : WARNINGS;
    let text = severity === 'INFO' ? `Application ${s.app}/_definst_ health check ok (${this.rnd.int(1, 500)} ms)` : this.fill(this.rnd.pick(pool), s);
    // Now and then a very long comment, as stack traces and dumped configurations are.
    if (this.rnd.next() < 0.05) text += ' | ' + Array.from({ length: 40 }, (_, i) => `at com.wowza.wms.stream.MediaStream.step${i}(MediaStream.java:${100 + i})`).join(' ');
    return {
      'x-event': 'comment',
      'x-category': severity === 'ERROR' && s.app === 'cameras' ? 'rtsp' : this.rnd.pick(['server', 'vhost', 'application', 'session', 'stream'] as const),
      'x-severity': severity,
      'x-status': severity === 'ERROR' ? 500 : 200,
      'x-ctx': s.stream,
      'x-comment': text,
      'x-vhost': s.vhost,
      'x-app': s.app,
      'x-appinst': '_definst_',
      'x-sname': s.stream,
      'c-client-id': this.rnd.int(100_000, 999_999),
    };
  }

  private stats(): LogRecord {
    const s = this.pickStream();
    return {
      'x-event': 'comment',
      'x-category': 'stream',
      'x-severity': 'INFO',
      'x-status': 200,
      'x-ctx': 'stats',
      'x-sname': s.stream,
      'x-comment': `${s.vhost}/${s.app}/${s.stream}: in=${(this.rnd.next() * 6).toFixed(2)}Mbps out=${(this.rnd.next() * 200).toFixed(1)}Mbps viewers=${this.rnd.int(0, 400)}`,
    };
  }
}
