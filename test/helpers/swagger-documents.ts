import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Wowza's own Swagger 1.2 documents of the WSE 4.9.0 REST API (test/fixtures/reference/wse-swagger-4.9.0/), read
 * into JSON types for the endpoints the exporter reads (the table at the top of MODELS.md). The conformance
 * suite checks the simulator against them; swagger-models.ts makes answers from them.
 *
 * Read from the server's documents, not from src/wowza/schemas.ts nor from the simulator: the point is to
 * have a third opinion on what the server sends.
 */

export const SWAGGER_DIR = fileURLToPath(new URL('../fixtures/reference/wse-swagger-4.9.0/', import.meta.url));

/** A JSON type. `java` keeps the boxed type name (Long, Integer) the model used, for messages. */
export type JsonType =
  | { kind: 'integer'; java?: string }
  | { kind: 'number' }
  | { kind: 'string' }
  | { kind: 'boolean' }
  | { kind: 'array'; items: JsonType }
  /** `connectionCount` of the statistics models: protocol name -> number (MODELS.md, "How to read them"). */
  | { kind: 'map'; values: JsonType }
  | ObjectType;

export interface ObjectType {
  kind: 'object';
  model: string;
  fields: Record<string, JsonType>;
}

/** The endpoints of MODELS.md's table that the exporter reads, with the response model the table names. */
export const ENDPOINTS = {
  machineCurrent: { path: '/v2/machine/monitoring/current', model: 'CurrentMachineStatistics' },
  serverStatus: { path: '/v2/servers/{serverName}/status', model: 'ServerStatusConfig' },
  vhosts: { path: '/v2/servers/{serverName}/vhosts', model: 'VHostsConfig' },
  vhostCurrent: { path: '/v2/servers/{serverName}/vhosts/{vhostName}/monitoring/current', model: 'CurrentVHostStatistics' },
  applications: { path: '/v2/servers/{serverName}/vhosts/{vhostName}/applications', model: 'ApplicationsConfig' },
  applicationCurrent: { path: '/v2/servers/{serverName}/vhosts/{vhostName}/applications/{appName}/monitoring/current', model: 'CurrentApplicationStatistics' },
  instances: { path: '/v2/servers/{serverName}/vhosts/{vhostName}/applications/{appName}/instances', model: 'InstancesConfig' },
  streamCurrent: {
    path: '/v2/servers/{serverName}/vhosts/{vhostName}/applications/{appName}/instances/{instanceName}/incomingstreams/{streamName}/monitoring/current',
    model: 'CurrentIncomingStreamStatistics',
  },
  streamRecorders: { path: '/v2/servers/{serverName}/vhosts/{vhostName}/applications/{appName}/instances/{instanceName}/streamrecorders', model: 'StreamRecordersConfig' },
  pushPublishMapEntries: { path: '/v2/servers/{serverName}/vhosts/{vhostName}/applications/{appName}/pushpublish/mapentries', model: 'PushPublishStreamsAppConfig' },
  logTypes: { path: '/v2/servers/{serverName}/logs', model: 'ServerLogTypesConfig' },
  logFiles: { path: '/v2/servers/{serverName}/logfiles', model: 'ServerLogFilesConfig' },
  logCurrent: { path: '/v2/servers/{serverName}/logs/{logType}', model: 'ServerLogsConfig' },
  logFile: { path: '/v2/servers/{serverName}/logfiles/{logName}', model: 'ServerLogFileConfig' },
} as const;

export type Endpoint = keyof typeof ENDPOINTS;
export const ENDPOINT_NAMES = Object.keys(ENDPOINTS) as Endpoint[];

/** Fields every model carries for the envelope (MODELS.md lists them on nested models too). */
export const ENVELOPE_FIELDS = ['serverName', 'version', 'saveFieldList'] as const;

interface RawProperty {
  type?: string;
  format?: string;
  $ref?: string;
  items?: { type?: string; $ref?: string };
}
interface RawModel {
  id: string;
  properties: Record<string, RawProperty>;
  required?: string[];
}
interface RawDocument {
  apis?: Array<{ path: string; operations: Array<{ method: string; type: string }> }>;
  models?: Record<string, RawModel>;
}

/** Boxed Java numbers: plain JSON numbers on the wire (MODELS.md, "How to read them"). */
const BOXED: Record<string, JsonType> = {
  Long: { kind: 'integer', java: 'Long' },
  Integer: { kind: 'integer', java: 'Integer' },
  Boolean: { kind: 'boolean' },
  Double: { kind: 'number' },
  String: { kind: 'string' },
};

export interface SwaggerModels {
  /** The response model of an endpoint, nested models resolved. */
  response(endpoint: Endpoint): ObjectType;
  /** The file of the server's documents that describes the endpoint. */
  file(endpoint: Endpoint): string;
}

/**
 * Reads every document of `dir`. Models are resolved in the document that describes the endpoint: two
 * documents may define different models under one id (TranscoderConfig of the server and of a vhost), so
 * another document is asked only for an id its own does not define.
 */
export function loadSwaggerModels(dir = SWAGGER_DIR): SwaggerModels {
  const docs = new Map<string, RawDocument>();
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    docs.set(name, JSON.parse(readFileSync(join(dir, name), 'utf8')) as RawDocument);
  }

  const located = new Map<Endpoint, { file: string; model: string }>();
  for (const endpoint of ENDPOINT_NAMES) {
    const { path, model } = ENDPOINTS[endpoint];
    for (const [file, doc] of docs) {
      const op = doc.apis?.find((a) => a.path === path)?.operations.find((o) => o.method === 'GET');
      if (!op) continue;
      // The table of MODELS.md was transcribed into ENDPOINTS: the documents must agree with it.
      if (op.type !== model) throw new Error(`${file}: GET ${path} answers ${op.type}, ENDPOINTS says ${model}`);
      located.set(endpoint, { file, model });
    }
    if (!located.has(endpoint)) throw new Error(`no document of ${dir} describes GET ${path}`);
  }

  const findModel = (file: string, id: string): RawModel => {
    const own = docs.get(file)?.models?.[id];
    if (own) return own;
    for (const doc of docs.values()) if (doc.models?.[id]) return doc.models[id]!;
    throw new Error(`model ${id} (referenced from ${file}) is defined by no document`);
  };

  const resolveRef = (file: string, id: string, seen: string[]): JsonType => {
    if (BOXED[id]) return BOXED[id]!;
    if (seen.includes(id)) throw new Error(`model cycle: ${[...seen, id].join(' -> ')}`);
    const raw = findModel(file, id);
    const fields: Record<string, JsonType> = {};
    for (const [name, prop] of Object.entries(raw.properties)) fields[name] = resolveProperty(file, prop, [...seen, id], `${id}.${name}`);
    // Swagger 1.2 cannot express a map: the statistics models require `connectionCount` without defining it.
    if (raw.required?.includes('connectionCount') && !fields.connectionCount) fields.connectionCount = { kind: 'map', values: { kind: 'integer' } };
    return { kind: 'object', model: id, fields };
  };

  const resolveProperty = (file: string, p: RawProperty, seen: string[], where: string): JsonType => {
    if (p.$ref) return resolveRef(file, p.$ref, seen);
    switch (p.type) {
      case 'integer':
        return { kind: 'integer' };
      case 'number':
        return { kind: 'number' };
      case 'string':
        return { kind: 'string' };
      case 'boolean':
        return { kind: 'boolean' };
      case 'array':
        if (!p.items) throw new Error(`${where}: array without items`);
        return { kind: 'array', items: resolveProperty(file, p.items, seen, `${where}[]`) };
      default:
        // Swagger 1.2 also allows a model id as `type`.
        if (p.type) return resolveRef(file, p.type, seen);
        throw new Error(`${where}: a property with neither type nor $ref`);
    }
  };

  const cache = new Map<Endpoint, ObjectType>();
  return {
    response(endpoint) {
      let t = cache.get(endpoint);
      if (!t) {
        const { file, model } = located.get(endpoint)!;
        t = resolveRef(file, model, []) as ObjectType;
        cache.set(endpoint, t);
      }
      return t;
    },
    file: (endpoint) => located.get(endpoint)!.file,
  };
}
