/**
 * A small shape language for the conformance suites: each reference table is transcribed into a `Shape`
 * and every simulator answer is checked against it. Deliberately independent of the exporter's zod schemas:
 * the point is to compare the simulator with the reference, not with the client's reading of it.
 */

export type Scalar = 'string' | 'boolean' | 'int' | 'number' | 'null' | 'object' | 'any';

/** A type (or several, any of which will do), an array of a type, or an object shape. */
export type Type = Scalar | Type[] | { array: Type } | { object: Shape; open?: boolean } | { map: Type };

export interface Field {
  type: Type;
  /** The reference marks it optional (or says it may be absent). */
  optional?: boolean;
  /** Where the field comes from when not the reference itself (a quirk from wowza-api.md). */
  source?: string;
}

export type Shape = Record<string, Type | Field>;

const isField = (v: Type | Field): v is Field => typeof v === 'object' && !Array.isArray(v) && 'type' in v;

function typeName(v: unknown): Scalar {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'object';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'number';
  return typeof v as Scalar;
}

function describe(t: Type): string {
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return t.map(describe).join('|');
  if ('array' in t) return `array of ${describe(t.array)}`;
  if ('map' in t) return `map of ${describe(t.map)}`;
  return 'object';
}

/** Every way `value` differs from `type`, as `path: problem` lines; empty when it conforms. */
export function problems(value: unknown, type: Type, path = '(root)'): string[] {
  if (typeof type === 'string') {
    if (type === 'any') return [];
    const actual = typeName(value);
    if (actual === type || (type === 'number' && actual === 'int') || (type === 'object' && value !== null && typeof value === 'object' && !Array.isArray(value))) return [];
    return [`${path}: expected ${type}, got ${Array.isArray(value) ? 'array' : actual} ${JSON.stringify(value)?.slice(0, 60)}`];
  }
  if (Array.isArray(type)) {
    return type.some((t) => problems(value, t, path).length === 0) ? [] : [`${path}: expected ${describe(type)}, got ${JSON.stringify(value)?.slice(0, 60)}`];
  }
  if ('array' in type) {
    if (!Array.isArray(value)) return [`${path}: expected an array, got ${JSON.stringify(value)?.slice(0, 60)}`];
    return value.flatMap((item, i) => problems(item, type.array, `${path}[${i}]`));
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [`${path}: expected ${describe(type)}, got ${JSON.stringify(value)?.slice(0, 60)}`];
  const obj = value as Record<string, unknown>;
  if ('map' in type) return Object.entries(obj).flatMap(([k, v]) => problems(v, type.map, `${path}.${k}`));
  const out: string[] = [];
  for (const [key, spec] of Object.entries(type.object)) {
    const field = isField(spec) ? spec : { type: spec };
    if (!(key in obj) || obj[key] === undefined) {
      if (!field.optional) out.push(`${path}.${key}: missing`);
      continue;
    }
    out.push(...problems(obj[key], field.type, `${path}.${key}`));
  }
  if (type.open === false) for (const key of Object.keys(obj)) if (!(key in type.object)) out.push(`${path}.${key}: not in the reference`);
  return out;
}
