import { M } from '../metrics/definitions.js';
import { MapEntry } from '../wowza/schemas.js';
import type { Collector } from './collector.js';
import { readEach } from './current-stats.js';

/** sessionStatus values wowza-api.md names; others are kept and counted (LabelVocabulary). */
export const KNOWN_TARGET_STATUSES = ['Active', 'Waiting', 'Error', 'Idle', 'Disabled'];
const PROFILES = ['rtmp', 'rtmps', 'cupertino', 'sanjose', 'smooth', 'mpegdash', 'srt', 'rtp', 'facebook', 'wowzacloud', 'wowzavideo', 'akamai', 'shoutcast', 'icecast2'];

/**
 * Stream targets (push publishing): `{A}/pushpublish/mapentries`, one request per application whose list item says
 * `streamTargetsEnabled: true` and none for the others. Entries carry secrets (a password, the stream key in
 * `streamName`, tokens and keys; wowza-api.md): the entry schema strips every field it does not name, so none of
 * them gets past parsing, and `streamName` is not a label (`source_stream` is the local stream it pushes).
 */
export const streamTargetCollector: Collector = {
  name: 'stream_target',
  description: 'stream targets of applications with streamTargetsEnabled ({A}/pushpublish/mapentries)',
  async poll(ctx, out) {
    const topology = await ctx.discovery.get(ctx.signal);
    const apps = topology.apps.filter((a) => a.app.streamTargetsEnabled === true);
    await readEach(
      ctx,
      apps,
      (a) => `${a.vhost}/${a.app.id}`,
      (a) => ctx.limit(() => ctx.client.mapEntries(a.vhost, a.app.id, ctx.signal)),
      (a, list) => {
        for (const raw of list.mapEntries) {
          const parsed = MapEntry.safeParse(raw);
          if (!parsed.success) {
            out.drop('mapEntries', 'unreadable');
            continue;
          }
          const e = parsed.data;
          const profile = ctx.vocabulary('profile', PROFILES).label((e.profile ?? '').toLowerCase());
          const labels = {
            server: ctx.server,
            vhost: a.vhost,
            application: a.app.id,
            entry: e.entryName,
            profile: profile.value,
            // A host name, never a URL: anything after it (a path, credentials) is not a label.
            host: (e.host ?? '').replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/[/@?#].*$/, '').slice(0, 255),
            source_stream: e.sourceStreamName ?? '',
          };
          const status = ctx.vocabulary('sessionStatus', KNOWN_TARGET_STATUSES).label(e.sessionStatus);
          if (!status.isKnown) out.unknown('sessionStatus', status.value);
          out.add(M.targetEnabled, labels, e.enabled === false ? 0 : 1);
          out.add(M.targetActive, labels, (e.sessionStatus ?? '').trim().toLowerCase() === 'active' ? 1 : 0);
          out.add(M.targetStatus, { ...labels, status: status.value }, 1);
        }
      },
    );
  },
};
