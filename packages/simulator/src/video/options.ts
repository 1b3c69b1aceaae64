import { SimulatorOptionError } from '../options.js';
import type { RateLimitFault, UnknownValueFault } from './faults.js';
import type { VideoSchedule } from './schedule-object.js';

export interface VideoSimulatorOptions {
  /** 0 = random (default 0). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The access token, sent as `Authorization: Bearer <token>`; default `video-simulator-token`. */
  token?: string;
  /** A token that may read but not change: PATCH and DELETE answer 403. */
  readOnlyToken?: string;
  /** The account's schedules (default none). */
  schedules?: readonly VideoSchedule[];
  /** Page the list by this size, with a `pagination` object. Default: one answer, no pagination. */
  pageSize?: number;
  /** Answer the list with at most this many items and no pagination (a server that truncates silently). */
  truncateAt?: number;
  /** From the start: the first `count` requests answer 429. */
  rateLimit?: RateLimitFault;
  /** From the start: values the reference does not list, in the answers. */
  unknownValues?: readonly UnknownValueFault[];
}

export type ResolvedVideoOptions = Required<Pick<VideoSimulatorOptions, 'port' | 'host' | 'token' | 'schedules' | 'unknownValues'>> &
  Pick<VideoSimulatorOptions, 'readOnlyToken' | 'pageSize' | 'truncateAt' | 'rateLimit'>;

function count(name: string, v: number | undefined, min: number): number | undefined {
  if (v !== undefined && (!Number.isInteger(v) || v < min)) throw new SimulatorOptionError(`${name} must be an integer >= ${min}, got ${v}`);
  return v;
}

export function resolveVideoOptions(o: VideoSimulatorOptions): ResolvedVideoOptions {
  const token = o.token ?? 'video-simulator-token';
  if (token === '' || /\s/.test(token)) throw new SimulatorOptionError('token must be non-empty, without whitespace');
  if (o.readOnlyToken !== undefined && (o.readOnlyToken === '' || o.readOnlyToken === token)) throw new SimulatorOptionError('readOnlyToken must be non-empty and differ from token');
  if (o.rateLimit) count('rateLimit.count', o.rateLimit.count, 0);
  return {
    port: count('port', o.port, 0) ?? 0,
    host: o.host ?? '127.0.0.1',
    token,
    readOnlyToken: o.readOnlyToken,
    schedules: o.schedules ?? [],
    pageSize: count('pageSize', o.pageSize, 1),
    truncateAt: count('truncateAt', o.truncateAt, 0),
    rateLimit: o.rateLimit,
    unknownValues: o.unknownValues ?? [],
  };
}
