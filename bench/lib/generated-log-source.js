import { LogGenerator } from '@wowza-exporter/simulator';
import { ACCESS_FIELDS, formatRecord, headerLines, makeHeader } from '@wowza-exporter/simulator';

const LOG_TYPE = 'wowzastreamingengine_access';

/**
 * `count` access-log lines as the simulator writes them (same generator: realistic events, long and
 * multi-byte comments), after the file's header lines, one second apart in time.
 */
export function generateAccessLog(count, seed = 7) {
  const streams = Array.from({ length: 50 }, (_, i) => ({ vhost: '_defaultVHost_', app: `app${(i % 5) + 1}`, stream: `stream${i + 1}` }));
  const generator = new LogGenerator(seed, () => streams);
  const start = Date.UTC(2025, 0, 14, 0, 0, 0);
  const header = makeHeader(start, 'Wowza Streaming Engine 4.9.4 build20250114124522', ACCESS_FIELDS);
  const lines = headerLines(header);
  for (let i = 0; i < count; i++) lines.push(formatRecord(ACCESS_FIELDS, generator.next(LOG_TYPE), start + i * 1000));
  return { lines, startDate: header.startDate, logType: LOG_TYPE };
}

/**
 * A LogSource over a fixed in-memory file: byte-offset paging like `GET {S}/logs/{logType}`, no HTTP,
 * so the log pipeline's own cost is what gets measured.
 */
export class GeneratedLogSource {
  constructor(log, server = 'bench') {
    this.server = server;
    this.log = log;
    this.offsets = new Float64Array(log.lines.length + 1);
    for (let i = 0; i < log.lines.length; i++) this.offsets[i + 1] = this.offsets[i] + Buffer.byteLength(log.lines[i]) + 1;
    this.fileLength = this.offsets[log.lines.length];
  }

  async listLogTypes() {
    return [this.log.logType];
  }

  async readLog(logType, q) {
    if (logType !== this.log.logType) throw new Error(`unknown log type ${logType}`);
    const count = q.lineCount ?? 100;
    let first = this.indexAt(q.startOffset ?? 0);
    if (count < 0) first = Math.max(0, first + count);
    const last = Math.min(this.log.lines.length, first + Math.abs(count));
    return {
      lines: this.log.lines.slice(first, last),
      startOffset: this.offsets[first],
      endOffset: this.offsets[last],
      fileLength: this.fileLength,
      logStartDate: this.log.startDate,
    };
  }

  async listLogFiles() {
    return [];
  }

  async readLogFile(name) {
    throw new Error(`no rolled file ${name}`);
  }

  /** Index of the first line starting at or after `offset`. */
  indexAt(offset) {
    let lo = 0;
    let hi = this.log.lines.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.offsets[mid] < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
