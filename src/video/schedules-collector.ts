import pLimit from 'p-limit';
import type { Counter } from 'prom-client';
import type { Logger } from '../base/logger.js';
import { M } from '../metrics/definitions.js';
import { MetricSet } from '../metrics/metric-set.js';
import { untrackedObjects, type ObjectErrorLog, type ObjectSummary } from '../collectors/object-errors.js';
import type { CallOptions, VideoClient } from './client.js';
import { VideoHttpError } from './errors.js';
import { nextRun } from './next-run.js';
import { actionType, recurrenceType, SCHEDULE_STATES, unknownValues, type Schedule, type ScheduleSummary } from './schedule.js';

/** Detail requests in flight at once: the API's rate limit is not documented, so few. */
const DETAIL_CONCURRENCY = 4;
/** (schedule, field, value) triples already counted, (field, value) pairs already logged; bounded so a churning account cannot grow them forever. */
const MAX_REPORTED = 10_000;

export interface VideoSchedulesOptions {
  logger: Logger;
  /** Failed schedule details: counted in wowza_exporter_object_errors_total and logged on change. */
  objectErrors?: ObjectErrorLog;
  /** `wowza_video_unknown_values_total{field}`. */
  unknownValues: Counter<'field'>;
  detailConcurrency?: number;
}

/**
 * Wowza Video schedules as metrics. `GET /schedules` gives limited details per schedule; action, recurrence and
 * times come from `GET /schedules/{id}` (docs/wowza-api-notes.md, "List endpoints with limited details"). Details are fetched with a
 * bounded concurrency and kept while the list shows the same `updated_at`, so a steady account costs one list
 * request per poll. A 429 is retried by the client as `Retry-After` asks, and every other request of the client
 * waits as long (rate limits are not in the reference, section 8). A schedule deleted between the list and its
 * detail (404, or 410 Gone, which section 4 of the reference documents for PATCH) is left out; so is one whose
 * detail fails (counted and logged as an object error), while the others stay: the poll fails only when every
 * detail failed. Field values: section 2 of test/fixtures/reference/wowza-video-schedules-v1.11.md (schedule.ts).
 */
export class VideoSchedulesCollector {
  private readonly details = new Map<string, { updatedAt: string; schedule: Schedule }>();
  private readonly counted = new Set<string>();
  private readonly logged = new Set<string>();
  private truncationReported = false;
  /** The last poll's details: how many, how many failed (the status page). */
  lastObjects: ObjectSummary | undefined;

  constructor(
    private readonly client: Pick<VideoClient, 'listSchedulePages' | 'getSchedule'>,
    private readonly o: VideoSchedulesOptions,
  ) {}

  async collect(now: Date, opts: CallOptions = {}): Promise<MetricSet> {
    this.lastObjects = undefined;
    const { schedules: summaries, truncated } = await this.client.listSchedulePages(opts);
    // Once while it lasts, not every poll.
    if (truncated && !this.truncationReported) {
      this.o.logger.warn({ schedules: summaries.length, reason: truncated }, 'the Wowza Video schedule list looks truncated: schedules beyond it may be missing');
    }
    this.truncationReported = truncated !== undefined;
    const listed = new Set(summaries.map((s) => s.id));
    for (const id of this.details.keys()) if (!listed.has(id)) this.details.delete(id);

    const limit = pLimit(this.o.detailConcurrency ?? DETAIL_CONCURRENCY);
    const objects = this.o.objectErrors?.forPoll(this.o.logger) ?? untrackedObjects();
    let failed = 0;
    let firstError: Error | undefined;
    const schedules = await Promise.all(
      summaries.map((s) =>
        limit(async () => {
          try {
            const schedule = await this.detail(s, opts);
            objects.ok(s.id);
            return schedule;
          } catch (err) {
            const error = err instanceof Error ? err : new Error(String(err));
            failed++;
            firstError ??= error;
            objects.failed(s.id, error);
            return undefined;
          }
        }),
      ),
    );
    objects.finish(summaries.length);
    // One host, whose state no line of its own says: the schedules' changes are said as they are.
    objects.say(false);
    this.lastObjects = objects.summary();
    if (failed > 0 && failed === summaries.length) throw firstError!;
    const set = new MetricSet();
    const seen = new Set<string>();
    for (const s of schedules) {
      // Two entries with one id would be duplicate series, which Prometheus rejects for the whole scrape.
      if (!s || seen.has(s.id)) continue;
      seen.add(s.id);
      this.report(s);
      const id = { schedule_id: s.id };
      set.add(
        M.videoScheduleInfo,
        {
          ...id,
          name: s.name ?? '',
          transcoder_id: s.transcoder_id ?? '',
          action_type: s.action_type ?? actionType(s) ?? '',
          recurrence_type: s.recurrence_type ?? recurrenceType(s) ?? '',
          state: s.state ?? '',
        },
        1,
      );
      // Known states only: an unknown one says nothing about whether the schedule runs.
      if ((SCHEDULE_STATES as readonly string[]).includes(s.state ?? '')) set.add(M.videoScheduleEnabled, id, s.state === 'enabled' ? 1 : 0);
      const next = nextRun(s, now);
      if (next.start) set.add(M.videoScheduleNextStart, id, next.start.getTime() / 1000);
      if (next.stop) set.add(M.videoScheduleNextStop, id, next.stop.getTime() / 1000);
    }
    return set;
  }

  /** The full schedule: from the cache while `updated_at` is unchanged, else asked for. */
  private async detail(summary: ScheduleSummary, opts: CallOptions): Promise<Schedule | undefined> {
    const cached = this.details.get(summary.id);
    if (cached && summary.updated_at && cached.updatedAt === summary.updated_at) return { ...cached.schedule, ...defined(summary) };
    let schedule: Schedule;
    try {
      schedule = await this.client.getSchedule(summary.id, opts);
    } catch (err) {
      if (err instanceof VideoHttpError && (err.status === 404 || err.status === 410)) {
        this.details.delete(summary.id);
        return undefined;
      }
      throw err;
    }
    if (summary.updated_at) this.details.set(summary.id, { updatedAt: summary.updated_at, schedule });
    else this.details.delete(summary.id);
    // The list's fields are as fresh as the detail's; the detail has the rest.
    return { ...schedule, ...defined(summary) };
  }

  /**
   * Counts each value the reference does not list once per schedule, field and value (the counter's only label
   * is the field: values are unbounded), and logs each distinct field and value once, naming the first schedule.
   */
  private report(s: Schedule): void {
    for (const u of unknownValues(s)) {
      if (!firstTime(this.counted, `${s.id}\u0000${u.field}\u0000${u.value}`)) continue;
      this.o.unknownValues.inc({ field: u.field });
      if (firstTime(this.logged, `${u.field}\u0000${u.value}`)) {
        this.o.logger.warn({ schedule: s.id, field: u.field, value: u.value.slice(0, 100) }, 'Wowza Video schedule has a value the API reference does not list; kept, with what is known exported');
      }
    }
  }
}

/** Adds `key` to `seen`; true when it was not there. */
function firstTime(seen: Set<string>, key: string): boolean {
  if (seen.has(key)) return false;
  if (seen.size >= MAX_REPORTED) seen.clear();
  seen.add(key);
  return true;
}

/** The members of a summary that hold a value, so an absent one does not blank the detail's. */
function defined(s: ScheduleSummary): Partial<ScheduleSummary> {
  return Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined && v !== null)) as Partial<ScheduleSummary>;
}
