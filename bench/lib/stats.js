/** Order statistics over measured samples (nearest-rank, no interpolation: every value was observed). */

export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

export const median = (values) => percentile(values, 50);

export const sum = (values) => values.reduce((a, b) => a + b, 0);

export const round = (v, digits = 0) => (Number.isFinite(v) ? Number(v.toFixed(digits)) : v);
