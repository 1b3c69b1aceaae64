import { ENVELOPE_FIELDS, type JsonType, type ObjectType } from '../helpers/swagger-documents.js';
import type { Field, Shape, Type } from './shape.js';

/**
 * A Swagger model (swagger-documents.ts) as a closed shape of shape.ts: every field of the model with its
 * JSON type, and no other field. Optional, because a server leaves them out:
 * - `saveFieldList` everywhere (section 1, convention 4 of the reference: optional);
 * - `serverName` and `version` of nested objects: every model lists the envelope, but it is the answer's.
 */

/** Fields a real server sends as null although the model types them (wowza-api.md: `appType` may be null). */
const NULLABLE: Record<string, readonly string[]> = { AppShortObject: ['appType'] };

export function swaggerShape(model: ObjectType, nested = false): Type {
  const shape: Shape = {};
  for (const [name, t] of Object.entries(model.fields)) {
    let type = jsonType(t);
    if (NULLABLE[model.model]?.includes(name)) type = [type, 'null'];
    const optional = name === 'saveFieldList' || (nested && (ENVELOPE_FIELDS as readonly string[]).includes(name));
    shape[name] = optional ? ({ type, optional: true } satisfies Field) : type;
  }
  return { object: shape, open: false };
}

function jsonType(t: JsonType): Type {
  switch (t.kind) {
    case 'integer':
      return 'int';
    case 'number':
      return 'number';
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'array':
      return { array: jsonType(t.items) };
    case 'map':
      return { map: jsonType(t.values) };
    case 'object':
      return swaggerShape(t, true);
  }
}
