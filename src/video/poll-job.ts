import { ObjectErrorLog } from '../collectors/object-errors.js';
import { defaultRequestTimeoutMs, pollDeadlineMs } from '../config/poll-deadline.js';
import { timedPoll } from '../polling/poll-result.js';
import type { PollJobSpec } from '../polling/scheduler.js';
import type { RuntimeConfig } from '../config/load.js';
import type { Logger } from '../base/logger.js';
import type { SelfMetrics } from '../metrics/self-metrics.js';

/**
 * The Wowza Video schedules collector as a poll job, when a token is configured. Its code is loaded only then, like
 * the log pipeline, the webhook receiver, the web config's TLS and bcrypt, and the status page: a metrics-only
 * `serve` does not carry what it does not run (issue 27; test/e2e/serve-footprint.test.ts lists what it loads).
 */
export async function videoPollJobs(runtime: RuntimeConfig, self: SelfMetrics, logger: Logger): Promise<PollJobSpec[]> {
  if (!runtime.collectors.video.enabled || !runtime.videoToken) return [];
  const [{ VideoClient }, { VideoSchedulesCollector }] = await Promise.all([import('./client.js'), import('./schedules-collector.js')]);
  const server = new URL(runtime.config.video.url).host;
  const intervalMs = runtime.collectors.video.intervalMs;
  const client = new VideoClient({
    url: runtime.config.video.url,
    token: runtime.videoToken,
    // Like the Wowza requests, within the poll deadline when the interval is short.
    timeoutMs: Math.min(10_000, defaultRequestTimeoutMs(intervalMs), pollDeadlineMs(intervalMs)),
    onRequest: (endpoint, code, seconds) => self.observeRequest(server, endpoint, code, seconds),
  });
  const objectErrors = new ObjectErrorLog((reason) => self.objectErrors.inc({ server, collector: 'video', reason }));
  const schedules = new VideoSchedulesCollector(client, { logger: logger.child({ collector: 'video' }), unknownValues: self.videoUnknownValues, objectErrors });
  return [
    {
      server,
      collector: 'video',
      intervalMs,
      setsUp: false,
      poll: async (signal) => {
        const result = await timedPoll('video', () => schedules.collect(new Date(), { signal }));
        return schedules.lastObjects ? { ...result, objects: schedules.lastObjects } : result;
      },
    },
  ];
}
