import type { Registry } from 'prom-client';
import type { Logger } from '../base/logger.js';
import { sleep } from '../base/abortable-sleep.js';
import { AckTracker } from './acks/ack-tracker.js';
import type { LogsConfig } from '../config/logs.js';
import { DeadLetterFile } from './sinks/dead-letter.js';
import { EncoderPool } from './transform/encoder-pool.js';
import { LogFollower, type FollowerChunk } from './source/follower.js';
import { entriesOf, type EncodedSegment, type LineSegment } from './transform/line-encoding.js';
import { entryFootprint, logEntry, type LogEntry } from './transform/entry.js';
import type { LogRecord } from './transform/w3c-parser.js';
import { createLogMetrics, type LogMetrics } from './metrics.js';
import type { LogSource } from './source/source.js';
import { PositionStore, type LogPosition } from './acks/positions.js';
import { compileRecordFilter } from './transform/record-filter.js';
import { SinkWorker } from './sinks/sink-worker.js';
import { createSinks } from './sinks/create-sinks.js';
import type { LogSink } from './sinks/sink.js';

export interface LogShippingOptions {
  /** One per Wowza server; `server` names must be unique (they key the positions). */
  sources: readonly LogSource[];
  config: LogsConfig;
  registry: Registry;
  logger: Logger;
  /** Sinks to use instead of building them from `config.sinks` (embedding, tests). */
  sinks?: LogSink[];
  /** Where `stdout` sinks write; standard output (file descriptor 1) by default. */
  stdout?: NodeJS.WritableStream;
  /** The encoder threads' script, for tests that run from sources (default: the compiled one beside this module). */
  encoderWorkerUrl?: URL;
}

export interface LogShipping {
  /**
   * Sends a record that did not come from a log file (a webhook event) through the same sinks, batching and
   * retries. Waits for queue room; no position is attached, so nothing is resumed after a crash.
   */
  publish(server: string, logType: string, record: LogRecord, timeMs: number): Promise<void>;
  /** Starts following a server that joined (target files, a reload). */
  addSource(source: LogSource): void;
  /** Stops following a server: its followers end, what they read is still delivered, positions are saved. */
  removeSource(server: string): Promise<void>;
  /** Stops polling, lets the sinks deliver what is queued (up to `drain_timeout`), saves positions, closes sinks. */
  stop(): Promise<void>;
  /** The followers now, with the last read error of each (the status page). */
  followers(): Array<{ server: string; logType: string; oldestUnackedSeconds: number; lastError?: { message: string; at: number; failing: boolean } }>;
  /** The sink names, in configuration order. */
  readonly sinkNames: readonly string[];
}

interface Running {
  server: string;
  logType: string;
  done: Promise<void>;
  /** Chunks read and queued but not yet acknowledged by every sink. */
  outstanding: () => number;
}

/**
 * How long a server's removal (a reload or target file that changed its settings) waits for the lines already queued
 * to be delivered before the positions are saved. Without the wait, the follower that takes over starts from the last
 * acknowledged position and sends those lines a second time; with a sink that stays down longer, it still does
 * (at-least-once), and says so.
 */
const HANDOVER_DRAIN_MS = 30_000;

interface Followed {
  abort: AbortController;
  /** The log-type discovery of `log_types: '*'`, which may still add followers. */
  discovery?: Promise<void>;
}

/**
 * Wires the log pipeline: followers (one per server and log type) -> parse -> filter -> a bounded
 * queue per sink -> batched delivery -> acknowledgement -> positions. A position is saved only after
 * every sink acknowledged every line before it (at-least-once); a full queue pauses the followers.
 */
export async function startLogShipping(options: LogShippingOptions): Promise<LogShipping> {
  const { config, sources } = options;
  const logger = options.logger.child({ component: 'logs' });
  uniqueServers(sources);

  const metrics = createLogMetrics(options.registry);
  // Compiled here too so a bad regular expression fails at start-up, not in the encoder.
  compileRecordFilter(config.filters);
  const sinks = options.sinks ?? createSinks(config.sinks, { stdout: options.stdout, warn: (msg, meta) => logger.warn(meta, msg) });
  const positions = await openPositions(config, sinks, metrics, logger);
  const deadLetter = new DeadLetterFile(config.dead_letter_file);
  const { encoders, outputs } = encodersFor(config, sinks, logger, options.encoderWorkerUrl);
  const savePositions = positionSaver(positions, logger);
  const workers = sinkWorkers(config, sinks, savePositions, deadLetter, metrics, logger);

  const abort = new AbortController();
  const running: Running[] = [];
  const tasks: Promise<void>[] = [];
  const followed = new Map<string, Followed>();
  const lastErrors = new Map<string, { message: string; at: number; failing: boolean }>();
  const unackedOf = new Map<string, () => number | undefined>();

  const follow = (source: LogSource, logType: string) => {
    const signal = followed.get(source.server)?.abort.signal ?? abort.signal;
    const server = source.server;
    const labels = { server, log_type: logType };
    metrics.start(server, logType, sinks.map((s) => s.name));
    const acks = new AckTracker<LogPosition>((position) => positions.set(server, logType, position));
    const resumeFrom = positions.get(server, logType);
    const chunks = pipelined({ acks, workers, encoders, metrics, outputs, maxQueueBytes: config.max_queue_bytes });
    metrics.watchUnacked(server, logType, chunks.oldestUnackedAt);
    unackedOf.set(`${server}\u0000${logType}`, chunks.oldestUnackedAt);
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
      deferRecords: true,
      logger: logger.child(labels),
      onRotation: () => metrics.rotations.inc(labels),
      onRotationGap: () => metrics.rotationGaps.inc(labels),
      onRepeatedLines: (n) => metrics.repeatedLines.inc(labels, n),
      onRapidRotation: () => metrics.rapidRotations.inc(labels),
      onReadError: (err) => {
        metrics.readFailures.inc(labels);
        lastErrors.set(`${server}\u0000${logType}`, { message: err instanceof Error ? err.message : String(err), at: Date.now(), failing: true });
      },
      onReadOk: () => {
        const e = lastErrors.get(`${server}\u0000${logType}`);
        if (e) e.failing = false;
      },
      deliver: chunks.deliver,
    });
    if (resumeFrom) logger.info({ ...labels, offset: resumeFrom.offset, file_id: resumeFrom.fileId }, 'resuming log from saved position');
    running.push({ server, logType, done: follower.run(signal, true).then(chunks.settled), outstanding: () => acks.outstanding });
  };

  const addSource = (source: LogSource) => {
    if (followed.has(source.server)) throw new Error(`the logs of server "${source.server}" are already followed`);
    const entry: Followed = { abort: new AbortController() };
    // The shutdown stops every follower.
    abort.signal.addEventListener('abort', () => entry.abort.abort(), { once: true });
    followed.set(source.server, entry);
    if (config.log_types === '*') entry.discovery = discoverAndFollow(source, config.follow_interval, entry.abort.signal, logger, follow);
    else entry.discovery = followListed(source, config.log_types, logger, follow);
  };

  const removeSource = async (server: string) => {
    const entry = followed.get(server);
    if (!entry) return;
    followed.delete(server);
    entry.abort.abort();
    await entry.discovery;
    const mine = running.filter((r) => r.server === server);
    await Promise.allSettled(mine.map((r) => r.done));
    // A handover, not a shutdown: let what is queued reach the sinks, so the positions saved below cover it.
    const drainUntil = Date.now() + HANDOVER_DRAIN_MS;
    const queued = () => mine.reduce((n, r) => n + r.outstanding(), 0);
    while (queued() > 0 && Date.now() < drainUntil && !abort.signal.aborted) await new Promise((r) => setTimeout(r, 50));
    if (queued() > 0) {
      logger.warn({ server, chunks: queued() }, 'lines of a server whose logs are no longer followed are still waiting for a sink: the follower that takes over may send them again');
    }
    for (const r of mine) {
      running.splice(running.indexOf(r), 1);
      metrics.forget(r.server, r.logType, sinks.map((s) => s.name));
      lastErrors.delete(`${r.server}\u0000${r.logType}`);
      unackedOf.delete(`${r.server}\u0000${r.logType}`);
    }
    await savePositions();
    logger.info({ server }, 'stopped following the logs of a server that is no longer polled');
  };

  for (const source of sources) addSource(source);
  tasks.push(syncPositions(positions, config.positions_sync_interval, abort.signal, logger));
  logger.info({ servers: sources.length, sinks: sinks.map((s) => s.name), positions_file: config.positions_file }, 'log shipping started');

  let stopped: Promise<void> | undefined;
  const stop = async () => {
    abort.abort();
    await Promise.allSettled(tasks);
    await Promise.allSettled([...followed.values()].map((f) => f.discovery)); // it may still add followers until it has ended
    await Promise.allSettled(running.map((r) => r.done));
    await encoders.close();
    await Promise.all(workers.map((w) => w.drain(config.drain_timeout)));
    await positions.save().catch((err: unknown) => logger.error({ path: positions.path, error: (err as Error).message }, 'cannot save log positions at shutdown'));
    await Promise.allSettled(sinks.map((s) => s.close()));
    await deadLetter.close().catch(() => undefined);
    for (const r of running) metrics.forget(r.server, r.logType, sinks.map((s) => s.name));
    logger.info('log shipping stopped');
  };
  const unpositioned = new AckTracker<undefined>(() => {});
  const publish = async (server: string, logType: string, record: LogRecord, timeMs: number) => {
    const entry = logEntry(server, logType, '', record, timeMs);
    const entries: LogEntry[] = [{ ...entry, line: JSON.stringify(record) }];
    const bytes = entryFootprint(entries[0]!);
    for (;;) {
      const full = workers.find((w) => !w.hasRoom(entries.length, bytes));
      if (!full) break;
      await full.waitForRoom(entries.length, bytes, abort.signal);
    }
    if (abort.signal.aborted) return;
    const ticket = unpositioned.track(undefined, entries.length * workers.length);
    for (const w of workers) w.enqueue(entries, ticket);
  };
  return {
    publish,
    addSource,
    removeSource,
    stop: () => (stopped ??= stop()),
    followers: () =>
      running.map((r) => {
        const key = `${r.server}\u0000${r.logType}`;
        const lastError = lastErrors.get(key);
        const oldest = unackedOf.get(key)?.();
        const oldestUnackedSeconds = oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest) / 1000);
        return { server: r.server, logType: r.logType, oldestUnackedSeconds, ...(lastError ? { lastError } : {}) };
      }),
    sinkNames: sinks.map((s) => s.name),
  };
}

/** Deferred lines -> encoders (parse, count, filter, JSON) -> into every sink's queue once all have room. */
interface Pipeline {
  acks: AckTracker<LogPosition>;
  workers: readonly SinkWorker[];
  encoders: EncoderPool;
  metrics: LogMetrics;
  /** What the encoders write for each line: the sinks' needs. */
  outputs: { documents: boolean; lokiLines: boolean };
  /** logs.max_queue_bytes: also bounds what waits between the follower and the queues. */
  maxQueueBytes: number;
}

/** The chunk's record lines in runs of one layout, cut so that every encoder thread gets a share. */
function segmentsOf({ server, logType, lines }: FollowerChunk, encoders: EncoderPool): LineSegment[] {
  let total = 0;
  for (const l of lines) if (l.parsed.kind === 'deferred') total++;
  const size = encoders.partSize(total);
  const segments: LineSegment[] = [];
  let current: LineSegment | undefined;
  for (const { text, parsed } of lines) {
    if (parsed.kind !== 'deferred') continue;
    if (!current || current.fields !== parsed.fields || current.zone !== parsed.zone || current.lines.length >= size) {
      current = { server, logType, fields: parsed.fields, zone: parsed.zone, lines: [] };
      segments.push(current);
    }
    current.lines.push(text);
  }
  return segments;
}

function countLines(metrics: LogMetrics, server: string, logType: string, encoded: readonly EncodedSegment[]): void {
  const severities = new Map<string, number>();
  const events = new Map<string, { category: string; event: string; n: number }>();
  let parseErrors = 0;
  for (const { counts } of encoded) {
    for (const [severity, n] of counts.severities) severities.set(severity, (severities.get(severity) ?? 0) + n);
    for (const [category, event, n] of counts.events) {
      const key = `${category}\u0000${event}`;
      const known = events.get(key);
      if (known) known.n += n;
      else events.set(key, { category, event, n });
    }
    parseErrors += counts.parseErrors;
  }
  for (const [severity, n] of severities) metrics.lines.inc({ server, log_type: logType, severity }, n);
  for (const { category, event, n } of events.values()) metrics.events.inc({ server, log_type: logType, category, event }, n);
  if (parseErrors > 0) metrics.parseErrors.inc({ server, log_type: logType }, parseErrors);
}

interface EncodedChunk {
  chunk: FollowerChunk;
  entries: LogEntry[];
}

/** Chunks between a follower and the sink queues: one encoding while the one before waits for its turn. */
const PIPELINE_DEPTH = 2;
/**
 * A chunk whose lines take more than this share of max_queue_bytes is not read ahead of: the follower waits until it
 * is queued. Pages of long lines (up to max_response_size each) would otherwise put two more such chunks, parsed and
 * encoded, beside a full queue.
 */
const READ_AHEAD_SHARE = 1 / 8;

/**
 * The follower's `deliver`: encodes a chunk, then queues it once the chunk before it is queued. It resolves
 * when the chunk before is queued, so the follower reads (and the encoders parse) the next chunk while this
 * one waits for its turn and for queue room: two chunks at most are between the follower and the queues.
 */
function pipelined(pipeline: Pipeline): {
  deliver: (chunk: FollowerChunk, signal: AbortSignal) => Promise<void>;
  settled: () => Promise<void>;
  /** When the oldest line read but not acknowledged by every sink was read (queued or still on its way). */
  oldestUnackedAt: () => number | undefined;
} {
  // Chunks encoding or waiting to be queued, oldest first; the last one is what the next chunk waits for.
  const inFlight: Array<Promise<void>> = [];
  // When each of them was read, in the same order: not yet tracked by the acknowledgements.
  const readTimes: number[] = [];
  const last = () => inFlight.at(-1) ?? Promise.resolve();
  return {
    async deliver(chunk, signal) {
      const readAt = Date.now();
      const encoding = encodeChunk(chunk, pipeline);
      const before = last();
      readTimes.push(readAt);
      const queued = (async () => {
        try {
          const encoded = await encoding;
          await before; // a failure there (the shutdown) also keeps this chunk out of the queues
          await enqueue(encoded, signal, pipeline, readAt);
        } finally {
          readTimes.shift(); // chunks settle in order: this one is the oldest
        }
      })();
      queued.catch(() => undefined); // seen by a later deliver, or ignored after the follower stopped
      inFlight.push(queued);
      if (inFlight.length >= PIPELINE_DEPTH) await inFlight.shift();
      if (inFlight.length > 0 && textBytes(chunk) > pipeline.maxQueueBytes * READ_AHEAD_SHARE) await inFlight.shift();
    },
    // A chunk not queued by now is not acknowledged either, so its lines are read again after a restart.
    settled: () => last().catch(() => undefined),
    oldestUnackedAt: () => pipeline.acks.oldestReadAt ?? readTimes[0],
  };
}

/** The chunk's lines, by length: what they hold in memory, about. */
function textBytes(chunk: FollowerChunk): number {
  let n = 0;
  for (const l of chunk.lines) n += l.text.length;
  return n;
}

async function encodeChunk(chunk: FollowerChunk, { encoders, metrics, outputs }: Pipeline): Promise<EncodedChunk> {
  const { server, logType } = chunk;
  const now = Date.now();
  const segments = segmentsOf(chunk, encoders);
  const encoded = await Promise.all(segments.map((s) => encoders.encode(s)));
  countLines(metrics, server, logType, encoded);
  const entries = encoded.flatMap((e, k) => entriesOf(segments[k]!, e, outputs, now));
  let lastTime: number | undefined;
  for (const e of encoded) if (e.lastTimeMs !== undefined) lastTime = e.lastTimeMs;
  if (lastTime !== undefined) metrics.noteRecordTime(server, logType, lastTime);
  return { chunk, entries };
}

/** Into every sink's queue once all have room (backpressure), with the position the chunk commits. */
async function enqueue({ chunk, entries }: EncodedChunk, signal: AbortSignal, { acks, workers, metrics }: Pipeline, readAt: number): Promise<void> {
  metrics.offset.set({ server: chunk.server, log_type: chunk.logType }, chunk.position.offset);
  // The rest of a rolled file is its own backlog; the current file's is counted from its reads.
  if (chunk.rolledFile === undefined) metrics.noteRead(chunk.server, chunk.logType, { offset: chunk.position.offset, fileLength: chunk.fileLength, lines: chunk.lines.length, bytes: textBytes(chunk), atMs: Date.now() });
  let bytes = 0;
  for (const e of entries) bytes += entryFootprint(e);
  for (;;) {
    const full = workers.find((w) => !w.hasRoom(entries.length, bytes));
    if (!full) break;
    await full.waitForRoom(entries.length, bytes, signal);
  }
  signal.throwIfAborted();
  const ticket = acks.track(chunk.position, entries.length * workers.length, readAt);
  for (const w of workers) w.enqueue(entries, ticket, chunk.caughtUp === true);
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

/**
 * For a list of log types: follows those the server lists, and names the ones it does not (with the ones it has)
 * instead of asking for a missing log on every poll. When the list cannot be read, every configured type is
 * followed: their own reads then say what is wrong.
 */
async function followListed(source: LogSource, wanted: readonly string[], logger: Logger, follow: (source: LogSource, logType: string) => void): Promise<void> {
  let listed: string[] | undefined;
  try {
    listed = [...new Set(await source.listLogTypes())];
  } catch (err) {
    logger.debug({ server: source.server, error: (err as Error).message }, 'cannot list log types: following the configured ones');
  }
  for (const t of wanted) {
    if (!listed || listed.includes(t)) follow(source, t);
    else logger.warn({ server: source.server, log_type: t, listed }, `the server has no log type "${t}": skipped (it lists ${listed.join(', ') || 'none'})`);
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

/** Servers key the positions: two of one name would overwrite each other's. */
function uniqueServers(sources: readonly LogSource[]): void {
  const names = new Set<string>();
  for (const s of sources) {
    if (names.has(s.server)) throw new Error(`two servers are named "${s.server}": log positions need unique server names`);
    names.add(s.server);
  }
}

/** The encoder threads, writing only the outputs the sinks send. */
function encodersFor(config: LogsConfig, sinks: readonly LogSink[], logger: Logger, workerUrl: URL | undefined) {
  // Loki sinks send Loki lines, every other sink documents: the encoders write only what is sent.
  const outputs = { documents: sinks.some((sink) => sink.quotesRecords !== true), lokiLines: sinks.some((sink) => sink.quotesRecords === true) };
  const encoders = new EncoderPool({
    settings: { timeZone: config.time_zone, redactSecrets: config.redact_secrets, filters: config.filters, ...outputs },
    threads: config.parse_threads,
    logger,
    ...(workerUrl ? { workerUrl } : {}),
  });
  return { encoders, outputs };
}

/** One worker per sink: its queue, batches, retries and dead letters; each acknowledged batch saves the positions. */
function sinkWorkers(config: LogsConfig, sinks: readonly LogSink[], savePositions: () => Promise<void>, deadLetter: DeadLetterFile, metrics: LogMetrics, logger: Logger): SinkWorker[] {
  return sinks.map(
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
        capacityBytes: config.max_queue_bytes,
        // Positions are written once a batch is acknowledged and before the next is sent, so a crash re-sends
        // at most the batch in flight; the periodic sync only retries writes that failed.
        afterAck: savePositions,
        deadLetter,
        metrics,
        logger: logger.child({ sink: sink.name }),
      }),
  );

}

/** Saves the positions; a failure is said once, and its end once. */
function positionSaver(positions: PositionStore, logger: Logger): () => Promise<void> {
  let saveFailing = false;
  return () =>
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
}

/** The positions file, read at start; when it cannot be, the sinks already opened are closed. */
async function openPositions(config: LogsConfig, sinks: readonly LogSink[], metrics: LogMetrics, logger: Logger): Promise<PositionStore> {
  try {
    return await PositionStore.open(config.positions_file, logger, { onUnusable: (fallback) => metrics.positionsUnusable.inc({ fallback }) });
  } catch (err) {
    await Promise.allSettled(sinks.map((s) => s.close()));
    throw err;
  }
}
