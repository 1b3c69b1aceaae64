import type { LogFileInfo, LogPage, LogQuery, LogSource } from './source.js';
import { LOG_TYPE_ALIASES } from '../../wowza/log-vocabulary.js';

/** `wowzastreamingengine_access (access)`: a server's type with the short name the CLI also takes. */
function withAlias(type: string): string {
  const alias = Object.entries(LOG_TYPE_ALIASES).find(([, full]) => full === type)?.[0];
  return alias ? `${type} (${alias})` : type;
}

/** The sentence for a log type the server does not have, listing the ones it has. */
export function unknownLogTypeMessage(asked: string, types: readonly string[]): string {
  const has = types.length > 0 ? `its log types: ${types.map(withAlias).join(', ')}` : 'it lists no log types';
  return `the server has no log type "${asked}"; ${has}`;
}

/**
 * `source`, except that a read answered 404 for a log type the server's list (`{S}/logs`) lacks calls `onUnknown`
 * with the types it has: a follower would otherwise retry a name that can never work, and a 404 alone does not say
 * which names would. The list is asked only then, so a working tail costs no extra request.
 */
export function guardLogType(source: LogSource, onUnknown: (types: string[]) => void): LogSource {
  return {
    get server() {
      return source.server;
    },
    get timeZone() {
      return source.timeZone;
    },
    listLogTypes: () => source.listLogTypes(),
    listLogFiles: (order: 'newestFirst' | 'oldestFirst', signal?: AbortSignal): Promise<LogFileInfo[]> => source.listLogFiles(order, signal),
    readLogFile: (name: string, q: LogQuery, signal?: AbortSignal): Promise<LogPage> => source.readLogFile(name, q, signal),
    readLog: async (logType: string, q: LogQuery, signal?: AbortSignal): Promise<LogPage> => {
      try {
        return await source.readLog(logType, q, signal);
      } catch (err) {
        if ((err as { status?: unknown }).status === 404) {
          // A list that cannot be read says nothing: the 404 stands as it is.
          const types = await source.listLogTypes().catch(() => undefined);
          if (types && !types.includes(logType)) onUnknown(types);
        }
        throw err;
      }
    },
  };
}
