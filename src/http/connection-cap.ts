import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Counter, Gauge, type Registry } from '../metrics/prom-client-core.js';

/**
 * A cap on the exporter's inbound connections, over all its listeners, that keeps room for a health check.
 *
 * Without it, idle connections pile up until the process runs out of file descriptors; from then on every new
 * connection, kubelet's `/-/healthy` included, is accepted and dropped at once, and the pod is restarted for
 * someone else's idle sockets. Node's own `server.maxConnections` would not help: it refuses the newcomer, which is
 * the health check.
 *
 * So a connection over the cap makes room instead: the connection that has been idle the longest is closed, those that
 * never sent a request first (what a flood of idle sockets is), then those idle since their last answer (a Prometheus
 * keep-alive connection is idle 15 s at most and is reopened by its client anyway). When every connection is in the
 * middle of a request, the one whose request has run the longest makes room if it has run for STALLED_MS (a client
 * that asked for /metrics and does not read the answer holds its connection until server.timeout); only when every
 * request is younger is the newcomer refused. The cap sits well below the descriptor limit, so the process always
 * has descriptors left to accept with, and for its own requests to the servers and its files.
 */

/** A request still under way after this long is stalled: its connection makes room before a newcomer is refused. */
export const STALLED_MS = 10_000;

/** Without a readable limit (not Linux): plenty for Prometheus, a few browsers and probes. */
const FALLBACK_MAX = 256;
/** Above this, more connections are no use to an exporter; 1,024 is also the most common soft descriptor limit. */
const CEILING = 1024;

/** The soft limit on open files (`ulimit -n`), from /proc/self/limits; undefined when unknown or unlimited. */
export function openFileLimit(read: () => string = () => readFileSync('/proc/self/limits', 'utf8')): number | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(read());
    return m && m[1] !== 'unlimited' ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The cap for a descriptor limit: half of it (the other half for the exporter's own requests and files), at most
 * 1,024, at least 16; 256 when the limit is unknown.
 */
export function maxConnectionsFor(limit: number | undefined): number {
  if (limit === undefined) return FALLBACK_MAX;
  return Math.max(16, Math.min(CEILING, Math.floor(limit / 2)));
}

/** The default cap: for this process's descriptor limit. */
export const defaultMaxConnections = (): number => maxConnectionsFor(openFileLimit());

/** The cap and what it closed, on /metrics: an operator sees the default taken and a flood being shed. */
export type ShedReason = 'idle' | 'stalled' | 'refused';

export function connectionCapMetrics(registry: Registry, max: number): (reason: ShedReason) => void {
  new Gauge({ name: 'wowza_exporter_http_max_connections', help: 'Inbound connections the exporter keeps open at most (web.max_connections).', registers: [registry] }).set(max);
  const shed = new Counter({
    name: 'wowza_exporter_http_connections_shed_total',
    help: 'Inbound connections closed at web.max_connections: idle (the longest-idle one, closed to make room for a new one), stalled (the one whose request ran longest, over 10 s, when none was idle), refused (a new one, when every open one was busy with a younger request).',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of ['idle', 'stalled', 'refused']) shed.inc({ reason }, 0);
  return (reason) => shed.inc({ reason });
}

interface Tracked {
  /** Requests under way (pipelining aside, 0 or 1). */
  busy: number;
  /** When its request under way started. */
  busySince: number;
  /** When it last went idle: when it connected, or when its last answer finished. */
  idleSince: number;
  /** It has sent a request. */
  used: boolean;
}

export class ConnectionCap {
  private readonly open = new Map<Socket, Tracked>();

  constructor(
    readonly max: number,
    /** Told of each connection closed to make room (`idle`) or refused because all were busy (`refused`). */
    private readonly onShed: (reason: ShedReason) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** Tracks the connections and requests of `server` (every listener shares one cap). */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.connected(socket));
    // Before any route handler (this listener is added before the request handler runs): a request makes it busy.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => this.requestStarted(req.socket, res));
  }

  private connected(socket: Socket): void {
    if (this.open.size >= this.max && !this.closeLongestIdle() && !this.closeLongestStalled()) {
      this.onShed('refused');
      socket.destroy();
      return;
    }
    this.open.set(socket, { busy: 0, busySince: 0, idleSince: this.now(), used: false });
    socket.once('close', () => this.open.delete(socket));
  }

  private requestStarted(socket: Socket, res: ServerResponse): void {
    // Over TLS the request's socket wraps the one 'connection' gave; Node keeps that one as `_parent`.
    const t = this.open.get(socket) ?? this.open.get((socket as Socket & { _parent?: Socket })._parent!);
    if (!t) return;
    if (t.busy++ === 0) t.busySince = this.now();
    t.used = true;
    let done = false;
    const finished = () => {
      if (done) return;
      done = true;
      t.busy--;
      t.idleSince = this.now();
    };
    res.once('finish', finished);
    res.once('close', finished);
  }

  /** Closes the idle connection to lose first; false when every one is busy. */
  private closeLongestIdle(): boolean {
    let victim: Socket | undefined;
    let best: Tracked | undefined;
    for (const [socket, t] of this.open) {
      if (t.busy > 0) continue;
      // Never used beats used; then the longer idle.
      if (!best || (best.used && !t.used) || (best.used === t.used && t.idleSince < best.idleSince)) {
        victim = socket;
        best = t;
      }
    }
    if (!victim) return false;
    this.open.delete(victim);
    victim.destroy();
    this.onShed('idle');
    return true;
  }

  /** Closes the connection whose request has run the longest, when that is STALLED_MS or more; false otherwise. */
  private closeLongestStalled(): boolean {
    const limit = this.now() - STALLED_MS;
    let victim: Socket | undefined;
    let oldest = Infinity;
    for (const [socket, t] of this.open) {
      if (t.busy > 0 && t.busySince <= limit && t.busySince < oldest) {
        victim = socket;
        oldest = t.busySince;
      }
    }
    if (!victim) return false;
    this.open.delete(victim);
    victim.destroy();
    this.onShed('stalled');
    return true;
  }
}
