import { expect } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';

/** The message of the ConfigError `fn` throws; fails the test when it throws something else or nothing. */
export function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}
