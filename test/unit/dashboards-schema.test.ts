import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { loadDashboards } from '../helpers/dashboards.js';

// Under the repository (gitignored), so that `@grafana/schema` resolves from its node_modules.
const DIR = fileURLToPath(new URL('../../test-artifacts/grafana-schema/', import.meta.url));

/**
 * Grafana's own TypeScript types of a saved dashboard (`@grafana/schema`), as JSON can meet them: its string enums
 * (`FieldColorModeId`, `ThresholdsMode`, `MappingType`...) become the unions of their values, which is what the JSON
 * holds.
 */
const TYPES = `import type { Dashboard } from '@grafana/schema';
export type Json<T> = T extends string ? (string extends T ? T : \`\${T}\`) : T extends number | boolean | null | undefined ? T
  : T extends ReadonlyArray<infer U> ? Array<Json<U>> : T extends object ? { [K in keyof T]: Json<T[K]> } : T;
export type SavedDashboard = Json<Dashboard>;
`;

/**
 * The places where Grafana's types disagree with what Grafana itself saves, each removed before the check:
 * - a variable's `current: {}` (nothing picked yet), which Grafana writes into exports and provisioned files, while
 *   the type wants `text` and `value`;
 * - a query variable's `definition` (the query as the variable editor shows it), which Grafana saves beside `query`
 *   and the type does not list.
 */
function withoutKnownDisagreements(dashboard: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(dashboard) as { templating?: { list?: Array<Record<string, unknown>> } };
  for (const v of copy.templating?.list ?? []) {
    if (v.current !== null && typeof v.current === 'object' && Object.keys(v.current).length === 0) delete v.current;
    if (v.type === 'query' && typeof v.definition === 'string') delete v.definition;
  }
  return copy as Record<string, unknown>;
}

/** Type errors of `dashboards` (file name -> model) against SavedDashboard, as `file:line message`. */
function typeProblems(dashboards: Array<{ file: string; dashboard: Record<string, unknown> }>, dir: string): string[] {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'types.ts'), TYPES);
  const files = dashboards.map(({ file, dashboard }) => {
    const path = join(dir, file.replace(/\.json$/, '.ts'));
    writeFileSync(path, `import type { SavedDashboard } from './types.js';\nexport const dashboard: SavedDashboard = ${JSON.stringify(withoutKnownDisagreements(dashboard), null, 2)};\n`);
    return path;
  });
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    types: [],
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${d.file.fileName.slice(dir.length)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : '';
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

describe('dashboards against Grafana\'s own types (@grafana/schema)', () => {
  it('every dashboard type-checks as a saved Dashboard', () => {
    const dashboards = loadDashboards() as unknown as Array<{ file: string; dashboard: Record<string, unknown> }>;
    expect(dashboards).toHaveLength(4);
    expect(typeProblems(dashboards, join(DIR, 'shipped'))).toEqual([]);
  }, 120_000);

  it('would catch a field of the wrong type or an unknown one', () => {
    const bad = { title: 'bad', schemaVersion: 39, panels: [{ id: 1, type: 'timeseries', gridPos: { h: 'tall', w: 12, x: 0, y: 0 }, fieldConfig: { defaults: { colour: 'red' }, overrides: [] } }] };
    const problems = typeProblems([{ file: 'bad.json', dashboard: bad }], join(DIR, 'bad'));
    expect(problems.join('\n')).toMatch(/'string' is not assignable to type 'number'/);
    expect(problems.join('\n')).toMatch(/colour/);
  }, 120_000);
});
