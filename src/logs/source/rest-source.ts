import type { LogFileInfo, LogPage, LogQuery, LogSource } from './source.js';
import type { WowzaClient } from '../../wowza/client.js';
import type { LogPageBody } from '../../wowza/schemas.js';

function toPage(b: LogPageBody): LogPage {
  const str = (v: string | number | null | undefined) => (v === null || v === undefined || v === '' ? undefined : String(v));
  return {
    lines: b.logLines,
    startOffset: b.startOffset,
    endOffset: b.endOffset,
    fileLength: b.fileLength,
    logFields: str(b.logFields),
    logStartDate: str(b.logStartDate),
    logVersion: str(b.logVersion),
    logSoftware: str(b.logSoftware),
  };
}

/** Runs one request to the server: within its request budget in `serve`, at once elsewhere (`logs tail`). */
export type RequestGate = <T>(fn: () => Promise<T>) => Promise<T>;

const AT_ONCE: RequestGate = (fn) => fn();

/** The log endpoints of a real server, as the log follower sees them; every request passes `gate`. */
export class WowzaLogSource implements LogSource {
  constructor(
    private readonly client: WowzaClient,
    private readonly gate: RequestGate = AT_ONCE,
  ) {}

  get server(): string {
    return this.client.name;
  }

  get timeZone(): string | undefined {
    return this.client.target.logTimeZone;
  }

  listLogTypes(): Promise<string[]> {
    return this.gate(() => this.client.logTypes());
  }

  async readLog(logType: string, q: LogQuery, signal?: AbortSignal): Promise<LogPage> {
    return toPage(await this.gate(() => this.client.logPage(logType, q, signal)));
  }

  async listLogFiles(order: 'newestFirst' | 'oldestFirst', signal?: AbortSignal): Promise<LogFileInfo[]> {
    const list = await this.gate(() => this.client.logFiles(order, signal));
    return list.serverLogFiles.map((f) => ({ id: f.id, fileSize: f.fileSize ?? 0, startDateMS: f.startDateMS ?? 0 }));
  }

  async readLogFile(name: string, q: LogQuery, signal?: AbortSignal): Promise<LogPage> {
    return toPage(await this.gate(() => this.client.logFile(name, q, signal)));
  }
}
