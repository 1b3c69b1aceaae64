import type { Logger } from '../base/logger.js';

/** Time for a graceful stop beyond what the sinks may take to drain, before the process exits anyway. */
export const SHUTDOWN_MARGIN_MS = 10_000;

/**
 * SIGTERM/SIGINT run `stop` (stop polling, flush sinks, save positions, close the server) and exit 0;
 * a second signal, or a stop that takes too long, exits at once.
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>, deadlineMs = SHUTDOWN_MARGIN_MS): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error({ deadlineMs }, 'graceful shutdown took too long: exiting');
      process.exit(1);
    }, deadlineMs);
    timer.unref();
    stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err: (err as Error).message }, 'error while shutting down');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}
