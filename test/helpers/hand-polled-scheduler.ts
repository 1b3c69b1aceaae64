import { Writable } from 'node:stream';
import { createLogger } from '../../src/base/logger.js';
import { LogsConfigSchema } from '../../src/config/logs.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { createSelfMetrics } from '../../src/metrics/self-metrics.js';
import { SnapshotStore } from '../../src/metrics/snapshot-store.js';
import { Scheduler } from '../../src/polling/scheduler.js';

/**
 * A scheduler with no collectors of its own, for jobs a test adds and polls by hand (`refresh`): every interval is an
 * hour. `store` holds what it would export; `lines` are its log lines at info level and above, as `serve` writes them.
 */
export function handPolledScheduler(): { scheduler: Scheduler; store: SnapshotStore; lines: Array<{ level: number; msg: string }> } {
  const lines: Array<{ level: number; msg: string }> = [];
  const destination = new Writable({ write: (c: Buffer, _e, cb) => cb(void lines.push(JSON.parse(c.toString('utf8')) as { level: number; msg: string })) });
  const store = new SnapshotStore();
  const scheduler = new Scheduler({
    config: ConfigSchema.parse({ logs: LogsConfigSchema.parse({}) }),
    collectors: [],
    intervalOf: () => 3_600_000,
    self: createSelfMetrics(),
    store,
    logger: createLogger({ level: 'info', destination }),
  });
  return { scheduler, store, lines };
}
