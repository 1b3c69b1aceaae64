import { z } from 'zod';

/**
 * Wowza Video pages lists with `page`/`per_page` and answers with a `pagination` object (`page`,
 * `per_page`, `total_pages`, `total_records`). That the schedules list does so is likely, not certain, so
 * the walk stops on the first sign that there is nothing more: no pagination object, a short or empty page,
 * the last page reached, or a page that repeats what was already seen (a server ignoring `page`).
 */

// Counts sometimes arrive as strings; anything unreadable is treated as absent rather than failing the list.
const Count = z.preprocess(
  (v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v),
  z.number().int().nonnegative().optional().catch(undefined),
);

export const PaginationSchema = z.looseObject({
  page: Count,
  per_page: Count,
  total_pages: Count,
  total_records: Count,
});

export type Pagination = z.infer<typeof PaginationSchema>;

export interface PageOutcome {
  /** The page that was asked for (1-based). */
  requestedPage: number;
  /** The page size that was asked for. */
  requestedPerPage: number;
  /** Items on this page. */
  received: number;
  /** Items on this page not seen on an earlier one. */
  fresh: number;
  /** Items collected so far, this page included. */
  collected: number;
  pagination: Pagination | null | undefined;
}

export function hasNextPage(o: PageOutcome): boolean {
  const p = o.pagination;
  if (!p) return false;
  if (o.received === 0 || o.fresh === 0) return false;
  if (p.page !== undefined && p.page !== o.requestedPage) return false;
  if (p.total_pages !== undefined && o.requestedPage >= p.total_pages) return false;
  if (p.total_records !== undefined && o.collected >= p.total_records) return false;
  return o.received >= (p.per_page ?? o.requestedPerPage);
}
