import type { MetricSet } from '../metrics/metric-set.js';
import type { Registry } from 'prom-client';
import { BUILD } from '../base/build-info.js';
import type { LastPoll, PollJobSpec } from '../polling/scheduler.js';
import type { PollResult } from '../polling/poll-result.js';
import type { Shard } from '../config/shard.js';
import { M } from '../metrics/definitions.js';
import type { WowzaTarget } from '../wowza/client.js';
import { scrubSecrets } from '../base/secret-scrubber.js';

/**
 * The state `GET /api/v1/status` serves and the status page renders: every server and collector, log shipping,
 * webhooks and Wowza Video, from what the exporter already keeps. The shape is documented (docs/status-api.md)
 * and only grows: a field, once there, keeps its name and meaning. Times are ISO 8601 UTC; a value not known
 * yet is null. Nothing here carries a secret: URLs are validated to hold no credentials, and error messages are
 * the logged ones, scrubbed where they are made, and once more here of every configured secret (shown()).
 */

export interface CollectorStatus {
  name: string;
  /** null until the first poll ended. */
  success: boolean | null;
  /** The error kind of the last poll when it failed (`timeout`, `network`, `http`, `unparsable`...). */
  reason: string | null;
  error: string | null;
  last_poll: string | null;
  duration_seconds: number | null;
  /** The interval in force (longer than configured when the request budget stretches it). */
  interval_seconds: number;
  /** Why the interval is longer than configured; null when it is not. */
  interval_reason: string | null;
  /** Series the last successful poll stored. */
  series: number | null;
  /**
   * Collectors of one request per object (stream, vhost, application): how many objects the last poll read, how many
   * failed (left out while the others stay) and the last failure's reason and message; null for the others.
   */
  objects: { total: number; failed: number; last_reason: string | null; last_error: string | null } | null;
}

export interface ServerStatus {
  name: string;
  url: string;
  /** `wowza_up`: null until a poll ended. */
  up: boolean | null;
  /** Why `up` is false, and the next step (the words of serve's log and of doctor); null while up or pending. */
  down_reason: string | null;
  down_fix: string | null;
  version: string | null;
  build: string | null;
  license_type: string | null;
  license_expires: string | null;
  labels: Record<string, string>;
  /** Streams the last instance poll exported, and those the stream cap left out. */
  streams: number | null;
  streams_dropped: number | null;
  /**
   * Where per-stream viewers come from: `connectioncounts` (one request a cycle; `detected` when found at the default
   * address rather than configured) or `rest` (one request per stream).
   */
  viewers_from: { source: 'connectioncounts' | 'rest'; url: string | null; detected: boolean };
  /** The last recorder and stream_target polls (null before one succeeded; at most 200 each). */
  recorders: RecorderStatus[] | null;
  stream_targets: StreamTargetStatus[] | null;
  collectors: CollectorStatus[];
}

export interface ScheduleStatus {
  id: string;
  name: string;
  state: string;
  enabled: boolean;
  next_start: string | null;
  next_stop: string | null;
}

export interface Status {
  generated_at: string;
  exporter: {
    version: string;
    revision: string;
    started_at: string;
    ready: boolean;
    shard: Shard | null;
    config_last_reload_successful: boolean;
    config_last_reload_success_at: string | null;
  };
  servers: ServerStatus[];
  logs: {
    followers: Array<{
      server: string;
      log_type: string;
      offset_bytes: number | null;
      lag_seconds: number | null;
      /** Bytes and (estimated) lines of the log not read yet, and the seconds to read them at the recent pace; null before the first read. */
      backlog_bytes: number | null;
      backlog_lines: number | null;
      catch_up_seconds: number | null;
      rotations: number;
      rotation_gaps: number;
      read_failures: number;
      /** Age of the oldest line read and not yet acknowledged by every sink; 0 when none waits. */
      oldest_unacked_seconds: number;
      last_error: string | null;
      last_error_at: string | null;
      /** The last read failed and none succeeded since. */
      failing: boolean;
    }>;
    sinks: Array<{ name: string; queue_lines: number; forwarded_lines: number; failures: number; dead_lettered_lines: number }>;
  } | null;
  webhooks: {
    /** How deliveries prove their origin: `jwt`, `token`, or `none` (webhooks.insecure_allow_unauthenticated). */
    auth: 'jwt' | 'token' | 'none';
    events: Array<{ server: string; event: string; count: number }>;
    rejected: Record<string, number>;
    last_event: { name: string; server: string; at: string } | null;
  } | null;
  video: {
    success: boolean | null;
    reason: string | null;
    error: string | null;
    last_poll: string | null;
    schedules: ScheduleStatus[];
  } | null;
}

/** What the last polls said of a server, kept between polls. */
export interface ServerFacts {
  version?: string;
  build?: string;
  licenseType?: string;
  licenseExpiry?: number;
  streams?: number;
  dropped?: number;
  recorders?: RecorderStatus[];
  streamTargets?: StreamTargetStatus[];
}

/** A stream recorder as the last recorder poll read it (no file path: the exporter does not read it). */
export interface RecorderStatus {
  vhost: string;
  application: string;
  app_instance: string;
  recorder: string;
  state: string;
  recording: boolean;
  duration_seconds: number | null;
  size_bytes: number | null;
  error: string | null;
}

/** A stream target (push publishing map entry): never its stream name, password or keys. */
export interface StreamTargetStatus {
  vhost: string;
  application: string;
  entry: string;
  profile: string;
  host: string;
  source_stream: string;
  enabled: boolean;
  active: boolean;
  status: string;
}

/** At most this many recorders and targets per server on the page and in the JSON; the rest are on /metrics. */
const MAX_LISTED = 200;

/** What the last Wowza Video poll said. */
export interface VideoFacts {
  schedules: ScheduleStatus[];
}

/** Keeps the few facts of each poll the status needs, so no poll's whole set is held for it. */
/** The value of metric `name` for the object the `identity` labels of `labels` name, in one poll's set. */
function valuesOf(set: MetricSet, identity: readonly string[]): (name: string, labels: Readonly<Record<string, string>>) => number | undefined {
  const key = (l: Readonly<Record<string, string>>) => identity.map((k) => l[k] ?? '').join('\u0000');
  const cache = new Map<string, Map<string, number>>();
  return (name, labels) => {
    let byKey = cache.get(name);
    if (!byKey) cache.set(name, (byKey = new Map(set.samples(name).map((s) => [key(s.labels), s.value]))));
    return byKey.get(key(labels));
  };
}

/** An error message as shown: what servers and sinks said may hold a secret in any form, whoever forgot to scrub it. */
const shown = (message: string | null | undefined) => (message == null ? null : scrubSecrets(message));

export class StatusFacts {
  readonly servers = new Map<string, ServerFacts>();
  video: VideoFacts | undefined;

  record(spec: PollJobSpec, result: PollResult): void {
    if (!result.ok) return;
    const set = result.set;
    const facts = this.servers.get(spec.server) ?? {};
    if (spec.collector === 'status') {
      const info = set.samples(M.serverInfo.name)[0]?.labels;
      facts.version = info?.version;
      facts.build = info?.build;
      facts.licenseType = info?.license_type;
      facts.licenseExpiry = set.samples(M.serverLicenseExpiry.name)[0]?.value;
    } else if (spec.collector === 'instance') {
      facts.streams = set.samples(M.streamConnected.name).length;
      facts.dropped = set.samples(M.streamsDropped.name)[0]?.value;
    } else if (spec.collector === 'recorder') {
      const value = valuesOf(set, ['vhost', 'application', 'app_instance', 'recorder']);
      facts.recorders = set
        .samples(M.recorderInfo.name)
        .slice(0, MAX_LISTED)
        .map(({ labels: l }) => ({
          vhost: l.vhost ?? '',
          application: l.application ?? '',
          app_instance: l.app_instance ?? '',
          recorder: l.recorder ?? '',
          state: l.state ?? '',
          recording: value(M.recorderRecording.name, l) === 1,
          duration_seconds: value(M.recorderDuration.name, l) ?? null,
          size_bytes: value(M.recorderSize.name, l) ?? null,
          error: shown(set.notes.get(`recorder_error\u0000${l.vhost}/${l.application}/${l.app_instance}/${l.recorder}`)),
        }));
    } else if (spec.collector === 'stream_target') {
      const value = valuesOf(set, ['vhost', 'application', 'entry']);
      facts.streamTargets = set
        .samples(M.targetStatus.name)
        .slice(0, MAX_LISTED)
        .map(({ labels: l }) => ({
          vhost: l.vhost ?? '',
          application: l.application ?? '',
          entry: l.entry ?? '',
          profile: l.profile ?? '',
          host: l.host ?? '',
          source_stream: l.source_stream ?? '',
          enabled: value(M.targetEnabled.name, l) === 1,
          active: value(M.targetActive.name, l) === 1,
          status: l.status ?? '',
        }));
    } else if (spec.collector === 'video') {
      const value = (name: string, id: string) => set.samples(name).find((s) => s.labels.schedule_id === id)?.value;
      const iso = (seconds: number | undefined) => (seconds === undefined ? null : new Date(seconds * 1000).toISOString());
      this.video = {
        schedules: set.samples(M.videoScheduleInfo.name).map(({ labels }) => ({
          id: labels.schedule_id ?? '',
          name: labels.name ?? '',
          state: labels.state ?? '',
          enabled: value(M.videoScheduleEnabled.name, labels.schedule_id ?? '') === 1,
          next_start: iso(value(M.videoScheduleNextStart.name, labels.schedule_id ?? '')),
          next_stop: iso(value(M.videoScheduleNextStop.name, labels.schedule_id ?? '')),
        })),
      };
      return;
    }
    this.servers.set(spec.server, facts);
  }

  forget(server: string): void {
    this.servers.delete(server);
  }
}

export interface StatusSources {
  startedAt: number;
  ready: boolean;
  shard: Shard | undefined;
  servers: ReadonlyMap<string, WowzaTarget>;
  reached(server: string): boolean | undefined;
  /** Why a server is down (wowza_up 0), with the next step. */
  downReason?(server: string): { cause: string; fix: string } | undefined;
  jobs: Array<{ server: string; collector: string; intervalMs: number; intervalReason?: string; last?: LastPoll }>;
  facts: StatusFacts;
  registry: Registry;
  logs?: {
    followers: Array<{ server: string; logType: string; oldestUnackedSeconds: number; lastError?: { message: string; at: number; failing: boolean } }>;
    sinkNames: readonly string[];
  };
  webhooks?: { auth: 'jwt' | 'token' | 'none'; lastEvent?: { name: string; server: string; at: number } };
}

type Sample = { labels: Record<string, string | number>; value: number };

/** The current samples of one metric of the registry (none when it is not registered). */
async function samplesOf(registry: Registry, name: string): Promise<Sample[]> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return [];
  return (await metric.get()).values as Sample[];
}

/** `wowza_webhook_events_total` summed over applications: one row per server and event. */
async function eventCounts(registry: Registry): Promise<Array<{ server: string; event: string; count: number }>> {
  const rows = new Map<string, { server: string; event: string; count: number }>();
  for (const s of await samplesOf(registry, 'wowza_webhook_events_total')) {
    const key = `${s.labels.server}\u0000${s.labels.event}`;
    const row = rows.get(key) ?? { server: String(s.labels.server), event: String(s.labels.event), count: 0 };
    row.count += s.value;
    rows.set(key, row);
  }
  return [...rows.values()];
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

export async function buildStatus(src: StatusSources): Promise<Status> {
  const { registry } = src;
  const reload = (await samplesOf(registry, 'wowza_exporter_config_last_reload_successful'))[0]?.value;
  const reloadAt = (await samplesOf(registry, 'wowza_exporter_config_last_reload_success_timestamp_seconds'))[0]?.value;

  const servers: ServerStatus[] = [...src.servers.values()].map((t) => {
    const f = src.facts.servers.get(t.name) ?? {};
    const reached = src.reached(t.name);
    return {
      name: t.name,
      url: t.url,
      up: reached ?? null,
      down_reason: reached === false ? shown(src.downReason?.(t.name)?.cause) : null,
      down_fix: reached === false ? (src.downReason?.(t.name)?.fix ?? null) : null,
      version: f.version ?? null,
      build: f.build ?? null,
      license_type: f.licenseType ?? null,
      license_expires: f.licenseExpiry === undefined ? null : new Date(f.licenseExpiry * 1000).toISOString().slice(0, 10),
      labels: { ...(t.labels ?? {}) },
      streams: f.streams ?? null,
      streams_dropped: f.dropped ?? null,
      recorders: f.recorders ?? null,
      stream_targets: f.streamTargets ?? null,
      viewers_from: t.connectionCountsUrl
        ? { source: 'connectioncounts' as const, url: t.connectionCountsUrl, detected: t.connectionCountsAuto === true }
        : { source: 'rest' as const, url: null, detected: false },
      collectors: src.jobs
        .filter((j) => j.server === t.name)
        .map((j) => ({
          name: j.collector,
          success: j.last ? j.last.ok : null,
          reason: j.last?.reason ?? null,
          error: shown(j.last?.error),
          last_poll: iso(j.last?.at),
          duration_seconds: j.last ? j.last.seconds : null,
          interval_seconds: j.intervalMs / 1000,
          interval_reason: j.intervalReason ?? null,
          series: j.last?.ok ? j.last.series : null,
          objects: j.last?.objects
            ? { total: j.last.objects.total, failed: j.last.objects.failed, last_reason: j.last.objects.lastReason ?? null, last_error: shown(j.last.objects.lastError) }
            : null,
        })),
    };
  });

  let logs: Status['logs'] = null;
  if (src.logs) {
    const byFollower = async (name: string) => {
      const out = new Map<string, number>();
      for (const s of await samplesOf(registry, name)) {
        const key = `${s.labels.server}\u0000${s.labels.log_type}`;
        out.set(key, (out.get(key) ?? 0) + s.value);
      }
      return out;
    };
    const bySink = async (name: string) => {
      const out = new Map<string, number>();
      for (const s of await samplesOf(registry, name)) out.set(String(s.labels.sink), (out.get(String(s.labels.sink)) ?? 0) + s.value);
      return out;
    };
    const [offsets, lags, rotations, gaps, failures, backlogBytes, backlogLines, catchUp] = await Promise.all(
      [
        'wowza_log_follower_offset_bytes',
        'wowza_log_follower_lag_seconds',
        'wowza_log_rotations_total',
        'wowza_log_rotation_gaps_total',
        'wowza_log_follower_read_failures_total',
        'wowza_log_follower_backlog_bytes',
        'wowza_log_follower_backlog_lines',
        'wowza_log_follower_catch_up_seconds',
      ].map(byFollower),
    );
    const [queues, forwarded, sinkFailures, dead] = await Promise.all(
      ['wowza_log_forward_queue_lines', 'wowza_log_forwarded_lines_total', 'wowza_log_forward_failures_total', 'wowza_log_dead_letter_lines_total'].map(bySink),
    );
    logs = {
      followers: src.logs.followers.map((f) => {
        const key = `${f.server}\u0000${f.logType}`;
        return {
          server: f.server,
          log_type: f.logType,
          offset_bytes: offsets!.get(key) ?? null,
          lag_seconds: lags!.get(key) ?? null,
          backlog_bytes: backlogBytes!.get(key) ?? null,
          backlog_lines: backlogLines!.get(key) ?? null,
          catch_up_seconds: catchUp!.get(key) ?? null,
          rotations: rotations!.get(key) ?? 0,
          rotation_gaps: gaps!.get(key) ?? 0,
          read_failures: failures!.get(key) ?? 0,
          oldest_unacked_seconds: f.oldestUnackedSeconds,
          last_error: shown(f.lastError?.message),
          last_error_at: iso(f.lastError?.at),
          failing: f.lastError?.failing ?? false,
        };
      }),
      sinks: src.logs.sinkNames.map((name) => ({
        name,
        queue_lines: queues!.get(name) ?? 0,
        forwarded_lines: forwarded!.get(name) ?? 0,
        failures: sinkFailures!.get(name) ?? 0,
        dead_lettered_lines: dead!.get(name) ?? 0,
      })),
    };
  }

  let webhooks: Status['webhooks'] = null;
  if (src.webhooks) {
    const rejected: Record<string, number> = {};
    for (const s of await samplesOf(registry, 'wowza_webhook_rejected_total')) rejected[String(s.labels.reason)] = (rejected[String(s.labels.reason)] ?? 0) + s.value;
    const last = src.webhooks.lastEvent;
    webhooks = {
      auth: src.webhooks.auth,
      events: await eventCounts(registry),
      rejected,
      last_event: last ? { name: last.name, server: last.server, at: new Date(last.at).toISOString() } : null,
    };
  }

  const videoJob = src.jobs.find((j) => j.collector === 'video');
  const video: Status['video'] = videoJob
    ? {
        success: videoJob.last ? videoJob.last.ok : null,
        reason: videoJob.last?.reason ?? null,
        error: shown(videoJob.last?.error),
        last_poll: iso(videoJob.last?.at),
        schedules: src.facts.video?.schedules ?? [],
      }
    : null;

  return {
    generated_at: new Date().toISOString(),
    exporter: {
      version: BUILD.version,
      revision: BUILD.revision,
      started_at: new Date(src.startedAt).toISOString(),
      ready: src.ready,
      shard: src.shard ?? null,
      config_last_reload_successful: reload !== 0,
      config_last_reload_success_at: reloadAt === undefined ? null : new Date(reloadAt * 1000).toISOString(),
    },
    servers,
    logs,
    webhooks,
    video,
  };
}
