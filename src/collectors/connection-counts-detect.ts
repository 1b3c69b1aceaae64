import { WowzaClient, type WowzaTarget } from '../wowza/client.js';

/** How long the one request that looks for a server's connectioncounts provider may take. */
const PROBE_TIMEOUT_MS = 3000;

/**
 * Where a server's connectioncounts provider answers by default: the admin port, 8086, of the REST API's host and
 * scheme (docs/wowza-api-notes.md, "connectioncounts: names are URL-encoded"), with the same credentials.
 */
export function defaultConnectionCountsUrl(restUrl: string): string {
  const u = new URL(restUrl);
  return `${u.protocol}//${u.hostname.includes(':') ? `[${u.hostname.replace(/^\[|\]$/g, '')}]` : u.hostname}:8086/connectioncounts`;
}

/**
 * Asks the default provider of `target` once: its URL when it answers with the connectioncounts document, else
 * undefined (refused, unreachable, another document, wrong credentials: the REST path alone is used then).
 */
export async function detectConnectionCounts(target: WowzaTarget): Promise<string | undefined> {
  const url = defaultConnectionCountsUrl(target.url);
  const client = new WowzaClient({ ...target, connectionCountsUrl: url, timeoutMs: Math.min(PROBE_TIMEOUT_MS, target.timeoutMs), connections: 1 });
  try {
    await client.connectionCounts(AbortSignal.timeout(PROBE_TIMEOUT_MS));
    return url;
  } catch {
    return undefined;
  } finally {
    await client.close().catch(() => undefined);
  }
}
