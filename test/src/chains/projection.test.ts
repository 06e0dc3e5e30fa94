import { describe, expect, it } from 'vitest';
import { checkPrefixContiguity, NO_TRAINABLE_TOKENS, projectChainNoting } from '../../../src/chains/projection.js';
import { mulberry32 } from '../../../src/fixture/prng.js';
import type { JsonObject } from '../../../src/json/value.js';
import { makeEntry } from '../../support/entry-factory.js';

describe('projection', () => {
  it('is prefix-contiguous whenever it says so by construction (the check is then skipped), on 2,000 random chains', () => {
    const rnd = mulberry32(11);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
    const ids = (n: number) => Array.from({ length: n }, () => Math.floor(rnd() * 50));
    let said = 0;
    let notSaid = 0;
    for (let round = 0; round < 2000; round++) {
      const links = [];
      let prompt: number[] = ids(Math.floor(rnd() * 4));
      for (let k = 0, n = 1 + Math.floor(rnd() * 4); k < n; k++) {
        const gen = ids(Math.floor(rnd() * 3));
        const items: JsonObject[] = Array.from({ length: pick([0, 0, 1, 2, 3]) }, (_, i) => {
          const item: JsonObject = { type: `t${i}` };
          const r = rnd();
          if (r < 0.2) item.generation_token_ids = null;
          else if (r < 0.35) item.generation_token_ids = ids(Math.floor(rnd() * 2));
          if (rnd() < 0.15) item.prompt_token_ids = ids(2);
          return item;
        });
        const index = rnd() < 0.5 || items.length === 0 ? null : Math.floor(rnd() * items.length);
        // Prompts that extend the previous call, or not (the projection uses interstitials anyway).
        links.push(makeEntry({ id: `c${k}`, prompt, gen, output_items: items, token_item_index: index }));
        prompt = rnd() < 0.8 ? [...prompt, ...gen, ...ids(Math.floor(rnd() * 3))] : ids(Math.floor(rnd() * 6));
      }
      let projected;
      try {
        projected = projectChainNoting('r', links, 'm');
      } catch (e) {
        expect((e as Error).message).toBe(NO_TRAINABLE_TOKENS);
        continue;
      }
      const { response, contiguousByConstruction } = projected;
      if (contiguousByConstruction) {
        said++;
        expect(() => checkPrefixContiguity(response.output)).not.toThrow();
      } else notSaid++;
    }
    // Both kinds of projection were met often.
    expect(said).toBeGreaterThan(150);
    expect(notSaid).toBeGreaterThan(150);
  });
});
