import type { CommandModule } from 'yargs';
import { loadConfig } from '../config/load.js';
import { startExporter } from '../exporter.js';
import { createLogger } from '../logger.js';
import { configFlagsFrom, withServeFlags } from './flags.js';
import { onShutdown, SHUTDOWN_MARGIN_MS } from './lifecycle.js';

export const serveCommand: CommandModule = {
  command: ['serve', '$0'],
  describe: 'run the exporter: poll Wowza and serve /metrics and /probe (default command)',
  builder: (y) => withServeFlags(y),
  handler: async (argv) => {
    const flags = configFlagsFrom(argv);
    const boot = createLogger({ level: (flags.logLevel as 'info') ?? 'info', format: (flags.logFormat as 'json') ?? 'json' });
    const runtime = loadConfig(flags, process.env, (msg, meta) => boot.warn(meta, msg));
    const logger = createLogger({ level: runtime.config.log.level, format: runtime.config.log.format });
    const exporter = await startExporter(runtime, logger);
    onShutdown(
      logger,
      async () => {
        await exporter.close();
      },
      (runtime.config.logs?.drain_timeout ?? 0) + SHUTDOWN_MARGIN_MS,
    );
  },
};
