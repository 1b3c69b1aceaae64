import type { Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import { sleep } from '../abortable-sleep.js';
import { AckTracker } from './ack-tracker.js';
import type { LogsConfig } from './config.js';
import { DeadLetterFile } from './dead-letter.js';
import { LogFollower, type FollowerChunk } from './follower.js';
import type { LogEntry } from './log-entry.js';
import type { LogRecord } from './w3c-parser.js';
import { createLogMetrics, type LogMetrics } from './log-metrics.js';
import type { LogSource } from './log-source.js';
import { PositionStore, type LogPosition } from './position-store.js';
import { compileRecordFilter, type RecordFilter } from './record-filter.js';
import { redactRecord, redactSecrets } from './secret-redaction.js';
import { SinkWorker } from './sink-worker.js';
import { createSinks } from './sinks/create-sinks.js';
import type { LogSink } from './sinks/log-sink.js';
import { categoryLabel, eventLabel, severityLabel } from './vocabulary.js';

export interface LogShippingOptions {
  /** One per Wowza server; `server` names must be unique (they key the positions). */
  sources: readonly LogSource[];
  config: LogsConfig;
  registry: Registry;
  logger: Logger;
  /** Sinks to use instead of building them from `config.sinks` (embedding, tests). */
  sinks?: LogSink[];
  /** Where `stdout` sinks write; process.stdout by default. */
  stdout?: NodeJS.WritableStream;
}

export interface LogShipping {
  /**
   * Sends a record that did not come from a log file (a webhook event) through the same sinks, batching and
   * retries. Waits for queue room; no position is attached, so nothing is resumed after a crash.
   */
  publish(server: string, logType: string, record: LogRecord, timeMs: number): Promise<void>;
  /** Stops polling, lets the sinks deliver what is queued (up to `drain_timeout`), saves positions, closes sinks. */
  stop(): Promise<void>;
}

interface Running {
  server: string;
  logType: string;
  done: Promise<void>;
}

/**
 * Wires the log pipeline: followers (one per server and log type) -> parse -> filter -> a bounded
 * queue per sink -> batched delivery -> acknowledgement -> positions. A position is saved only after
 * every sink acknowledged every line before it (at-least-once); a full queue pauses the followers.
 */
export async function startLogShipping(options: LogShippingOptions): Promise<LogShipping> {
  const { config, sources } = options;
  const logger = options.logger.child({ component: 'logs' });
  const names = new Set<string>();
  for (const s of sources) {
    if (names.has(s.server)) throw new Error(`two servers are named "${s.server}": log positions need unique server names`);
    names.add(s.server);
  }

  const metrics = createLogMetrics(options.registry);
  const filter = compileRecordFilter(config.filters);
  const sinks = options.sinks ?? createSinks(config.sinks, { stdout: options.stdout, warn: (msg, meta) => logger.warn(meta, msg) });
  let positions: PositionStore;
  try {
    positions = await PositionStore.open(config.positions_file, logger);
  } catch (err) {
    await Promise.allSettled(sinks.map((s) => s.close()));
    throw err;
  }
  const deadLetter = new DeadLetterFile(config.dead_letter_file);
  let saveFailing = false;
  const savePositions = () =>
    positions.save().then(
      () => {
        if (saveFailing) logger.info({ path: positions.path }, 'log positions are saved again');
        saveFailing = false;
      },
      (err: unknown) => {
        if (!saveFailing) logger.error({ path: positions.path, error: (err as Error).message }, 'cannot save log positions; retrying');
        saveFailing = true;
      },
    );
  const workers = sinks.map(
    (sink) =>
      new SinkWorker({
        sink,
        batch: { maxLines: config.batch.max_lines, maxBytes: config.batch.max_bytes, maxWaitMs: config.batch.max_wait },
        retry: {
          minBackoffMs: config.retry.min_backoff,
          maxBackoffMs: config.retry.max_backoff,
          ...(config.retry.max_retries !== undefined ? { maxRetries: config.retry.max_retries } : {}),
        },
        capacity: config.queue_lines,
        // Positions are written once a batch is acknowledged and before the next is sent, so a crash re-sends
        // at most the batch in flight; the periodic sync only retries writes that failed.
        afterAck: () => savePositions(),
        deadLetter,
        metrics,
        logger: logger.child({ sink: sink.name }),
      }),
  );

  const abort = new AbortController();
  const running: Running[] = [];
  const tasks: Promise<void>[] = [];

  const follow = (source: LogSource, logType: string) => {
    const server = source.server;
    const labels = { server, log_type: logType };
    metrics.start(server, logType, sinks.map((s) => s.name));
    const acks = new AckTracker<LogPosition>((position) => positions.set(server, logType, position));
    const resumeFrom = positions.get(server, logType);
    const follower = new LogFollower({
      source,
      logType,
      startAt: config.start_at,
      ...(resumeFrom ? { resumeFrom } : {}),
      lineCount: config.line_count,
      followIntervalMs: config.follow_interval,
      serverFilter: {
        flags: config.server_filter.flags,
        ...(config.server_filter.search ? { search: config.server_filter.search } : {}),
        ...(config.server_filter.regex_search ? { regexSearch: config.server_filter.regex_search } : {}),
      },
      timeZone: config.time_zone,
      logger: logger.child(labels),
      onRotation: () => metrics.rotations.inc(labels),
      onReadError: () => metrics.readFailures.inc(labels),
      deliver: (chunk, signal) => deliver(chunk, signal, { acks, workers, filter, metrics, redact: config.redact_secrets }),
    });
    if (resumeFrom) logger.info({ ...labels, offset: resumeFrom.offset, file_id: resumeFrom.fileId }, 'resuming log from saved position');
    running.push({ server, logType, done: follower.run(abort.signal, true) });
  };

  for (const source of sources) {
    if (config.log_types === '*') tasks.push(discoverAndFollow(source, config.follow_interval, abort.signal, logger, follow));
    else for (const t of config.log_types) follow(source, t);
  }
  tasks.push(syncPositions(positions, config.positions_sync_interval, abort.signal, logger));
  logger.info({ servers: sources.length, sinks: sinks.map((s) => s.name), positions_file: config.positions_file }, 'log shipping started');

  let stopped: Promise<void> | undefined;
  const stop = async () => {
    abort.abort();
    await Promise.allSettled(tasks); // discovery may still add followers until it has ended
    await Promise.allSettled(running.map((r) => r.done));
    await Promise.all(workers.map((w) => w.drain(config.drain_timeout)));
    await positions.save().catch((err: unknown) => logger.error({ path: positions.path, error: (err as Error).message }, 'cannot save log positions at shutdown'));
    await Promise.allSettled(sinks.map((s) => s.close()));
    await deadLetter.close().catch(() => undefined);
    for (const r of running) metrics.forget(r.server, r.logType, sinks.map((s) => s.name));
    logger.info('log shipping stopped');
  };
  const unpositioned = new AckTracker<undefined>(() => {});
  const publish = async (server: string, logType: string, record: LogRecord, timeMs: number) => {
    const entries: LogEntry[] = [{ server, logType, line: JSON.stringify(record), record, timeMs }];
    for (;;) {
      const full = workers.find((w) => !w.hasRoom(entries.length));
      if (!full) break;
      await full.waitForRoom(entries.length, abort.signal);
    }
    if (abort.signal.aborted) return;
    const ticket = unpositioned.track(undefined, entries.length * workers.length);
    for (const w of workers) w.enqueue(entries, ticket);
  };
  return {
    publish,
    stop: () => (stopped ??= stop()),
  };
}

/** Parse results -> metrics, filter, and into every sink's queue once all have room (backpressure). */
interface Pipeline {
  acks: AckTracker<LogPosition>;
  workers: readonly SinkWorker[];
  filter: RecordFilter;
  metrics: LogMetrics;
  /** Blank credentials and tokens in URLs before lines leave. */
  redact: boolean;
}

async function deliver(chunk: FollowerChunk, signal: AbortSignal, { acks, workers, filter, metrics, redact }: Pipeline): Promise<void> {
  const { server, logType } = chunk;
  const now = Date.now();
  const entries: LogEntry[] = [];
  let lastTime: number | undefined;
  for (const { text, parsed } of chunk.lines) {
    if (parsed.kind !== 'record') continue;
    const record = parsed.record;
    metrics.lines.inc({ server, log_type: logType, severity: severityLabel(record['x-severity']) });
    if (record['x-event'] !== undefined || record['x-category'] !== undefined) {
      metrics.events.inc({ server, log_type: logType, category: categoryLabel(record['x-category']), event: eventLabel(record['x-event']) });
    }
    if (record.parse_error !== undefined) metrics.parseErrors.inc({ server, log_type: logType });
    if (parsed.timeMs !== undefined) lastTime = parsed.timeMs;
    if (!filter(record)) continue;
    entries.push(
      redact
        ? { server, logType, line: redactSecrets(text), record: redactRecord(record), timeMs: parsed.timeMs ?? now }
        : { server, logType, line: text, record, timeMs: parsed.timeMs ?? now },
    );
  }
  if (lastTime !== undefined) metrics.noteRecordTime(server, logType, lastTime);
  metrics.offset.set({ server, log_type: logType }, chunk.position.offset);
  for (;;) {
    const full = workers.find((w) => !w.hasRoom(entries.length));
    if (!full) break;
    await full.waitForRoom(entries.length, signal);
  }
  signal.throwIfAborted();
  const ticket = acks.track(chunk.position, entries.length * workers.length);
  for (const w of workers) w.enqueue(entries, ticket);
}

/** For `log_types: '*'`: lists the server's log types (retrying until it answers), then follows each. */
async function discoverAndFollow(
  source: LogSource,
  intervalMs: number,
  signal: AbortSignal,
  logger: Logger,
  follow: (source: LogSource, logType: string) => void,
): Promise<void> {
  for (let attempt = 1; !signal.aborted; attempt++) {
    try {
      const types = [...new Set(await source.listLogTypes())];
      logger.info({ server: source.server, log_types: types }, 'following every log type the server lists');
      for (const t of types) follow(source, t);
      return;
    } catch (err) {
      const retryInMs = Math.min(intervalMs * 2 ** Math.min(attempt - 1, 16), 60_000);
      logger.warn({ server: source.server, error: (err as Error).message, retryInMs }, 'cannot list log types');
      await sleep(retryInMs, signal);
    }
  }
}

/** Writes acknowledged positions every `intervalMs`; reports a failing disk once, and its recovery. */
async function syncPositions(store: PositionStore, intervalMs: number, signal: AbortSignal, logger: Logger): Promise<void> {
  let failing = false;
  while (!signal.aborted) {
    await sleep(intervalMs, signal);
    if (signal.aborted) return;
    try {
      await store.save();
      if (failing) logger.info({ path: store.path }, 'log positions are saved again');
      failing = false;
    } catch (err) {
      if (!failing) logger.error({ path: store.path, error: (err as Error).message }, 'cannot save log positions; retrying');
      failing = true;
    }
  }
}
