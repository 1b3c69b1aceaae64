export interface BackoffSettings {
  minMs: number;
  maxMs: number;
}

/**
 * Delay before retry number `attempt` (1-based): exponential from `minMs`, capped at `maxMs`, with "equal
 * jitter" (half fixed, half random) so many senders that failed together do not retry together.
 */
export function backoffDelay(attempt: number, settings: BackoffSettings, random: () => number = Math.random): number {
  const ceiling = Math.min(settings.maxMs, settings.minMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Longest `Retry-After` honoured, so a receiver cannot park the pipeline for hours. */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** Parses a `Retry-After` value (seconds or an HTTP date) into milliseconds from `nowMs`. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = at - nowMs;
  }
  return Math.min(Math.max(0, Math.round(ms)), MAX_RETRY_AFTER_MS);
}
