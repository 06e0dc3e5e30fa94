import { computeTokenDigest } from '../../src/digest/token-digest.js';
import { validateTokenEntry, type TokenEntry } from '../../src/records/token-entry.js';

/**
 * A 60-call rollout whose prompts grow to 100k tokens (the builder's parent checks must
 * not be quadratic). Shared by test/src/chains/long-rollout.test.ts and bench/long-rollout.ts.
 * - full: every record stores its full prompt, parents resolved;
 * - delta: continuations stored as parent-relative suffixes;
 * - recovered: every claimed parent is missing, so each link is recovered by prefix.
 */
export const LONG_CALLS = 60;
export const LONG_FINAL_PROMPT = 100_000;
export const LONG_GEN = 150;

export type LongRolloutMode = 'full' | 'delta' | 'recovered';

export function longRollout(mode: LongRolloutMode): TokenEntry[] {
  const entries: TokenEntry[] = [];
  let cumulative: number[] = [];
  const step = Math.floor(LONG_FINAL_PROMPT / LONG_CALLS) - LONG_GEN;
  let next = 1;
  for (let i = 0; i < LONG_CALLS; i++) {
    const suffix = Array.from({ length: i === 0 ? step + LONG_GEN : step }, () => next++ % 150000);
    const gen = Array.from({ length: LONG_GEN }, () => next++ % 150000);
    const prompt = cumulative.concat(suffix);
    cumulative = prompt.concat(gen);
    const parent = i === 0 ? null : mode === 'recovered' ? `lost-${i}` : `mc-${String(i - 1).padStart(3, '0')}`;
    entries.push(
      validateTokenEntry({
        rollout_id: 'r',
        model_call_id: `mc-${String(i).padStart(3, '0')}`,
        prompt_token_ids: mode === 'delta' && i > 0 ? suffix : prompt,
        generation_token_ids: gen,
        generation_log_probs: gen.map(() => -0.5),
        parent_call_id: parent,
        parent_resolution: parent === null ? 'root' : 'resolved',
        prompt_is_delta: mode === 'delta' && i > 0,
        digest: computeTokenDigest(cumulative),
        cum_len: cumulative.length,
      }),
    );
  }
  return entries;
}
