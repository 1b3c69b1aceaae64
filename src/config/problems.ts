import { ConfigError } from './errors.js';

/**
 * The configuration problems found in one pass, each a line naming its key. Loading goes on past a problem, so that a
 * config with several missing files is fixed in one round (`--config.check`) instead of one run per file.
 */
export class ConfigProblems {
  readonly lines: string[] = [];

  add(line: string): void {
    this.lines.push(line);
  }

  /** Runs `check`; a ConfigError it throws becomes a problem (and `undefined`), any other error is a bug and propagates. */
  attempt<T>(check: () => T): T | undefined {
    try {
      return check();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.lines.push(err.message);
      return undefined;
    }
  }

  /** One problem: its own message, as before; several: every one, so the operator sees them all at once. */
  throwIfAny(): void {
    if (this.lines.length === 1) throw new ConfigError(this.lines[0]!);
    if (this.lines.length > 1) throw new ConfigError(`${this.lines.length} configuration problems:\n  ${this.lines.join('\n  ')}`);
  }
}
