import { severityRank, type Severity } from '../../wowza/log-vocabulary.js';
import type { LogRecord } from './w3c-parser.js';

export interface IncludeExclude {
  /** When set, only records whose value is in this list pass. */
  include?: readonly string[];
  /** Records whose value is in this list are dropped. */
  exclude?: readonly string[];
}

/** Client-side filters, applied after parsing and before anything is queued for the sinks. */
export interface RecordFilterSpec {
  /** Drop records below this severity; records without a known severity pass. */
  min_severity?: Severity;
  categories?: IncludeExclude;
  events?: IncludeExclude;
  applications?: IncludeExclude;
  /** Every listed field must match its regular expression (searched, not anchored). */
  field_regex?: Readonly<Record<string, string>>;
  /** Records where any listed field matches its regular expression are dropped. */
  exclude_field_regex?: Readonly<Record<string, string>>;
}

export type RecordFilter = (record: LogRecord) => boolean;

function setFilter(field: string, spec: IncludeExclude | undefined, caseInsensitive: boolean): RecordFilter[] {
  if (!spec) return [];
  const norm = (v: string) => (caseInsensitive ? v.toLowerCase() : v);
  const out: RecordFilter[] = [];
  if (spec.include && spec.include.length > 0) {
    const allowed = new Set(spec.include.map(norm));
    out.push((r) => {
      const v = r[field];
      return v !== null && v !== undefined && allowed.has(norm(String(v)));
    });
  }
  if (spec.exclude && spec.exclude.length > 0) {
    const denied = new Set(spec.exclude.map(norm));
    out.push((r) => {
      const v = r[field];
      return v === null || v === undefined || !denied.has(norm(String(v)));
    });
  }
  return out;
}

/** Builds one predicate from the filter settings; throws naming the field when a regex does not compile. */
export function compileRecordFilter(spec: RecordFilterSpec = {}): RecordFilter {
  const checks: RecordFilter[] = [];
  if (spec.min_severity) {
    const min = severityRank(spec.min_severity)!;
    checks.push((r) => {
      const rank = severityRank(r['x-severity']);
      return rank === undefined || rank >= min;
    });
  }
  checks.push(...setFilter('x-category', spec.categories, true));
  checks.push(...setFilter('x-event', spec.events, true));
  checks.push(...setFilter('x-app', spec.applications, false));
  const compile = (field: string, source: string, key: string) => {
    try {
      return new RegExp(source);
    } catch (err) {
      throw new Error(`filters.${key}.${field}: invalid regular expression: ${(err as Error).message}`);
    }
  };
  for (const [field, source] of Object.entries(spec.field_regex ?? {})) {
    const re = compile(field, source, 'field_regex');
    checks.push((r) => {
      const v = r[field];
      return v !== null && v !== undefined && re.test(String(v));
    });
  }
  for (const [field, source] of Object.entries(spec.exclude_field_regex ?? {})) {
    const re = compile(field, source, 'exclude_field_regex');
    checks.push((r) => {
      const v = r[field];
      return v === null || v === undefined || !re.test(String(v));
    });
  }
  if (checks.length === 0) return () => true;
  return (record) => checks.every((check) => check(record));
}
