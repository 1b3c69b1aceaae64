import { M } from '../metrics/definitions.js';
import type { Labels } from '../metrics/metric-set.js';
import { urlScheme } from '../base/redact.js';
import type { Collector } from './collector.js';
import type { StreamRef } from './discovery.js';

/** The labels that name one incoming stream (rendition only when reported under its base stream). */
export function streamLabels(server: string, s: StreamRef): Labels {
  const labels: Record<string, string> = { server, vhost: s.vhost, application: s.app, app_instance: s.instance, stream: s.label };
  if (s.rendition !== undefined) labels.rendition = s.rendition;
  return labels;
}

/**
 * Instance lists (`{A}/instances`, fetched by discovery): stream counts per instance and, per incoming
 * stream, connected/recording state and source facts. Costs no request beyond discovery.
 */
export const instanceCollector: Collector = {
  name: 'instance',
  description: 'instances and incoming stream state ({A}/instances)',
  async poll(ctx, out) {
    const topology = await ctx.discovery.get(ctx.signal);
    for (const { vhost, app, instance } of topology.instances) {
      const labels = { server: ctx.server, vhost, application: app, app_instance: instance.name };
      out.add(M.instanceIncomingStreams, labels, instance.incomingStreams.length);
      out.add(M.instanceOutgoingStreams, labels, instance.outgoingStreams?.length);
      out.add(M.instanceRecorders, labels, instance.recorders?.length);
    }
    for (const s of topology.streams) {
      const labels = streamLabels(ctx.server, s);
      out.add(M.streamConnected, labels, s.item.isConnected ? 1 : 0);
      out.add(M.streamRecording, labels, s.item.isRecordingSet ? 1 : 0);
      // Only the scheme of sourceIp: pulled streams carry credentials in the URL.
      out.add(M.streamInfo, { ...labels, source_scheme: urlScheme(s.item.sourceIp), stream_manager: s.item.isStreamManagerStream ? 'true' : 'false' }, 1);
    }
    out.add(M.streamsDropped, { server: ctx.server }, topology.droppedStreams);
    // Discovery left these out (their names cannot be labels): counted here, with the stream cap's count.
    for (const [label, n] of topology.tooLong) out.drop(label, 'too_long', n);
  },
};
