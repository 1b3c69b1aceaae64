/** Human-readable units for the printed tables (results.json keeps raw numbers). */

export function ms(v) {
  if (!Number.isFinite(v)) return '-';
  if (v >= 10_000) return `${(v / 1000).toFixed(1)} s`;
  if (v >= 1000) return `${(v / 1000).toFixed(2)} s`;
  if (v >= 10) return `${v.toFixed(0)} ms`;
  return `${v.toFixed(1)} ms`;
}

export function bytes(v) {
  if (!Number.isFinite(v)) return '-';
  if (v >= 1024 ** 2) return `${(v / 1024 ** 2).toFixed(1)} MiB`;
  if (v >= 1024) return `${(v / 1024).toFixed(1)} KiB`;
  return `${v} B`;
}

export function int(v) {
  return Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '-';
}

export function ratio(v) {
  return Number.isFinite(v) ? `${v.toFixed(1)}x` : '-';
}

/** Bytes as decimal megabytes, the unit of the issues' memory targets, with MiB beside them. */
export function megabytes(v) {
  if (!Number.isFinite(v)) return '-';
  return `${(v / 1e6).toFixed(1)} MB (${(v / 1024 ** 2).toFixed(1)} MiB)`;
}
