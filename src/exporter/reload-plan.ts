import type { RuntimeConfig } from '../config/load.js';

/**
 * What a reload changes, worked out from the two configurations alone (as Vector's `config/diff.rs` does), so that
 * the composition root only carries it out and a test can check the decision without starting anything.
 */
export interface ReloadPlan {
  /** Settings read only at start that changed: said in the log, applied at the next restart. */
  restartNeeded: ('web' | 'webhooks')[];
  /** The new log level, when it changed. */
  logLevel?: string;
  /** Poll settings changed: every server is polled anew under a new scheduler. */
  repollAll: boolean;
  /** WSE collectors the new configuration turns off (their series are removed), when `repollAll`. */
  collectorsGone: string[];
  /** Only the Wowza Video settings changed: its jobs are replaced, nothing else. */
  restartVideo: boolean;
  /** Log shipping is stopped and started again (positions are kept). */
  restartLogs: boolean;
  /** The target files are read anew. */
  restartServersFiles: boolean;
}

/** The WSE collectors a configuration enables, by name (the registry's order does not matter here). */
type EnabledCollectors = (rt: RuntimeConfig) => readonly string[];

/** What, when it changes, makes every server be polled anew (its scheduling and discovery). */
const pollSettings = (rt: RuntimeConfig) => JSON.stringify({ poll: rt.config.poll, discovery: rt.config.discovery, collectors: rt.collectors });
/** What, when it changes, restarts log shipping. */
const logSettings = (rt: RuntimeConfig) => JSON.stringify({ logs: rt.config.logs, enabled: rt.collectors.logs.enabled });
/** What, when it changes, replaces the Wowza Video job. */
const videoSettings = (rt: RuntimeConfig) => JSON.stringify({ video: rt.config.video, enabled: rt.collectors.video.enabled, token: rt.videoToken });
const serversFilesSettings = (rt: RuntimeConfig) => JSON.stringify([rt.config.servers_files, rt.config.servers_files_refresh_interval, [...rt.modules.keys()]]);

export function planReload(before: RuntimeConfig, next: RuntimeConfig, enabled: EnabledCollectors): ReloadPlan {
  const restartNeeded = (['web', 'webhooks'] as const).filter(
    (key) => JSON.stringify(before.config[key]) !== JSON.stringify(next.config[key]) || (key === 'webhooks' && before.webhookSecret !== next.webhookSecret),
  );
  const repollAll = pollSettings(before) !== pollSettings(next);
  const still = new Set(enabled(next));
  return {
    restartNeeded,
    ...(before.config.log.level !== next.config.log.level ? { logLevel: next.config.log.level } : {}),
    repollAll,
    collectorsGone: repollAll ? enabled(before).filter((name) => !still.has(name)) : [],
    restartVideo: !repollAll && videoSettings(before) !== videoSettings(next),
    restartLogs: logSettings(before) !== logSettings(next),
    restartServersFiles: serversFilesSettings(before) !== serversFilesSettings(next),
  };
}
