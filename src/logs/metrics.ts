import { Counter, Gauge, type Registry } from '../metrics/prom-client-core.js';

type Follow = 'server' | 'log_type';
type Ship = 'server' | 'log_type' | 'sink';

/** Metrics of the log followers and sinks; names are part of the contract (docs/metrics.md). */
export interface LogMetrics {
  lines: Counter<Follow | 'severity'>;
  events: Counter<Follow | 'category' | 'event'>;
  parseErrors: Counter<Follow>;
  offset: Gauge<Follow>;
  lag: Gauge<Follow>;
  rotations: Counter<Follow>;
  rotationGaps: Counter<Follow>;
  readFailures: Counter<Follow>;
  repeatedLines: Counter<Follow>;
  rapidRotations: Counter<Follow>;
  forwarded: Counter<Ship>;
  failures: Counter<Ship>;
  queue: Gauge<Ship>;
  deadLetters: Counter<Ship>;
  queueBytes: Gauge<'sink'>;
  positionsUnusable: Counter<'fallback'>;
  /**
   * Gives the follower's oldest line read but not yet acknowledged by every sink (its read time, epoch ms), from
   * which wowza_log_follower_oldest_unacked_seconds is computed at scrape time.
   */
  watchUnacked(server: string, logType: string, oldestReadAt: () => number | undefined): void;
  /** Records the time of the last record read, from which the lag gauge is computed at scrape time. */
  noteRecordTime(server: string, logType: string, timeMs: number): void;
  /**
   * Records a read: the offset reached, the length of its file, and the lines and bytes it brought. The backlog (bytes
   * and estimated lines not read yet) and the time to read it at the recent pace are computed from these at scrape time.
   */
  noteRead(server: string, logType: string, read: { offset: number; fileLength: number; lines: number; bytes: number; atMs: number }): void;
  /**
   * Creates a follower's failure and delivery counters at 0, so `rate()` and `increase()` see the first
   * failure instead of a series that starts at 1.
   */
  start(server: string, logType: string, sinks: readonly string[]): void;
  /** Removes the gauges of a follower that stopped, so no stale value stays behind. */
  forget(server: string, logType: string, sinks: readonly string[]): void;
}

/** A follower's backlog as of its last read, and the pace of its reads. */
interface Backlog {
  server: string;
  logType: string;
  bytes: number;
  /** Average bytes a line takes, smoothed over the reads. */
  lineBytes: number;
  bytesPerSecond: number;
  offset: number;
  atMs: number;
}

const created = new WeakMap<Registry, LogMetrics>();

/** Creates the log metrics on `registry` (once per registry: later calls return the same set). */
export function createLogMetrics(registry: Registry): LogMetrics {
  const existing = created.get(registry);
  if (existing) return existing;
  const registers = [registry];
  const lastRecord = new Map<string, { server: string; logType: string; ms: number }>();
  const backlogs = new Map<string, Backlog>();
  const unacked = new Map<string, { server: string; logType: string; oldest: () => number | undefined }>();
  const followLabels = ['server', 'log_type'] as const;
  const shipLabels = ['server', 'log_type', 'sink'] as const;
  const lag = new Gauge({
    name: 'wowza_log_follower_lag_seconds',
    help: 'Seconds between now and the timestamp of the last log record read.',
    labelNames: followLabels,
    registers,
    collect() {
      const now = Date.now();
      for (const r of lastRecord.values()) this.set({ server: r.server, log_type: r.logType }, Math.max(0, (now - r.ms) / 1000));
    },
  });
  const oldestUnacked = new Gauge({
    name: 'wowza_log_follower_oldest_unacked_seconds',
    help: 'Age of the oldest log line the follower read that not every sink has acknowledged yet; 0 when none waits. A value that keeps growing is a stalled delivery.',
    labelNames: followLabels,
    registers,
    collect() {
      const now = Date.now();
      for (const u of unacked.values()) {
        const at = u.oldest();
        this.set({ server: u.server, log_type: u.logType }, at === undefined ? 0 : Math.max(0, (now - at) / 1000));
      }
    },
  });
  const backlogGauge = (name: string, help: string, value: (b: Backlog) => number) =>
    new Gauge({
      name,
      help,
      labelNames: followLabels,
      registers,
      collect() {
        for (const b of backlogs.values()) this.set({ server: b.server, log_type: b.logType }, value(b));
      },
    });
  const backlogBytes = backlogGauge('wowza_log_follower_backlog_bytes', 'Bytes of the log file not read yet, as of the last read (its file length less the read offset); 0 when caught up.', (b) => b.bytes);
  const backlogLines = backlogGauge(
    'wowza_log_follower_backlog_lines',
    'Lines of the log file not read yet, estimated from the backlog in bytes and the average length of the lines read so far.',
    (b) => (b.bytes > 0 && b.lineBytes > 0 ? Math.round(b.bytes / b.lineBytes) : 0),
  );
  const catchUp = backlogGauge(
    'wowza_log_follower_catch_up_seconds',
    'Estimated seconds until the follower has read its backlog, at the pace of its recent reads (which the server\'s request budget bounds); 0 when caught up.',
    (b) => (b.bytes > 0 && b.bytesPerSecond > 0 ? Math.round(b.bytes / b.bytesPerSecond) : 0),
  );
  const metrics: LogMetrics = {
    lines: new Counter({ name: 'wowza_log_lines_total', help: 'Log lines read, by severity (debug, info, warn, error, other, none).', labelNames: [...followLabels, 'severity'], registers }),
    events: new Counter({ name: 'wowza_log_events_total', help: 'Log records read, by category and event (unknown values as other).', labelNames: [...followLabels, 'category', 'event'], registers }),
    parseErrors: new Counter({ name: 'wowza_log_parse_errors_total', help: 'Log lines that could not be parsed completely (shipped with a parse_error field).', labelNames: followLabels, registers }),
    offset: new Gauge({ name: 'wowza_log_follower_offset_bytes', help: 'Byte offset the follower reads the log file from next.', labelNames: followLabels, registers }),
    lag,
    rotations: new Counter({ name: 'wowza_log_rotations_total', help: 'Log file rotations the follower detected.', labelNames: followLabels, registers }),
    rotationGaps: new Counter({
      name: 'wowza_log_rotation_gaps_total',
      help: 'Rotations after which the rest of the rolled file could not be found or read: lines written between the last read and the rotation were lost.',
      labelNames: followLabels,
      registers,
    }),
    readFailures: new Counter({ name: 'wowza_log_follower_read_failures_total', help: 'Failed reads of the log through the REST API.', labelNames: followLabels, registers }),
    repeatedLines: new Counter({
      name: 'wowza_log_repeated_lines_total',
      help: 'Lines a read returned although its end offset did not pass its start (a server whose end offset does not move): not shipped again.',
      labelNames: followLabels,
      registers,
    }),
    rapidRotations: new Counter({
      name: 'wowza_log_rapid_rotations_total',
      help: 'Rotations seen less than two follow intervals after the one before, from the third in a row: the log start date or first line keeps changing; the follower backs off.',
      labelNames: followLabels,
      registers,
    }),
    forwarded: new Counter({ name: 'wowza_log_forwarded_lines_total', help: 'Log lines the sink acknowledged.', labelNames: shipLabels, registers }),
    failures: new Counter({ name: 'wowza_log_forward_failures_total', help: 'Failed delivery attempts (retries included) of batches holding lines of this log.', labelNames: shipLabels, registers }),
    queue: new Gauge({ name: 'wowza_log_forward_queue_lines', help: 'Log lines waiting for the sink or being sent to it.', labelNames: shipLabels, registers }),
    deadLetters: new Counter({ name: 'wowza_log_dead_letter_lines_total', help: 'Log lines the sink refused for good (or gave up on), written to the dead-letter file.', labelNames: shipLabels, registers }),
    queueBytes: new Gauge({
      name: 'wowza_log_forward_queue_bytes',
      help: 'Bytes of log lines the sink holds (queued or being sent), as counted against logs.max_queue_bytes; at the limit, followers stop reading.',
      labelNames: ['sink'],
      registers,
    }),
    positionsUnusable: new Counter({
      name: 'wowza_log_positions_unusable_total',
      help: 'Starts that found the positions file corrupt, truncated or unreadable; fallback="previous": resumed from its previous copy (lines re-sent, none lost), "none": no usable copy, logs started at start_at.',
      labelNames: ['fallback'],
      registers,
    }),
    watchUnacked(server, logType, oldest) {
      unacked.set(`${server}\u0000${logType}`, { server, logType, oldest });
    },
    noteRecordTime(server, logType, ms) {
      lastRecord.set(`${server}\u0000${logType}`, { server, logType, ms });
    },
    noteRead(server, logType, read) {
      const key = `${server}\u0000${logType}`;
      let b = backlogs.get(key);
      if (!b) backlogs.set(key, (b = { server, logType, bytes: 0, lineBytes: 0, bytesPerSecond: 0, offset: read.offset, atMs: read.atMs }));
      b.bytes = Math.max(0, read.fileLength - read.offset);
      if (read.lines > 0) b.lineBytes = b.lineBytes === 0 ? read.bytes / read.lines : b.lineBytes * 0.8 + (read.bytes / read.lines) * 0.2;
      // The pace of reading, smoothed over the last reads: a rotation (the offset going back) starts it again.
      const seconds = (read.atMs - b.atMs) / 1000;
      if (read.offset >= b.offset && seconds > 0) {
        const pace = (read.offset - b.offset) / seconds;
        b.bytesPerSecond = b.bytesPerSecond === 0 ? pace : b.bytesPerSecond * 0.7 + pace * 0.3;
      }
      b.offset = read.offset;
      b.atMs = read.atMs;
    },
    start(server, logType, sinks) {
      const labels = { server, log_type: logType };
      for (const c of [metrics.parseErrors, metrics.rotations, metrics.rotationGaps, metrics.readFailures, metrics.repeatedLines, metrics.rapidRotations]) c.inc(labels, 0);
      for (const sink of sinks) for (const c of [metrics.forwarded, metrics.failures, metrics.deadLetters]) c.inc({ ...labels, sink }, 0);
    },
    forget(server, logType, sinks) {
      lastRecord.delete(`${server}\u0000${logType}`);
      unacked.delete(`${server}\u0000${logType}`);
      backlogs.delete(`${server}\u0000${logType}`);
      const labels = { server, log_type: logType };
      for (const g of [backlogBytes, backlogLines, catchUp]) g.remove(labels);
      lag.remove(labels);
      oldestUnacked.remove(labels);
      metrics.offset.remove(labels);
      for (const sink of sinks) metrics.queue.remove({ ...labels, sink });
    },
  };
  // At 0 from the start, so an alert on increase() sees the first one.
  for (const fallback of ['previous', 'none']) metrics.positionsUnusable.inc({ fallback }, 0);
  created.set(registry, metrics);
  return metrics;
}
