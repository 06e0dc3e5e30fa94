import { createHash, type Hash } from 'node:crypto';
import type { TokenId } from '../digest/token-digest.js';
import type { CumulativeSequence } from './cumulative-sequence.js';

/**
 * The builder's prefix index (docs/format.md#prefix-index): over the cumulative sequences of the nodes placed
 * so far, find the longest one that is a prefix of a prompt (the whole prompt included); several
 * nodes with that same sequence make the answer ambiguous.
 *
 * Instead of a trie over token ids, every indexed sequence is keyed by (length, hash of its
 * tokens). The hash is an internal SHA-256 over the ids encoded as float64 with no length
 * header, so a lookup can hash the prompt once, front to back, and take a snapshot of the hash
 * state (`Hash.copy()`) at each indexed length: O(len(prompt) + number of distinct lengths) per
 * lookup, O(len(sequence)) per insertion, and O(nodes) memory (one key per node). A candidate
 * found by key is confirmed token by token, so an encoding collision (bigint ids beyond 2^53 are
 * rounded by the float64 encoding) can never produce a wrong answer.
 *
 * Insertion is lazy: nodes are hashed only when a later lookup needs them.
 */
export interface PrefixMatch<T> {
  readonly node: T;
  readonly ambiguous: boolean;
}

interface Indexed<T> {
  readonly node: T;
  readonly sequence: CumulativeSequence;
}

export class PrefixIndex<T> {
  private readonly buckets = new Map<string, Indexed<T>[]>();
  /** Distinct lengths of indexed sequences, ascending. */
  private readonly lengths: number[] = [];
  private pending: Indexed<T>[] = [];

  add(node: T, sequence: CumulativeSequence): void {
    this.pending.push({ node, sequence });
  }

  lookup(prompt: readonly TokenId[]): PrefixMatch<T> | undefined {
    this.flush();
    const upTo = upperBound(this.lengths, prompt.length);
    if (upTo === 0) return undefined;
    const bytes = encodeTokens(prompt, this.lengths[upTo - 1]);
    const hash = createHash('sha256');
    const keys: string[] = new Array<string>(upTo);
    let done = 0;
    for (let i = 0; i < upTo; i++) {
      const length = this.lengths[i];
      hash.update(bytes.subarray(done * 8, length * 8));
      done = length;
      keys[i] = bucketKey(length, hash.copy());
    }
    for (let i = upTo - 1; i >= 0; i--) {
      const bucket = this.buckets.get(keys[i]);
      if (bucket === undefined) continue;
      let first: T | undefined;
      let count = 0;
      for (const item of bucket) {
        if (!item.sequence.isPrefixOf(prompt)) continue;
        if (count === 0) first = item.node;
        count++;
        if (count > 1) break;
      }
      if (count > 0) return { node: first as T, ambiguous: count > 1 };
    }
    return undefined;
  }

  private flush(): void {
    for (const item of this.pending) {
      const { sequence } = item;
      const hash = createHash('sha256');
      hash.update(encodeTokens(sequence.prompt, sequence.prompt.length));
      hash.update(encodeTokens(sequence.generation, sequence.generation.length));
      const key = bucketKey(sequence.length, hash);
      const bucket = this.buckets.get(key);
      if (bucket === undefined) {
        this.buckets.set(key, [item]);
        const at = upperBound(this.lengths, sequence.length);
        if (at === 0 || this.lengths[at - 1] !== sequence.length) this.lengths.splice(at, 0, sequence.length);
      } else {
        bucket.push(item);
      }
    }
    this.pending = [];
  }
}

function bucketKey(length: number, hash: Hash): string {
  return `${length}:${hash.digest('hex')}`;
}

/** Number of elements of the ascending array `xs` that are <= x. */
function upperBound(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first `count` ids as float64 bytes (bigints rounded; see the class comment). */
function encodeTokens(ids: readonly TokenId[], count: number): Uint8Array {
  const view = count === ids.length ? ids : ids.slice(0, count);
  let floats: Float64Array;
  try {
    floats = new Float64Array(view as readonly number[]);
  } catch {
    floats = Float64Array.from(view, (id) => Number(id));
  }
  return new Uint8Array(floats.buffer, floats.byteOffset, floats.byteLength);
}
