/** Features that depend on the simulated server's version, as on real ones. */

/** Webhooks (the `{S}/webhooks` API and event delivery) came with 4.9.6. */
export const WEBHOOKS_SINCE = [4, 9, 6] as const;

/** `Wowza Streaming Engine 4.9.4 build20250114124522` -> [4, 9, 4]; undefined without a dotted number. */
export function versionNumbers(serverVersion: string): number[] | undefined {
  const m = /\d+(?:\.\d+)+/.exec(serverVersion);
  return m ? m[0].split('.').map(Number) : undefined;
}

/** True when `serverVersion` is `min` or later; a string without a version number counts as current. */
export function atLeast(serverVersion: string, min: readonly number[]): boolean {
  const v = versionNumbers(serverVersion);
  if (!v) return true;
  for (let i = 0; i < Math.max(v.length, min.length); i++) {
    const a = v[i] ?? 0;
    const b = min[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}
