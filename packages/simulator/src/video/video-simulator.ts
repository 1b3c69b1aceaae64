import { listen } from '../http-server.js';
import { VideoFaults } from './faults.js';
import { resolveVideoOptions, type VideoSimulatorOptions } from './options.js';
import { createVideoHandler, sendError, VIDEO_API_PATH } from './routes.js';
import { ScheduleStore } from './schedule-store.js';

/**
 * A loopback Wowza Video API (schedules, v1.11) for tests and the demo, answering as the reference shows
 * (test/fixtures/reference/wowza-video-schedules-v1.11.md) and, where it is silent, as docs/wowza-api-notes.md says the
 * service does (the list with limited details per item, Bearer tokens). Shaped like startSimulator: every
 * option has a default, and the result carries the levers tests need (the schedules, request counts, faults).
 */

export type VideoSimulatorFaults = Pick<VideoFaults, 'rateLimit' | 'unknownValue' | 'clear'>;

export interface VideoSimulator {
  /** The API base, e.g. `http://127.0.0.1:40123/api/v1.11`. */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** The account's schedules: put / get / delete / patch, seen by the next answer. */
  readonly schedules: ScheduleStore;
  /** Requests by `METHOD route` (`GET /schedules/{id}`), authorized or not. */
  readonly requests: Map<string, number>;
  /** rateLimit(count, retryAfterSeconds) / unknownValue({field, value, id}) / clear(). */
  readonly faults: VideoSimulatorFaults;
  close(): Promise<void>;
}

export async function startVideoSimulator(opts: VideoSimulatorOptions = {}): Promise<VideoSimulator> {
  const o = resolveVideoOptions(opts);
  const store = new ScheduleStore(o.schedules);
  const faults = new VideoFaults();
  if (o.rateLimit) faults.rateLimit(o.rateLimit.count, o.rateLimit.retryAfterSeconds);
  for (const f of o.unknownValues) faults.unknownValue(f);
  const requests = new Map<string, number>();
  const handle = createVideoHandler({
    store,
    faults,
    tokens: { token: o.token, readOnlyToken: o.readOnlyToken },
    list: { pageSize: o.pageSize, truncateAt: o.truncateAt },
    count: (key) => requests.set(key, (requests.get(key) ?? 0) + 1),
  });
  const listener = await listen({ host: o.host, port: o.port }, (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendError(res, 'internal', 'The simulator failed.');
      else res.destroy();
    });
  });
  let closed: Promise<void> | undefined;
  return {
    url: `${listener.url}${VIDEO_API_PATH}`,
    port: listener.port,
    token: o.token,
    schedules: store,
    requests,
    faults,
    close: () => (closed ??= listener.close()),
  };
}
