/**
 * The most items one list of an answer may hold before the rest are left out. Far above any real server (a busy
 * edge has thousands of streams, not a hundred thousand), low enough that a broken or hostile server cannot make one
 * answer cost the exporter more than a bounded parse, validation and set of series.
 */
export const DEFAULT_MAX_LIST_ITEMS = 100_000;

/**
 * Cuts every array in a parsed JSON answer to `max` items, in place, before the answer is validated (validation
 * costs per item); the number of items left out. Depth is already bounded while the body streams in (JsonDepthGuard).
 */
export function capLists(value: unknown, max: number): number {
  let dropped = 0;
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      if (v.length > max) {
        dropped += v.length - max;
        v.length = max;
      }
      for (const item of v) visit(item);
      return;
    }
    for (const key in v) visit((v as Record<string, unknown>)[key]);
  };
  visit(value);
  return dropped;
}
