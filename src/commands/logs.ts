import type { CommandModule } from 'yargs';
import { ConfigError } from '../config/errors.js';
import { loadConfig } from '../config/load.js';
import { createLogger } from '../base/logger.js';
import { tailLog } from '../logs/tail.js';
import { guardLogType, unknownLogTypeMessage } from '../logs/source/unknown-log-type.js';
import { parseServerFilterFlags, resolveLogType } from '../wowza/log-vocabulary.js';
import { WowzaClient } from '../wowza/client.js';
import { WowzaLogSource } from '../logs/source/rest-source.js';
import { registerConfiguredSecrets } from './configured-secrets.js';
import { configFlagsFrom, withWowzaFlags } from './flags.js';

const tail: CommandModule = {
  command: 'tail',
  describe: 'print a server log, optionally following it across rotations',
  builder: (y) =>
    withWowzaFlags(y)
      .option('log-type', { type: 'string', demandOption: true, describe: 'log type: access, error, stats or a full name from {S}/logs' })
      .option('follow', { alias: 'f', type: 'boolean', default: false, describe: 'keep printing new lines (Ctrl-C to stop)' })
      .option('start-at', { type: 'string', choices: ['end', 'beginning'], default: 'end', describe: 'end: the last --lines lines first; beginning: the whole current file' })
      .option('lines', { alias: 'n', type: 'number', default: 10, describe: 'with --start-at end, how many lines before the end to show first' })
      .option('filter', { type: 'string', describe: 'server-side filters, comma-separated: noDebug,noInfo,noWarn,noError,noHeader,noColumnHeadings' })
      .option('search', { type: 'string', describe: 'only lines containing this text (server-side)' })
      .option('regex-search', { type: 'string', describe: 'only lines matching this regular expression (server-side)' })
      .option('format', { type: 'string', choices: ['json', 'raw'], default: 'json', describe: 'json: one parsed record per line; raw: lines exactly as the server holds them (control characters escaped on a terminal)' })
      .usage('Usage: $0 logs tail --log-type <type> [options]\n\nPrint a server log, optionally following it across rotations. A type the server does not have is named with the ones it has.')
      .example('WOWZA_PASSWORD=secret $0 logs tail --wowza.url http://wowza:8087 --wowza.username admin --log-type access -f', 'follow the access log as JSON records')
      .example('$0 logs tail --config /etc/wowza-exporter/config.yaml --log-type error -n 50 --format raw', 'the last 50 lines of the error log, as the server holds them'),
  handler: async (argv) => {
    const warn = createLogger({ level: 'warn' });
    const runtime = loadConfig(configFlagsFrom(argv), process.env, (m, meta) => warn.warn(meta, m));
    registerConfiguredSecrets(runtime);
    if (runtime.servers.length !== 1) throw new ConfigError(`logs tail reads one server; ${runtime.servers.length} are configured (pass one --wowza.url)`);
    let flags;
    try {
      flags = argv.filter ? parseServerFilterFlags(String(argv.filter)) : [];
    } catch (err) {
      throw new ConfigError(`--filter: ${(err as Error).message}`);
    }
    const lines = Number(argv.lines);
    if (!Number.isInteger(lines) || lines < 0) throw new ConfigError('--lines must be a whole number of 0 or more');
    const client = new WowzaClient(runtime.servers[0]!);
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    // A reader that goes away (`| head`) ends the tail quietly; tailLog sees the failed write itself. This listener
    // outlives it: an 'error' emitted after it returns must not become an uncaught exception either.
    process.stdout.on('error', () => undefined);
    const asked = String(argv['log-type']);
    // A type the server does not have ends the tail, with or without --follow, naming the types it has.
    let unknown: ConfigError | undefined;
    const source = guardLogType(new WowzaLogSource(client), (types) => {
      unknown = new ConfigError(`--log-type ${asked}: ${unknownLogTypeMessage(resolveLogType(asked), types)}`);
      stop.abort();
    });
    try {
      await tailLog({
        source,
        logType: resolveLogType(asked),
        follow: argv.follow === true,
        startAt: argv['start-at'] as 'end' | 'beginning',
        lines,
        serverFilter: {
          flags,
          ...(argv.search ? { search: String(argv.search) } : {}),
          ...(argv['regex-search'] ? { regexSearch: String(argv['regex-search']) } : {}),
        },
        format: argv.format as 'json' | 'raw',
        out: process.stdout,
        // Raw lines stay byte-exact for pipes and files; on a terminal their control characters are escaped.
        terminal: process.stdout.isTTY === true,
        signal: stop.signal,
        timeZone: runtime.config.logs?.time_zone,
        redactSecrets: runtime.config.logs?.redact_secrets ?? true,
        logger: warn,
      });
    } catch (err) {
      throw unknown ?? err;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await client.close();
    }
    if (unknown) throw unknown;
  },
};

export const logsCommand: CommandModule = {
  command: 'logs <command>',
  describe: 'read server logs (log shipping itself runs in serve, configured in the logs: section)',
  builder: (y) =>
    y
      .command(tail)
      .demandCommand(1)
      .usage('Usage: $0 logs <command> [options]\n\nRead server logs (log shipping itself runs in serve, configured in the logs: section).')
      .example('$0 logs tail --log-type access -f', 'follow the access log of http://127.0.0.1:8087'),
  handler: () => {},
};
