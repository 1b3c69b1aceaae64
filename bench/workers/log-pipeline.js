import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { silentLogger } from '../../dist/base/logger.js';
import { LogsConfigSchema } from '../../dist/config/logs.js';
import { entriesOf, LineEncoder } from '../../dist/logs/transform/line-encoding.js';
import { startLogShipping } from '../../dist/logs/pipeline.js';
import { redactSecrets } from '../../dist/base/redact.js';
import { encodeLokiPush, LokiSink } from '../../dist/logs/sinks/loki.js';
import { StdoutSink } from '../../dist/logs/sinks/stdout.js';
import { encodeNdjson } from '../../dist/logs/sinks/ndjson.js';
import { W3cLogParser } from '../../dist/logs/transform/w3c-parser.js';
import { GeneratedLogSource, generateAccessLog } from '../lib/generated-log-source.js';
import { serveRpc } from '../lib/rpc-worker.js';

/**
 * Log pipeline throughput in one process: parse only, and the whole shipping pipeline (follower -> parse
 * -> metrics, filter, redaction -> queue -> batches -> sink -> acknowledgement -> positions) into an
 * NDJSON sink writing to nowhere, or into a Loki sink pushing to a loopback receiver.
 */

let log;

const cpuMs = (u) => (u.user + u.system) / 1000;

function parseOnly() {
  const parser = new W3cLogParser();
  const cpu = process.cpuUsage();
  const started = performance.now();
  let records = 0;
  for (const line of log.lines) if (parser.parseLine(line).kind === 'record') records++;
  return { lines: records, ms: performance.now() - started, cpuMs: cpuMs(process.cpuUsage(cpu)) };
}

/**
 * What each step costs per line on one thread, cumulatively, in batches of 1,000 lines as the shipper
 * works (so nothing is kept longer than a batch): where the time goes, and the ceiling of one thread.
 */
function stageCosts() {
  const lines = log.lines.filter((l) => !l.startsWith('#'));
  const header = log.lines.find((l) => l.startsWith('#Fields'));
  const fields = header.replace(/^#Fields:\s*/, '');
  const batches = [];
  for (let i = 0; i < lines.length; i += 1000) batches.push(lines.slice(i, i + 1000));
  const parser = new W3cLogParser({ fields });
  const encoder = new LineEncoder({ timeZone: 'UTC', redactSecrets: true, filters: {}, documents: true, lokiLines: false });
  const lokiEncoder = new LineEncoder({ timeZone: 'UTC', redactSecrets: true, filters: {}, documents: false, lokiLines: true });
  const segment = (batch) => ({ server: 'bench', logType: 'access', fields, lines: batch });
  const entries = (batch, enc, settings) => {
    const seg = segment(batch);
    return entriesOf(seg, enc.encode(seg), settings, 0);
  };
  const steps = [
    ['parse', (batch) => batch.map((l) => parser.parseLine(l).record)],
    ['+ redact secrets (before parsing)', (batch) => batch.map((l) => parser.parseLine(redactSecrets(l)).record)],
    ['+ counters, filters, documents in UTF-8 (the encoder)', (batch) => encoder.encode(segment(batch))],
    ['+ entries, NDJSON batch', (batch) => encodeNdjson(entries(batch, encoder, { documents: true, lokiLines: false }))],
    ['(Loki) encoder writing Loki lines instead', (batch) => lokiEncoder.encode(segment(batch))],
    ['(Loki) + entries, Loki push body', (batch) => encodeLokiPush(entries(batch, lokiEncoder, { documents: false, lokiLines: true }))],
  ];
  return steps.map(([step, fn]) => {
    for (const b of batches) fn(b); // warm-up
    let best = Infinity;
    for (let round = 0; round < 3; round++) {
      const started = performance.now();
      for (const b of batches) fn(b);
      best = Math.min(best, performance.now() - started);
    }
    return { step, usPerLine: (best * 1000) / lines.length };
  });
}

/** Resolves once `total` lines were acknowledged by the sink. */
function counting(sink, total) {
  let delivered = 0;
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  return {
    finished,
    sink: {
      name: sink.name,
      quotesRecords: sink.quotesRecords,
      ...(sink.encode ? { encode: (entries) => sink.encode(entries) } : {}),
      async send(entries, signal, encoded) {
        await sink.send(entries, signal, encoded);
        delivered += entries.length;
        if (delivered >= total) done();
      },
      close: () => sink.close(),
    },
  };
}

async function ship(sink, overrides = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'wowza-bench-logs-'));
  try {
    const total = log.lines.filter((l) => !l.startsWith('#')).length;
    const config = LogsConfigSchema.parse({
      positions_file: join(dir, 'positions.json'),
      dead_letter_file: join(dir, 'dead-letter.ndjson'),
      log_types: [log.logType],
      start_at: 'beginning',
      // Batches stay at their default size; a short max_wait only keeps the last, partial batch from
      // waiting a second for lines that will never come, which would count as pipeline time.
      batch: { max_wait: '20ms' },
      ...overrides,
    });
    const { sink: wrapped, finished } = counting(sink, total);
    const cpu = process.cpuUsage();
    const started = performance.now();
    const shipping = await startLogShipping({ sources: [new GeneratedLogSource(log)], config, registry: new Registry(), logger: silentLogger(), sinks: [wrapped] });
    await finished;
    const ms = performance.now() - started;
    const used = cpuMs(process.cpuUsage(cpu));
    await shipping.stop();
    return { lines: total, ms, cpuMs: used };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const nowhere = () =>
  new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });

serveRpc({
  generate({ lines }) {
    log = generateAccessLog(lines);
    return { lines, bytes: log.lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0) };
  },

  stages: stageCosts,

  run({ variant, lokiUrl }) {
    if (variant === 'parse') return parseOnly();
    if (variant === 'ndjson') return ship(new StdoutSink('null', nowhere()));
    if (variant === 'ndjson-one-thread') return ship(new StdoutSink('null', nowhere()), { parse_threads: 0 });
    if (variant === 'loki') return ship(new LokiSink({ name: 'loki', url: lokiUrl, timeoutMs: 10_000 }));
    throw new Error(`unknown variant ${variant}`);
  },
});
