import { describe, expect, it } from 'vitest';
import { buildChains } from '../../../src/chains/chain-builder.js';
import { assemble } from '../../../src/chains/consumer-result.js';
import { LONG_CALLS as CALLS, longRollout as rollout } from '../../support/long-rollout.js';

/**
 * 60 calls whose prompts grow to 100k tokens. Every token is hashed O(1) times by the builder
 * (parent verification reuses each parent's cumulative digest; the prefix index hashes each
 * prompt once per lookup). Timings are printed by `npx tsx bench/long-rollout.ts`, not
 * asserted here.
 */
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
      if (mode === 'recovered')
        expect(build.notes.parent_link_failures).toEqual({ parent_call_id_missing_recovered: CALLS - 1 });
    });
  }
});
