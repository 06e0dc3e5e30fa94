import { describe, expect, it } from 'vitest';
import { buildChains } from '../../src/build/chain-builder.js';
import { assemble } from '../../src/build/consumer-result.js';
import { computeTokenDigest } from '../../src/digest/token-digest.js';
import type { TokenEntry } from '../../src/records/token-entry.js';
import { makeEntry } from './entry-factory.js';

/**
 * 60 calls whose prompts grow to 100k tokens. Every token is hashed O(1) times by the builder
 * (parent verification reuses each parent's cumulative digest; the prefix index hashes each
 * prompt once per lookup). Timings are printed by `npm run bench` (bench/long-rollout.ts), not
 * asserted here.
 */
const CALLS = 60;
const FINAL_PROMPT = 100_000;
const GEN = 150;

type Mode = 'full' | 'delta' | 'recovered';

function rollout(mode: Mode): TokenEntry[] {
  const entries: TokenEntry[] = [];
  let cumulative: number[] = [];
  const step = Math.floor(FINAL_PROMPT / CALLS) - GEN;
  let next = 1;
  for (let i = 0; i < CALLS; i++) {
    const suffix = Array.from({ length: i === 0 ? step + GEN : step }, () => next++ % 150000);
    const gen = Array.from({ length: GEN }, () => next++ % 150000);
    const prompt = cumulative.concat(suffix);
    const id = `mc-${String(i).padStart(3, '0')}`;
    cumulative = prompt.concat(gen);
    const digest = computeTokenDigest(cumulative);
    const parent = i === 0 ? null : mode === 'recovered' ? `lost-${i}` : `mc-${String(i - 1).padStart(3, '0')}`;
    entries.push(
      makeEntry({
        id,
        parent,
        delta: mode === 'delta' && i > 0,
        prompt: mode === 'delta' && i > 0 ? suffix : prompt,
        gen,
        digest,
        cum_len: cumulative.length,
      }),
    );
  }
  return entries;
}

describe('long rollout: 60 calls, prompts growing to 100k tokens', () => {
  for (const mode of ['full', 'delta', 'recovered'] as const) {
    it(`builds a ${mode} chain into one unmasked trajectory`, () => {
      const entries = rollout(mode);
      expect(entries.at(-1)?.prompt_token_ids.length ?? 0).toBeGreaterThan(mode === 'delta' ? 0 : 95_000);
      const build = buildChains(entries);
      const result = assemble('r', entries);
      expect(build.mainChain?.callIds).toHaveLength(CALLS);
      expect(result.rebuilt_response?.output).toHaveLength(CALLS);
      expect(result.mask_sample).toBe(false);
      if (mode === 'recovered') expect(build.notes.parent_link_failures).toEqual({ parent_call_id_missing_recovered: CALLS - 1 });
    });
  }
});
