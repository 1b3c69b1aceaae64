import { applyPatch } from './schedule-patch.js';
import { isoTime, summaryOf, type VideoSchedule, type VideoScheduleSummary } from './schedule-object.js';

/** The schedules of a simulated Wowza Video account, and the ids deleted from it. */
export class ScheduleStore {
  private readonly schedules = new Map<string, VideoSchedule>();
  private readonly removed = new Set<string>();
  private clock = Date.now();

  constructor(initial: readonly VideoSchedule[] = []) {
    for (const s of initial) this.put(s);
  }

  /** Adds or replaces a schedule as it is (tests use this to plant values the reference does not list). */
  put(s: VideoSchedule): void {
    this.schedules.set(s.id, { ...s });
    this.removed.delete(s.id);
  }

  get(id: string): VideoSchedule | undefined {
    const s = this.schedules.get(id);
    return s && { ...s };
  }

  all(): VideoSchedule[] {
    return [...this.schedules.values()].map((s) => ({ ...s }));
  }

  summaries(): VideoScheduleSummary[] {
    return [...this.schedules.values()].map(summaryOf);
  }

  delete(id: string): boolean {
    if (!this.schedules.delete(id)) return false;
    this.removed.add(id);
    return true;
  }

  /** Whether `id` was deleted (and not put back). */
  deleted(id: string): boolean {
    return this.removed.has(id);
  }

  /** Applies a PATCH body (`{schedule: {...}}`); throws PatchRefused for what section 4 does not accept. */
  patch(id: string, body: unknown): VideoSchedule {
    const s = this.schedules.get(id);
    if (!s) throw new Error(`no schedule ${id}`);
    const next = applyPatch(s, body);
    // A strictly later `updated_at` per change, even within one second: clients cache by it.
    this.clock = Math.max(this.clock + 1000, Date.now());
    next.updated_at = isoTime(this.clock);
    this.schedules.set(id, next);
    return { ...next };
  }
}
