import { createServer } from 'node:net';

/** A free loopback port (bind 0, read it, release it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Polls `fn` until it returns something (not undefined or false). The ceiling is for a real hang only: on a busy CI
 * machine (npm run test:busy) what takes a second on a quiet one can take twenty.
 */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 45_000, everyMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}
