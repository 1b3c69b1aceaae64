import type { VideoScheduleSummary } from './schedule-object.js';

/**
 * The body of `GET /schedules`. The reference has no list endpoint (section 4 lists only `/schedules/{id}`);
 * docs/wowza-api-notes.md gives `{"schedules":[...]}` with limited details per item, and `page`/`per_page`
 * pagination as likely, not certain. So by default the list is one answer without pagination, as the
 * documents show nothing more; `pageSize` pages it with a `pagination` object as the service's other lists do
 * (`page`, `per_page`, `total_pages`, `total_records`), and `truncateAt` cuts it short without saying so.
 */

export interface ListSettings {
  pageSize?: number;
  truncateAt?: number;
}

export interface Pagination {
  page: number;
  per_page: number;
  total_pages: number;
  total_records: number;
}

export interface ListBody {
  schedules: VideoScheduleSummary[];
  pagination?: Pagination;
}

/** A positive integer query parameter, or undefined. */
function positive(query: URLSearchParams, name: string): number | undefined {
  const v = Number(query.get(name));
  return Number.isInteger(v) && v > 0 ? v : undefined;
}

export function listBody(items: readonly VideoScheduleSummary[], query: URLSearchParams, settings: ListSettings): ListBody {
  if (settings.truncateAt !== undefined) return { schedules: items.slice(0, settings.truncateAt) };
  if (settings.pageSize === undefined) return { schedules: [...items] };
  const perPage = Math.min(positive(query, 'per_page') ?? settings.pageSize, settings.pageSize);
  const page = positive(query, 'page') ?? 1;
  return {
    schedules: items.slice((page - 1) * perPage, page * perPage),
    pagination: { page, per_page: perPage, total_pages: Math.max(1, Math.ceil(items.length / perPage)), total_records: items.length },
  };
}
