import { computeTokenDigest, type TokenId } from '../digest/token-digest.js';
import type { TokenEntry } from '../records/token-entry.js';
import type { CumulativeSequence } from './cumulative-sequence.js';

/**
 * Verification of a claimed parent P against a child's full prompt Q (docs/format.md#cumulative-sequence):
 * `len_P <= len(Q)` and `digest(Q[0:len_P]) == digest_P`, with len_P = P.cum_len (or the length
 * of P's cumulative sequence) and digest_P = P.digest (or, if null/empty, P's cumulative digest).
 *
 * Cost: when Q really extends P's cumulative sequence (the normal case), `digest(Q[0:len_P])` is
 * P's own cumulative digest, which is computed once per parent and cached; the token comparison
 * that establishes this is much cheaper than hashing. Only a child whose prefix differs from its
 * parent's tokens hashes its own prefix. Over a rollout every token is hashed O(1) times.
 */
export function parentVerifies(
  parent: { readonly entry: TokenEntry; readonly cumulative: CumulativeSequence },
  childPrompt: readonly TokenId[],
): boolean {
  const cumulative = parent.cumulative;
  const lenP = parent.entry.cum_len ?? cumulative.length;
  if (lenP > childPrompt.length) return false;
  // Python slice semantics: Q[:n] with a negative n drops |n| tokens from the end.
  const end = lenP >= 0 ? lenP : Math.max(0, childPrompt.length + lenP);
  const expected = parent.entry.digest ? parent.entry.digest : cumulative.digest();
  const actual =
    end === cumulative.length && cumulative.isPrefixOf(childPrompt)
      ? cumulative.digest()
      : computeTokenDigest(childPrompt, end);
  return actual === expected;
}
