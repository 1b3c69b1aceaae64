import { createHash } from 'node:crypto';

/**
 * Which replica polls a server: the server name hashed as Prometheus' `hashmod` relabel action does (MD5 of
 * the value, its last 8 bytes as a big-endian unsigned integer, modulo N), so that `/probe` jobs can be split
 * across the same replicas with `action: hashmod` and N replicas cover every server exactly once.
 */

export interface Shard {
  index: number;
  count: number;
}

export function hashmod(value: string, modulus: number): number {
  const sum = createHash('md5').update(value).digest();
  return Number(sum.readBigUInt64BE(8) % BigInt(modulus));
}

/** Whether this replica (`shard`, or every server without one) takes the server named `name`. */
export function inShard(name: string, shard: Shard | undefined): boolean {
  return shard === undefined || hashmod(name, shard.count) === shard.index;
}

/** `--shard i/N`. */
export function parseShard(text: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (!m) throw new Error(`"${text}" is not i/N (e.g. 0/2: the first of two replicas)`);
  const shard = { index: Number(m[1]), count: Number(m[2]) };
  if (shard.count < 1 || shard.index >= shard.count) throw new Error(`"${text}": the index must be below the count (0/${shard.count} to ${Math.max(0, shard.count - 1)}/${shard.count})`);
  return shard;
}
