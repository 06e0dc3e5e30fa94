// Prints build timings for a 60-call rollout whose prompts grow to 100k tokens (issue: the
// builder's parent verification must not be quadratic). Run: npx tsx bench/long-rollout.ts
import { buildChains } from '../src/build/chain-builder.js';
import { assemble } from '../src/build/consumer-result.js';
import { computeTokenDigest } from '../src/digest/token-digest.js';
import { validateTokenEntry, type TokenEntry } from '../src/records/token-entry.js';

const CALLS = 60;
const FINAL_PROMPT = 100_000;
const GEN = 150;

function rollout(mode: 'full' | 'delta' | 'recovered'): TokenEntry[] {
  const entries: TokenEntry[] = [];
  let cumulative: number[] = [];
  const step = Math.floor(FINAL_PROMPT / CALLS) - GEN;
  let next = 1;
  for (let i = 0; i < CALLS; i++) {
    const suffix = Array.from({ length: i === 0 ? step + GEN : step }, () => next++ % 150000);
    const gen = Array.from({ length: GEN }, () => next++ % 150000);
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

for (const mode of ['full', 'delta', 'recovered'] as const) {
  const entries = rollout(mode);
  const t0 = performance.now();
  buildChains(entries);
  const t1 = performance.now();
  assemble('r', entries);
  const t2 = performance.now();
  console.log(`${mode.padEnd(9)} buildChains ${(t1 - t0).toFixed(0).padStart(5)} ms   assemble ${(t2 - t1).toFixed(0).padStart(5)} ms`);
}
