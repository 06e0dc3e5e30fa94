/**
 * Shards of a store (docs/cli.md#shards): rollout `id` belongs to shard
 * `u64 % N`, where `u64` is the first 8 bytes, big-endian, of SHA-256 of the id's UTF-8 bytes.
 * Computed with BigInt so the remainder is exact for every N (a double loses bits past 2^53):
 * the same shard on every machine, Node version and tokcap version.
 */
import { createHash } from 'node:crypto';
import { TokcapError } from '../errors.js';

/** Shard `index` of `count` (0 ≤ index < count). */
export interface Shard {
  index: number;
  count: number;
}

/** The largest N accepted: part files are named with five digits (`part-00003-of-00016`). */
export const MAX_SHARDS = 99_999;

export function assertValidShard(shard: Shard): void {
  const { index, count } = shard;
  if (!Number.isSafeInteger(count) || count < 1 || count > MAX_SHARDS) {
    throw new TokcapError('usage', `shard count must be an integer from 1 to ${MAX_SHARDS}, got ${count}`);
  }
  if (!Number.isSafeInteger(index) || index < 0 || index >= count) {
    throw new TokcapError('usage', `shard index must satisfy 0 <= K < N (N = ${count}), got ${index}`);
  }
}

/** The shard (0 ≤ result < count) of a rollout id, or of any other name (e.g. an invalid name). */
export function shardOf(id: string, count: number): number {
  if (count === 1) return 0;
  const digest = createHash('sha256').update(id, 'utf8').digest();
  return Number(digest.readBigUInt64BE(0) % BigInt(count));
}

export function inShard(id: string, shard: Shard | undefined): boolean {
  return shard === undefined || shardOf(id, shard.count) === shard.index;
}

/** The ids of `ids` in the shard, order kept. */
export function filterShard<T extends string>(ids: readonly T[], shard: Shard | undefined): T[] {
  return shard === undefined || shard.count === 1 ? [...ids] : ids.filter((id) => inShard(id, shard));
}

/** `part-00003-of-00016` (no extension): the name of shard K of N's part of a dataset. */
export function partName(shard: Shard | undefined): string {
  const { index, count } = shard ?? { index: 0, count: 1 };
  return `part-${String(index).padStart(5, '0')}-of-${String(count).padStart(5, '0')}`;
}
