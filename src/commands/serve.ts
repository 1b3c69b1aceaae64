import type { CommandModule } from 'yargs';
import { loadConfig } from '../config/load.js';
import { ConfigError } from '../config/errors.js';
import { startExporter, type ReloadOutcome } from '../exporter/exporter.js';
import { createLogger } from '../base/logger.js';
import { reportConfigCheck } from './config-check.js';
import { registerConfiguredSecrets } from './configured-secrets.js';
import { configFlagsFrom, withServeFlags } from './flags.js';
import { onShutdown, SHUTDOWN_MARGIN_MS } from './lifecycle.js';

/** yargs' own view of the commands named so far on the command line (not in its public typings). */
interface YargsContext {
  getInternalMethods(): { getContext(): { commands: string[] } };
}

export const serveCommand: CommandModule = {
  command: ['serve', '$0'],
  describe: 'run the exporter: poll Wowza and serve /metrics and /probe (default command); SIGHUP reloads the configuration',
  builder: (y) => {
    const out = withServeFlags(y).option('config.check', {
      type: 'boolean',
      describe: 'check the config file and flags (every key, every file they name), print each problem, and exit: 0 valid, 1 invalid; starts nothing, asks no server',
      group: 'General:',
    });
    // Run as the default command (a bare --help), yargs keeps the top-level usage line: a second one would repeat it.
    const named = (y as unknown as YargsContext).getInternalMethods().getContext().commands.includes('serve');
    if (named) out.usage('Usage: $0 serve [options]\n\nRun the exporter: poll Wowza and serve /metrics and /probe (also without a command); SIGHUP reloads the configuration.');
    return out
      .example('$0 --wowza.url http://wowza:8087 --wowza.username admin --wowza.password-file /etc/wowza-exporter/password', 'poll one server, metrics on :9935/metrics')
      .example('$0 --config /etc/wowza-exporter/config.yaml', 'everything from a config file (flags override it)')
      .example('$0 --config.check --config /etc/wowza-exporter/config.yaml', 'list every problem of the config, then exit 0 (valid) or 1');
  },
  handler: async (argv) => {
    const flags = configFlagsFrom(argv);
    if (argv['config.check'] === true) {
      process.exitCode = await reportConfigCheck(flags);
      return;
    }
    const boot = createLogger({ level: (flags.logLevel as 'info') ?? 'info', format: (flags.logFormat as 'json') ?? 'json' });
    const runtime = loadConfig(flags, process.env, (msg, meta) => boot.warn(meta, msg));
    registerConfiguredSecrets(runtime);
    const logger = createLogger({ level: runtime.config.log.level, format: runtime.config.log.format });
    // Reloads run one at a time: a SIGHUP during a POST /-/reload waits for it.
    let reloading: Promise<ReloadOutcome> = Promise.resolve({ ok: true });
    const reloadConfig = (): Promise<ReloadOutcome> =>
      (reloading = reloading.then(async () => {
        try {
          // The same flags and files as at start: the config file and every secret file are read again.
          const next = loadConfig(flags, process.env, (msg, meta) => logger.warn(meta, msg));
          registerConfiguredSecrets(next);
          await exporter.reload(next);
          exporter.self.reloadSuccessful.set(1);
          exporter.self.reloadSuccessTime.set(Date.now() / 1000);
          logger.info('configuration reloaded');
          return { ok: true } as const;
        } catch (err) {
          exporter.self.reloadSuccessful.set(0);
          const message = err instanceof ConfigError ? err.message : `${(err as Error).message}`;
          logger.error({ err: message }, 'configuration reload refused: the previous configuration stays in use');
          return { ok: false, message } as const;
        }
      }));
    const exporter = await startExporter(runtime, logger, { reloadConfig });
    process.on('SIGHUP', () => void reloadConfig());
    onShutdown(
      logger,
      async () => {
        await exporter.close();
      },
      (runtime.config.logs?.drain_timeout ?? 0) + SHUTDOWN_MARGIN_MS,
    );
  },
};
