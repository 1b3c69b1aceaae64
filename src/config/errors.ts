import type { z } from 'zod';

/** A usage or configuration problem: the CLI prints it and exits 2. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** `servers[0].urll` from a zod path. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out || '(root)';
}

function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
  }
  return d[a.length]![b.length]!;
}

type Issue = z.core.$ZodIssue;
type KnownKeys = (path: ReadonlyArray<PropertyKey>) => string[];

/** Renders every zod issue as `path: message`, with a "did you mean" for unknown keys. */
export function describeIssues(error: z.ZodError, knownKeys?: KnownKeys): string[] {
  return describeList(error.issues, [], knownKeys);
}

function describeList(issues: readonly Issue[], base: readonly PropertyKey[], knownKeys: KnownKeys | undefined): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const path = [...base, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const known = knownKeys?.(path) ?? [];
        const best = known
          .map((k) => ({ k, d: editDistance(k, key) }))
          .sort((x, y) => x.d - y.d)
          .find((x) => x.d <= Math.max(2, Math.floor(key.length / 3)));
        lines.push(`${formatPath([...path, key])}: unknown key${best ? ` (did you mean "${best.k}"?)` : ''}`);
      }
      continue;
    }
    // `true` or `{enabled: yes}`: the one alternative that got inside the value knows which field is wrong.
    if (issue.code === 'invalid_union') {
      const inside = issue.errors.filter((branch) => branch.length > 0 && branch.every((i) => i.path.length > 0));
      if (inside.length === 1) {
        lines.push(...describeList(inside[0]!, path, knownKeys));
        continue;
      }
    }
    // A record key that fails its pattern: zod says only "Invalid key in record"; the pattern's own message says why.
    if (issue.code === 'invalid_key' && issue.issues.length > 0) {
      lines.push(`${formatPath(path)}: invalid key: ${issue.issues.map((i) => i.message).join('; ')}`);
      continue;
    }
    if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) {
      lines.push(`${formatPath(path)}: missing (expected ${issue.expected})`);
      continue;
    }
    lines.push(`${formatPath(path)}: ${issue.message}`);
  }
  return lines;
}
