import { SERVER_NAME } from '../topology.js';

/**
 * What the reference puts on nearly every object it returns (section 1, convention 4): `serverName` and a
 * `version` string; `saveFieldList` is optional and left out of answers. Real servers change `version` when the
 * configuration is saved; the simulator's monitoring and log answers carry the one it started with.
 */
const STARTED = String(Date.now());

export function enveloped<T extends object>(body: T, version = STARTED): { serverName: string; version: string } & T {
  return { serverName: SERVER_NAME, version, ...body };
}
