import { M } from '../metrics/definitions.js';
import { MetricSet } from '../metrics/metric-set.js';
import type { CallOptions, VideoClient } from './client.js';
import { nextRun } from './next-run.js';

/**
 * One poll of Wowza Video schedules: a fresh MetricSet, or a throw (the caller reports the collector as
 * failed and keeps no old values). Runs only when a Video API token is configured.
 */
export async function collectVideoSchedules(
  client: Pick<VideoClient, 'listSchedules'>,
  now: Date,
  opts: CallOptions = {},
): Promise<MetricSet> {
  const schedules = await client.listSchedules(opts);
  const set = new MetricSet();
  const seen = new Set<string>();
  for (const s of schedules) {
    // Two entries with one id would be duplicate series, which Prometheus rejects for the whole scrape.
    if (seen.has(s.id)) continue;
    seen.add(s.id);
    const id = { schedule_id: s.id };
    set.add(
      M.videoScheduleInfo,
      {
        ...id,
        name: s.name ?? '',
        transcoder_id: s.transcoder_id ?? '',
        action_type: s.action_type,
        recurrence_type: s.recurrence_type,
        state: s.state,
      },
      1,
    );
    set.add(M.videoScheduleEnabled, id, s.state === 'enabled' ? 1 : 0);
    const next = nextRun(s, now);
    if (next.start) set.add(M.videoScheduleNextStart, id, next.start.getTime() / 1000);
    if (next.stop) set.add(M.videoScheduleNextStop, id, next.stop.getTime() / 1000);
  }
  return set;
}
