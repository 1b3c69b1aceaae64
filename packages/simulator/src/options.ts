import type { Logger } from './logger.js';
import type { AuthMode } from './auth.js';

export interface SimulatorOptions {
  /** 0 = random (default 0). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 'basic' (WSE >= 4.8.5). */
  auth?: AuthMode;
  /**
   * The admin port's own authentication (its HTTP providers, `/connectioncounts`): `AuthenticationMethod` of the
   * provider in VHost.xml, `admin-digest` on a default install, so 'digest' by default whatever the REST API uses.
   */
  adminAuth?: AuthMode;
  /** The admin port (8086 on a real server); 0 = random (default 0). */
  adminPort?: number;
  /** Digest challenges offered, in this order; default ['MD5']. */
  digestAlgorithms?: Array<'MD5' | 'SHA-256'>;
  /** Digest nonce lifetime, default 60_000; an expired nonce gets a 401 with stale=true. */
  nonceTtlMs?: number;
  /** Digest nonce retired after this many uses (RFC 7616 allows it; wowza-api.md "Auth"); default 0: never. */
  nonceMaxUses?: number;
  /** True: nc must exceed the last seen for that nonce. False (default): only a replayed nc is rejected. */
  strictNonceCount?: boolean;
  /** Default admin / admin. */
  username?: string;
  password?: string;
  /** Deterministic values (default 1). */
  seed?: number;
  /** Topology: vhosts, applications per vhost, streams per application (defaults 1, 3, 3). */
  vhosts?: number;
  apps?: number;
  streams?: number;
  /** Rendition suffixes added for each stream of a transcoder application; default ['160p', '720p']. */
  renditions?: string[];
  /** Added to every response: the time a worker spends on a request. */
  latencyMs?: number;
  /** Requests served at once (REST worker threads); more wait in arrival order. Default 0: no limit. */
  capacity?: number;
  /** Values stand still unless tick() moves them (tests). */
  frozen?: boolean;
  /** Default 'Wowza Streaming Engine 4.9.4 build20250114124522'. Below 4.9.6 there are no webhooks (404). */
  serverVersion?: string;
  /** Deadline of one webhook delivery request (default 5000). */
  webhookTimeoutMs?: number;
  /** `licenseExpireDate` of the status (YYYY-MM-DD, '' for none); default '2026-12-31'. */
  licenseExpireDate?: string;
  /** `maxConnections` of the status (0 = unlimited, the default). */
  maxConnections?: number;
  /** `maxIncommingStreams` of the status (0 = unlimited, the default). */
  maxIncomingStreams?: number;
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** Answer XML even to Accept: application/json (an old or odd proxy). */
  xmlOnly?: boolean;
  /** Send monitoring numbers as JSON strings, as some servers do. */
  numbersAsStrings?: boolean;
  /**
   * Background log writing (default 0: off); rolled files kept per type (default 5). `clock` gives the time log
   * files start at (their `#Start-Date`), for tests that need rotations within one second.
   */
  logs?: { linesPerSecond?: number; keepRolled?: number; maxFileBytes?: number; clock?: () => number };
  /** Where request debug lines and handler errors go (default: nowhere). */
  logger?: Logger;
}

export type ResolvedOptions = Required<Omit<SimulatorOptions, 'tls' | 'logger' | 'logs'>> & {
  tls: SimulatorOptions['tls'];
  logger: Logger | undefined;
  logs: { linesPerSecond: number; keepRolled: number; maxFileBytes: number; clock?: () => number };
};

export class SimulatorOptionError extends Error {}

const MAX_STREAMS = 1_000_000;

function int(name: string, value: number | undefined, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new SimulatorOptionError(`simulator option ${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

function num(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) throw new SimulatorOptionError(`simulator option ${name} must be a number >= ${min}, got ${JSON.stringify(value)}`);
  return value;
}

/** Defaults applied and every value checked, with errors that name the option. */
export function resolveOptions(o: SimulatorOptions = {}): ResolvedOptions {
  const auth = o.auth ?? 'basic';
  if (!['basic', 'digest', 'none'].includes(auth)) throw new SimulatorOptionError(`simulator option auth must be basic, digest or none, got ${JSON.stringify(auth)}`);
  const adminAuth = o.adminAuth ?? 'digest';
  if (!['basic', 'digest', 'none'].includes(adminAuth)) throw new SimulatorOptionError(`simulator option adminAuth must be basic, digest or none, got ${JSON.stringify(adminAuth)}`);
  const digestAlgorithms = o.digestAlgorithms ?? ['MD5'];
  if (!Array.isArray(digestAlgorithms) || digestAlgorithms.length === 0 || digestAlgorithms.some((a) => a !== 'MD5' && a !== 'SHA-256')) {
    throw new SimulatorOptionError(`simulator option digestAlgorithms must list MD5 and/or SHA-256, got ${JSON.stringify(digestAlgorithms)}`);
  }
  const username = o.username ?? 'admin';
  if (typeof username !== 'string' || username === '' || username.includes(':')) throw new SimulatorOptionError('simulator option username must be a non-empty string without ":"');
  const password = o.password ?? 'admin';
  if (typeof password !== 'string') throw new SimulatorOptionError('simulator option password must be a string');
  const renditions = o.renditions ?? ['160p', '720p'];
  if (!Array.isArray(renditions) || renditions.some((r) => typeof r !== 'string' || r === '' || r.includes('/'))) {
    throw new SimulatorOptionError(`simulator option renditions must be non-empty suffixes without "/", got ${JSON.stringify(renditions)}`);
  }
  const vhosts = int('vhosts', o.vhosts, 1, 0, 1000);
  const apps = int('apps', o.apps, 3, 0, 10_000);
  const streams = int('streams', o.streams, 3, 0, MAX_STREAMS);
  if (vhosts * apps * streams > MAX_STREAMS) throw new SimulatorOptionError(`simulator topology of ${vhosts} x ${apps} x ${streams} streams is over the limit of ${MAX_STREAMS}`);
  const licenseExpireDate = o.licenseExpireDate ?? '2026-12-31';
  if (licenseExpireDate !== '' && !/^\d{4}-\d{2}-\d{2}$/.test(licenseExpireDate)) throw new SimulatorOptionError(`simulator option licenseExpireDate must be YYYY-MM-DD or empty, got ${JSON.stringify(licenseExpireDate)}`);
  if (o.tls && (!o.tls.cert || !o.tls.key)) throw new SimulatorOptionError('simulator option tls needs both cert and key');
  const seed = o.seed ?? 1;
  if (typeof seed !== 'number' || !Number.isFinite(seed)) throw new SimulatorOptionError(`simulator option seed must be a number, got ${JSON.stringify(seed)}`);
  return {
    port: int('port', o.port, 0, 0, 65535),
    host: o.host ?? '127.0.0.1',
    auth,
    adminAuth,
    adminPort: int('adminPort', o.adminPort, 0, 0, 65535),
    digestAlgorithms,
    nonceTtlMs: num('nonceTtlMs', o.nonceTtlMs, 60_000, 1),
    nonceMaxUses: int('nonceMaxUses', o.nonceMaxUses, 0, 0),
    strictNonceCount: o.strictNonceCount ?? false,
    username,
    password,
    seed,
    vhosts,
    apps,
    streams,
    renditions,
    latencyMs: num('latencyMs', o.latencyMs, 0, 0),
    capacity: int('capacity', o.capacity, 0, 0, 100_000),
    frozen: o.frozen ?? false,
    serverVersion: o.serverVersion ?? 'Wowza Streaming Engine 4.9.4 build20250114124522',
    webhookTimeoutMs: num('webhookTimeoutMs', o.webhookTimeoutMs, 5000, 1),
    licenseExpireDate,
    maxConnections: int('maxConnections', o.maxConnections, 0, 0, 10_000_000),
    maxIncomingStreams: int('maxIncomingStreams', o.maxIncomingStreams, 0, 0, 10_000_000),
    tls: o.tls,
    xmlOnly: o.xmlOnly ?? false,
    numbersAsStrings: o.numbersAsStrings ?? false,
    logs: {
      linesPerSecond: num('logs.linesPerSecond', o.logs?.linesPerSecond, 0, 0),
      keepRolled: int('logs.keepRolled', o.logs?.keepRolled, 5, 0),
      maxFileBytes: int('logs.maxFileBytes', o.logs?.maxFileBytes, 16 * 1024 * 1024, 1024),
      ...(o.logs?.clock ? { clock: o.logs.clock } : {}),
    },
    logger: o.logger,
  };
}
