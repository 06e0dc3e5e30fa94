// Prints build timings for a 60-call rollout whose prompts grow to 100k tokens (the builder's
// parent verification must not be quadratic). Run: npx tsx bench/long-rollout.ts
import { buildChains } from '../src/chains/chain-builder.js';
import { assemble } from '../src/chains/consumer-result.js';
import { longRollout } from '../test/support/long-rollout.js';

for (const mode of ['full', 'delta', 'recovered'] as const) {
  const entries = longRollout(mode);
  const t0 = performance.now();
  buildChains(entries);
  const t1 = performance.now();
  assemble('r', entries);
  const t2 = performance.now();
  console.log(
    `${mode.padEnd(9)} buildChains ${(t1 - t0).toFixed(0).padStart(5)} ms   assemble ${(t2 - t1).toFixed(0).padStart(5)} ms`,
  );
}
