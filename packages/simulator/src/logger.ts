/**
 * What the simulator logs through: pino's shape (an object of fields, then the message; `child` adds fields), so
 * the product's pino logger can be passed in as it is, and a test passes nothing.
 */
export interface Logger {
  debug(fields: object, msg?: string): void;
  info(fields: object, msg?: string): void;
  warn(fields: object, msg?: string): void;
  error(fields: object, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

const ignore = () => {};

/** A logger that writes nothing: the default when the caller gives none. */
export function silentLogger(): Logger {
  const logger: Logger = { debug: ignore, info: ignore, warn: ignore, error: ignore, child: () => logger };
  return logger;
}
