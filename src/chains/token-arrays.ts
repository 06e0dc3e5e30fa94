import type { TokenId } from '../digest/token-digest.js';

/**
 * Value equality of token id sequences (Python list equality on ints). Ids are `number` within
 * the safe-integer range and `bigint` beyond it, but a mixed pair is still compared by value.
 */
export function tokenIdsEqual(a: TokenId, b: TokenId): boolean {
  // eslint-disable-next-line eqeqeq
  return a === b || (typeof a !== typeof b && a == b);
}

export function tokenArraysEqual(a: readonly TokenId[], b: readonly TokenId[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (!tokenIdsEqual(a[i], b[i])) return false;
  }
  return true;
}

/** True iff `whole[offset : offset + part.length]` equals `part` (requires it to be in range). */
export function tokensMatchAt(whole: readonly TokenId[], offset: number, part: readonly TokenId[]): boolean {
  if (offset + part.length > whole.length) return false;
  for (let i = 0; i < part.length; i++) {
    if (!tokenIdsEqual(whole[offset + i], part[i])) return false;
  }
  return true;
}

/**
 * Concatenation without spreading (safe for sequences of any length). Not `Array.prototype.concat`:
 * apache-arrow (loaded by the Parquet export) sets `Symbol.isConcatSpreadable` on its classes,
 * which sends every `concat` in the process down V8's generic path (~1,000x slower on a
 * 6,000-token prompt, and the result an array that is slow to read); `slice` and `push` are not
 * affected.
 */
export function concatTokens(...parts: readonly (readonly TokenId[])[]): TokenId[] {
  const [first, ...rest] = parts;
  const out = first === undefined ? [] : first.slice();
  for (const part of rest) appendTokens(out, part);
  return out;
}

/** Appends `tail` to `target` in place, without spreading it into arguments. */
export function appendTokens(target: TokenId[], tail: readonly TokenId[], from = 0): void {
  for (let i = from; i < tail.length; i++) target.push(tail[i]);
}
