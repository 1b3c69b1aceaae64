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
 * So a connection over the cap makes room instead. A connection that has sent nothing for FRESH_MS gives its slot to
 * the newcomer (the one idle longest first: a flood of idle sockets sheds itself). Otherwise the newcomer enters a
 * reserve of RESERVE connections over the cap, where its first request decides, with a request in hand rather than a
 * socket that may never send one. Any request takes the slot of an idle connection if there is one (one that has sent
 * nothing for FRESH_MS, else the one idle longest since its answer: a Prometheus keep-alive connection is idle 15 s at
 * most and is reopened by its client anyway). Failing that, a health check (GET or HEAD `/-/healthy` or `/-/ready`) is
 * answered from the reserve and the connection closed: it never needs a busy connection's slot, so a busy cap cannot
 * fail it. Any other request takes the slot of the connection whose answer has waited longest, SLOW_READER_MS or more,
 * for a client that does not read it, else of the one whose request has run longest, STALLED_MS or more; else it
 * waits up to RESERVE_WAIT_MS for a slot to free up (then 503). A connection in the reserve that sends no request
 * within RESERVE_REQUEST_MS is closed. Only with the reserve full does a newcomer make room at once (from a never-used
 * connection however young, a used idle one, a non-reader, a stalled request) or is it refused: a flood cannot use the
 * reserve for more than RESERVE descriptors, and at most half of it waits, so health checks keep room there.
 *
 * A client that asks for /metrics and does not read the answer would hold its connection, and the answer's memory,
 * until server.timeout: an answer whose bytes have not moved for WRITE_DEADLINE_MS is cut off. Progress is measured,
 * not the answer's age: a Prometheus reading a 44 MB body over a slow link keeps moving and is never cut.
 *
 * The cap sits well below the descriptor limit, so the process always has descriptors left to accept with (the
 * reserve included), and for its own requests to the servers and its files.
 */

/** A request still under way after this long is stalled: its connection makes room for a request over the cap. */
export const STALLED_MS = 10_000;

/**
 * An answer none of whose bytes the client took for this long is cut off. Prometheus's default scrape timeout: a scrape
 * that has read nothing for this long has failed anyway. A fixed constant, not a setting: a client that reads, however
 * slow its link, takes bytes far more often than that.
 */
export const WRITE_DEADLINE_MS = 10_000;

/** With the cap reached, an answer that has not moved for this long makes room (the longest-stuck one first). */
export const SLOW_READER_MS = 1_000;

/** Connections let in over the cap for a health check or a request waiting for a slot. */
export const RESERVE = 16;

/** At most this many requests wait in the reserve: the rest of it stays free for health checks. */
const RESERVE_WAITING = RESERVE / 2;

/** A connection in the reserve that has not sent its request by then is closed (a probe sends it at once). */
export const RESERVE_REQUEST_MS = 2_000;

/** A request waiting in the reserve for a slot is answered 503 after this (shorter than a scrape timeout). */
export const RESERVE_WAIT_MS = 5_000;

/** A never-used connection younger than this keeps its slot (but with the reserve full): its first request may be on its way. */
const FRESH_MS = 1_000;

/** How often answers under way are checked for progress, and waiting requests for a slot. */
const SWEEP_MS = 250;

/** A look this much later than the last one means the event loop was held: the wait is not counted against readers. */
const HELD_MS = 1_000;

/** Health checks: answered from the reserve when every slot is busy, and without basic auth (listen.ts). */
export const HEALTH_PATHS: ReadonlySet<string> = new Set(['/-/healthy', '/-/ready']);

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
export type ShedReason = 'idle' | 'slow_reader' | 'stalled' | 'refused';

const SHED_REASONS: readonly ShedReason[] = ['idle', 'slow_reader', 'stalled', 'refused'];

export function connectionCapMetrics(registry: Registry, max: number): (reason: ShedReason) => void {
  new Gauge({ name: 'wowza_exporter_http_max_connections', help: 'Inbound connections the exporter keeps open at most (web.max_connections).', registers: [registry] }).set(max);
  const shed = new Counter({
    name: 'wowza_exporter_http_connections_shed_total',
    help:
      'Inbound connections closed by the exporter: idle (the longest-idle one, closed at web.max_connections to make room for a new one), slow_reader (one whose answer the client did not read: for 10 s, or for 1 s when a request needed its slot), stalled (the one whose request ran longest, over 10 s, when a request needed its slot), refused (a new one over the cap, not a health check, that found no slot).',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of SHED_REASONS) shed.inc({ reason }, 0);
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
  /** The socket its answers are written to: over TLS, the TLS socket that wraps this one. */
  out?: Socket;
  /** Bytes of its answer not yet taken by the kernel, at the last look. */
  queued: number;
  /** When `queued` last changed (or was 0): the answer's last progress. */
  movedAt: number;
}

/** A connection over the cap, in the reserve. */
interface Provisional {
  /** Its deadline: for its request, for a slot, or (once answered) for closing. */
  timer: NodeJS.Timeout;
  /** Its one request has arrived. */
  requested: boolean;
  /** That request, not a health check, waiting for a slot. */
  waiting?: { req: IncomingMessage; res: ServerResponse; dispatch: () => void };
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Over TLS the request's socket wraps the one 'connection' gave; Node keeps that one as `_parent`. */
const parentOf = (socket: Socket): Socket | undefined => (socket as Socket & { _parent?: Socket })._parent;

/**
 * Bytes libuv still has to hand to the kernel: during one large write (a whole scrape body is one), the only number
 * that moves as the client reads. Node's own socket timeout reads it the same way to tell a slow write from none.
 */
const writeQueueSize = (socket: Socket): number => (socket as Socket & { _handle?: { writeQueueSize?: number } | null })._handle?.writeQueueSize ?? 0;

const isHealthCheck = (req: IncomingMessage): boolean =>
  (req.method === 'GET' || req.method === 'HEAD') && HEALTH_PATHS.has((req.url ?? '').split('?', 1)[0]!);

/** Idle connections, as the cap closes them: never used (a flood of idle sockets), sending nothing for FRESH_MS, used. */
const neverUsed = (t: Tracked): boolean => !t.used;
const stale = (t: Tracked, now: number): boolean => !t.used && now - t.idleSince >= FRESH_MS;
const used = (t: Tracked): boolean => t.used;

export class ConnectionCap {
  private readonly open = new Map<Socket, Tracked>();
  private readonly reserve = new Map<Socket, Provisional>();
  private sweeper: NodeJS.Timeout | undefined;
  /** When checkWrites last ran (the process's own clock: the held event loop is a fact of this process, not of `now`). */
  private lookedAt: number | undefined;

  constructor(
    readonly max: number,
    /** Told of each connection closed to make room or for not reading, and of each newcomer refused. */
    private readonly onShed: (reason: ShedReason) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** Connections under the cap. */
  get size(): number {
    return this.open.size;
  }

  /** Connections over the cap, in the reserve. */
  get reserved(): number {
    return this.reserve.size;
  }

  /**
   * Tracks the connections and requests of `server` (every listener shares one cap). Call it once the server has its
   * request handler: the handler then runs only for requests the cap lets through, so a refused one costs no render.
   */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.connected(socket));
    const handlers = server.listeners('request') as Handler[];
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) =>
      this.requestStarted(req, res, () => {
        for (const handler of handlers) handler.call(server, req, res);
      }),
    );
  }

  /**
   * Looks at every answer under way: one that has not moved for WRITE_DEADLINE_MS is cut off; requests waiting in the
   * reserve get a slot that has freed up. Runs every SWEEP_MS while there is anything to look at (tests call it too).
   */
  checkWrites(): void {
    const now = this.now();
    // The exporter's own event loop was held (a big poll, a garbage collection): no bytes could leave meanwhile, and
    // timers run before the writes they held up, so that time is not the reader's. It starts over from now.
    const looked = performance.now();
    const held = this.lookedAt !== undefined && looked - this.lookedAt > HELD_MS;
    this.lookedAt = looked;
    for (const [socket, t] of this.open) {
      if (t.busy === 0) continue;
      this.refresh(socket, t, now);
      if (held) t.movedAt = now;
      if (t.queued > 0 && now - t.movedAt >= WRITE_DEADLINE_MS) this.shed(socket, 'slow_reader');
    }
    this.admitWaiting();
    if (this.sweeper && this.waitingCount() === 0 && ![...this.open.values()].some((t) => t.busy > 0)) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
      this.lookedAt = undefined;
    }
  }

  private connected(socket: Socket): void {
    socket.once('close', () => this.closed(socket));
    // Requests already waiting have the first claim on any room.
    this.admitWaiting();
    const first = this.waitingCount() === 0;
    if (this.open.size < this.max || (first && this.closeIdle(stale))) {
      this.open.set(socket, this.tracked(false));
      return;
    }
    // Any other connection loses its slot to a request, not to a connection that may never send one.
    if (this.reserve.size < RESERVE) {
      const p: Provisional = { timer: this.deadline(socket, RESERVE_REQUEST_MS), requested: false };
      this.reserve.set(socket, p);
      return;
    }
    if (first && (this.closeIdle(neverUsed) || this.closeIdle(used) || this.closeBusy())) {
      this.open.set(socket, this.tracked(false));
      return;
    }
    this.onShed('refused');
    socket.destroy();
  }

  private closed(socket: Socket): void {
    const p = this.reserve.get(socket);
    if (p) {
      clearTimeout(p.timer);
      this.reserve.delete(socket);
    }
    // A slot freed by its client: a waiting request takes it.
    if (this.open.delete(socket)) this.admitWaiting();
  }

  private tracked(used: boolean): Tracked {
    const now = this.now();
    return { busy: 0, busySince: 0, idleSince: now, used, queued: 0, movedAt: now };
  }

  private requestStarted(req: IncomingMessage, res: ServerResponse, dispatch: () => void): void {
    const socket = this.open.has(req.socket) || this.reserve.has(req.socket) ? req.socket : (parentOf(req.socket) ?? req.socket);
    const t = this.open.get(socket);
    if (t) {
      this.track(t, req, res);
      dispatch();
      return;
    }
    const p = this.reserve.get(socket);
    if (!p) {
      dispatch();
      return;
    }
    // One request per connection in the reserve: a second one would be served without a slot.
    if (p.requested) {
      socket.destroy();
      return;
    }
    p.requested = true;
    clearTimeout(p.timer);
    const health = isHealthCheck(req);
    if (this.waitingCount() === 0 && this.roomForRequest(health)) {
      this.promote(socket, req, res, dispatch);
      return;
    }
    if (health) {
      // Answered without a slot; closed after the answer so the reserve frees up at once.
      res.setHeader('connection', 'close');
      p.timer = this.deadline(socket, RESERVE_REQUEST_MS);
      dispatch();
      return;
    }
    if (this.waitingCount() >= RESERVE_WAITING) {
      this.refuse(socket, p, res);
      return;
    }
    p.waiting = { req, res, dispatch };
    p.timer = this.deadline(socket, RESERVE_WAIT_MS);
    this.startSweeping();
  }

  /** Counts a request as under way on `t` until its answer is finished (or the connection goes). */
  private track(t: Tracked, req: IncomingMessage, res: ServerResponse): void {
    if (t.busy++ === 0) t.busySince = this.now();
    t.used = true;
    t.out = req.socket;
    let done = false;
    const finished = () => {
      if (done) return;
      done = true;
      t.busy--;
      t.idleSince = this.now();
    };
    res.once('finish', finished);
    res.once('close', finished);
    this.startSweeping();
  }

  /** Moves a connection from the reserve under the cap, and starts its waiting request. */
  private promote(socket: Socket, req: IncomingMessage, res: ServerResponse, dispatch: () => void): void {
    const p = this.reserve.get(socket);
    if (p) clearTimeout(p.timer);
    this.reserve.delete(socket);
    const t = this.tracked(true);
    this.open.set(socket, t);
    this.track(t, req, res);
    dispatch();
  }

  /** Starts waiting requests, oldest first, while there is (or can be made) room. */
  private admitWaiting(): void {
    for (const [socket, p] of this.reserve) {
      if (!p.waiting) continue;
      if (!this.roomForRequest(false)) return;
      const { req, res, dispatch } = p.waiting;
      p.waiting = undefined;
      this.promote(socket, req, res, dispatch);
    }
  }

  private waitingCount(): number {
    let n = 0;
    for (const p of this.reserve.values()) if (p.waiting) n++;
    return n;
  }

  /** A 503 for a request that found no slot; the connection closes after it (or at the deadline, if not read). */
  private refuse(socket: Socket, p: Provisional, res: ServerResponse): void {
    p.waiting = undefined;
    clearTimeout(p.timer);
    p.timer = this.deadline(socket, RESERVE_REQUEST_MS);
    this.onShed('refused');
    const body = 'too many connections: try again\n';
    res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), 'x-content-type-options': 'nosniff', connection: 'close' });
    res.end(body);
  }

  /** The reserve's deadline for `socket`: a waiting request is refused; a connection without one is closed. */
  private deadline(socket: Socket, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      // After the loop's next poll: a request that arrived while the loop was busy is read before the verdict.
      setImmediate(() => {
        const p = this.reserve.get(socket);
        if (!p || p.timer !== timer) return;
        if (p.waiting) this.refuse(socket, p, p.waiting.res);
        else {
          if (!p.requested) this.onShed('refused');
          socket.destroy();
        }
      });
    }, ms);
    timer.unref();
    return timer;
  }

  private startSweeping(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => this.checkWrites(), SWEEP_MS);
    this.sweeper.unref();
  }

  /** Notes whether the answer under way on `socket` has moved since the last look. */
  private refresh(socket: Socket, t: Tracked, now: number): void {
    const out = t.out ?? socket;
    const queued = out.writableLength + (out === socket ? 0 : socket.writableLength) + writeQueueSize(socket);
    if (queued === 0 || queued !== t.queued) {
      t.queued = queued;
      t.movedAt = now;
    }
  }

  /**
   * Whether a request in the reserve has a slot, making one if need be: from an idle connection (one that has sent
   * nothing for FRESH_MS, else the longest idle since its answer), else, unless it is a health check (answered from the
   * reserve instead), from an answer nobody reads or a stalled request.
   */
  private roomForRequest(health: boolean): boolean {
    if (this.open.size < this.max) return true;
    return this.closeIdle(stale) || this.closeIdle(used) || (!health && this.closeBusy());
  }

  /** Closes the answer stuck longest (SLOW_READER_MS or more), else the request run longest (STALLED_MS or more). */
  private closeBusy(): boolean {
    const now = this.now();
    for (const [socket, t] of this.open) if (t.busy > 0) this.refresh(socket, t, now);
    return this.closeSlowestReader(now) || this.closeLongestStalled(now);
  }

  private shed(socket: Socket, reason: ShedReason): void {
    this.open.delete(socket);
    socket.destroy();
    this.onShed(reason);
  }

  /** Closes the idle connection `which` accepts that has been idle longest; false when there is none. */
  private closeIdle(which: (t: Tracked, now: number) => boolean): boolean {
    const now = this.now();
    let victim: Socket | undefined;
    let since = Infinity;
    for (const [socket, t] of this.open) {
      if (t.busy === 0 && which(t, now) && t.idleSince < since) {
        victim = socket;
        since = t.idleSince;
      }
    }
    if (!victim) return false;
    this.shed(victim, 'idle');
    return true;
  }

  /** Closes the connection whose answer has not moved for longest, when that is SLOW_READER_MS or more. */
  private closeSlowestReader(now: number): boolean {
    let victim: Socket | undefined;
    let oldest = now - SLOW_READER_MS;
    for (const [socket, t] of this.open) {
      if (t.busy > 0 && t.queued > 0 && t.movedAt <= oldest) {
        victim = socket;
        oldest = t.movedAt;
      }
    }
    if (!victim) return false;
    this.shed(victim, 'slow_reader');
    return true;
  }

  /** Closes the connection whose request has run the longest, when that is STALLED_MS or more; false otherwise. */
  private closeLongestStalled(now: number): boolean {
    const limit = now - STALLED_MS;
    let victim: Socket | undefined;
    let oldest = Infinity;
    for (const [socket, t] of this.open) {
      if (t.busy > 0 && t.busySince <= limit && t.busySince < oldest) {
        victim = socket;
        oldest = t.busySince;
      }
    }
    if (!victim) return false;
    this.shed(victim, 'stalled');
    return true;
  }
}
