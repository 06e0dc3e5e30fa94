import { computeTokenDigestOfParts, type TokenId } from '../digest/token-digest.js';
import { tokensMatchAt } from './token-arrays.js';

/**
 * A call's cumulative sequence, full prompt followed by generation (docs/format.md#cumulative-sequence), kept as
 * its two parts (never concatenated). Its token digest is computed at most once.
 */
export class CumulativeSequence {
  readonly length: number;
  private digestCache: string | undefined;

  constructor(
    readonly prompt: readonly TokenId[],
    readonly generation: readonly TokenId[],
    /** The digest of this sequence, when a caller already computed it (delta materialization). */
    knownDigest?: string,
  ) {
    this.length = prompt.length + generation.length;
    this.digestCache = knownDigest;
  }

  /** Token digest of the whole sequence (throws the docs/format.md#token-digest-errors ValueError on a negative id). */
  digest(): string {
    if (this.digestCache === undefined) this.digestCache = computeTokenDigestOfParts([this.prompt, this.generation]);
    return this.digestCache;
  }

  /** True iff `ids` starts with exactly this sequence. */
  isPrefixOf(ids: readonly TokenId[]): boolean {
    if (ids.length < this.length) return false;
    return tokensMatchAt(ids, 0, this.prompt) && tokensMatchAt(ids, this.prompt.length, this.generation);
  }
}
