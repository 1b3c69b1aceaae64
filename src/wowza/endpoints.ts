import { XML_LIMITS } from './xml-guard.js';

/** Endpoint templates: the `endpoint` label of the request counter and the names in error messages. */
export const EP = {
  machineCurrent: '/v2/machine/monitoring/current',
  serverStatus: '/v2/servers/{server}/status',
  vhosts: '/v2/servers/{server}/vhosts',
  vhostCurrent: '/v2/servers/{server}/vhosts/{vhost}/monitoring/current',
  applications: '/v2/servers/{server}/vhosts/{vhost}/applications',
  applicationCurrent: '/v2/servers/{server}/vhosts/{vhost}/applications/{app}/monitoring/current',
  instances: '/v2/servers/{server}/vhosts/{vhost}/applications/{app}/instances',
  streamCurrent:
    '/v2/servers/{server}/vhosts/{vhost}/applications/{app}/instances/{instance}/incomingstreams/{stream}/monitoring/current',
  streamRecorders: '/v2/servers/{server}/vhosts/{vhost}/applications/{app}/instances/{instance}/streamrecorders',
  mapEntries: '/v2/servers/{server}/vhosts/{vhost}/applications/{app}/pushpublish/mapentries',
  logTypes: '/v2/servers/{server}/logs',
  logCurrent: '/v2/servers/{server}/logs/{logType}',
  logFiles: '/v2/servers/{server}/logfiles',
  logFile: '/v2/servers/{server}/logfiles/{logName}',
} as const;

export type EndpointTemplate = (typeof EP)[keyof typeof EP];

/**
 * The most an answer of a fixed-size resource can reasonably hold: a few KB of numbers in the server's models
 * (wse-swagger-4.9.0), whatever the server's size. Lists grow with the server and have only `max_response_size`.
 * A hostile or broken server cannot make these cost more than this to receive and read.
 */
export const ENDPOINT_MAX_BYTES: Partial<Record<string, number>> = {
  [EP.machineCurrent]: 256 * 1024,
  // Lists the applications that use the transcoder, DVR and DRM: it grows with them, slowly.
  [EP.serverStatus]: 4 * 1024 * 1024,
  [EP.vhostCurrent]: 256 * 1024,
  [EP.applicationCurrent]: 256 * 1024,
  [EP.streamCurrent]: 256 * 1024,
  // The connectioncounts document (its endpoint label): whatever max_response_size allows, at most the XML cap.
  '/connectioncounts': XML_LIMITS.documentBytes,
};

/** JSON nested deeper than this is refused before it is parsed: no answer of the API comes near it. */
export const MAX_JSON_DEPTH = 64;

/**
 * Fills a template with URL-encoded values. `.`, `..` (encoded or not, URL parsers resolve both) and empty
 * values are refused: names come from configuration and from the server's own lists, and must not walk the path.
 */
export function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => {
    const v = values[key];
    if (v === undefined) throw new Error(`missing path value ${key} for ${template}`);
    if (v === '' || v === '.' || v === '..') throw new Error(`refusing ${JSON.stringify(v)} as the ${key} of ${template}: not a name`);
    return encodeURIComponent(v);
  });
}
