import { isLogType } from '../logs/log-format.js';
import { parseLogQuery, readLogPage } from '../logs/log-query.js';
import type { LogFile } from '../logs/log-file.js';
import type { LogStore } from '../logs/log-store.js';
import { resource, wowzaError, type Reply } from '../reply.js';
import type { RequestContext, Router } from '../router.js';
import { SERVER_NAME } from '../topology.js';
import { enveloped } from './envelope.js';
import { forServer, S } from './paths.js';

/** `{S}/logs`, `{S}/logs/{logType}`, `{S}/logfiles`, `{S}/logfiles/{logName}`. */
export function registerLogRoutes(router: Router, store: LogStore): void {
  const page = (ctx: RequestContext, file: LogFile, dates: boolean): Reply => {
    const parsed = parseLogQuery(ctx.query, { dates });
    if (!parsed.ok) return wowzaError(400, parsed.message);
    return resource('ServerLog', enveloped(readLogPage(file, parsed.query, parsed.matcher)));
  };

  router.add('GET', `${S}/logs`, forServer(() => resource('ServerLogTypes', enveloped({ serverLogType: store.types() }))));

  router.add(
    'GET',
    `${S}/logs/{logType}`,
    forServer((ctx) => {
      const type = ctx.params.logType!;
      if (!isLogType(type)) return wowzaError(404, `Log type (${type}) not found.`);
      return page(ctx, store.currentFile(type), true);
    }),
  );

  router.add(
    'GET',
    `${S}/logfiles`,
    forServer((ctx) => {
      const order = ctx.query.get('order') ?? 'newestFirst';
      if (order !== 'newestFirst' && order !== 'oldestFirst') return wowzaError(400, `order must be newestFirst or oldestFirst, got "${order}"`);
      // Oldest first: by start, a rolled file before a current one that started at the same time, then by name.
      const files = store
        .files()
        .sort((a, b) => a.startDateMS - b.startDateMS || Number(a.current) - Number(b.current) || a.name.localeCompare(b.name));
      if (order === 'newestFirst') files.reverse();
      return resource('ServerLogFiles', enveloped({
        serverLogFiles: files.map((f) => ({
          id: f.name,
          href: `/v2/servers/${SERVER_NAME}/logfiles/${encodeURIComponent(f.name)}`,
          fileSize: f.size,
          startDateMS: f.startDateMS,
        })),
      }));
    }),
  );

  router.add(
    'GET',
    `${S}/logfiles/{logName}`,
    forServer((ctx) => {
      const file = store.file(ctx.params.logName!);
      if (!file) return wowzaError(404, `Log file (${ctx.params.logName}) not found.`);
      return page(ctx, file, false);
    }),
  );
}
