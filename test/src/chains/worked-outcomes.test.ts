import { describe, expect, it } from 'vitest';
import { buildChains } from '../../../src/chains/chain-builder.js';
import { assemble, assembleWithChains, finishConsumerResult } from '../../../src/chains/consumer-result.js';
import { computeTokenDigest } from '../../../src/digest/token-digest.js';
import { orderedJson } from '../../../src/json/canonical-json.js';
import { parseJson } from '../../../src/json/parse-json.js';
import { validateTokenEntry, type TokenEntry } from '../../../src/records/token-entry.js';
import { makeEntry, plain } from '../../support/entry-factory.js';

/** docs/format.md#worked-outcomes, one test per row of the worked-outcomes table, and the full example. */

const chainsOf = (entries: TokenEntry[]) => buildChains(entries).chains.map((c) => `${c.name}:${c.callIds.join('>')}`);

describe('docs/format.md#worked-outcomes worked outcomes', () => {
  it('root + delta child: main a→b, interstitial [6,7], delivered 1.0', () => {
    const entries = [
      makeEntry({ id: 'a', prompt: [1, 2, 3], gen: [4, 5] }),
      makeEntry({ id: 'b', parent: 'a', delta: true, prompt: [6, 7], gen: [8], cumulative: [1, 2, 3, 4, 5, 6, 7, 8] }),
    ];
    const build = buildChains(entries);
    expect(chainsOf(entries)).toEqual(['main:a>b']);
    expect(build.notes.quarantined).toEqual([]);
    expect(build.notes.delivered_fraction).toBe(1);
    const r = assemble('r', entries);
    expect(r.mask_sample).toBe(false);
    if (r.rebuilt_response === null) throw new Error('expected a projection');
    const [first, second] = r.rebuilt_response.output;
    expect(plain(first.prompt_token_ids)).toEqual([1, 2, 3]);
    // running = [1,2,3] + gen [4,5] + interstitial [6,7]
    expect(plain(second.prompt_token_ids)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(plain(r.metrics.delivered_fraction)).toBe(1);
  });

  const retries = [
    makeEntry({ id: 'a', prompt: [1, 2], gen: [3] }),
    makeEntry({ id: 'b1', parent: 'a', prompt: [1, 2, 3, 9], gen: [10] }),
    makeEntry({ id: 'b2', parent: 'a', prompt: [1, 2, 3, 9], gen: [11] }),
  ];

  it('final-call retry: main a→b1, b2 quarantined, unresolved retries, 0.6667, masked', () => {
    const build = buildChains(retries);
    expect(chainsOf(retries)).toEqual(['main:a>b1']);
    expect(build.notes.quarantined).toEqual(['b2']);
    expect(build.notes.unresolved_retries).toEqual(['b1', 'b2']);
    expect(build.notes.delivered_fraction).toBe(0.6667);
    const r = assemble('r', retries);
    expect(r.mask_sample).toBe(true);
    expect(plain(r.metrics)).toMatchObject({
      quarantined_calls: 1,
      quarantined_fraction: 0.3333,
      delivered_fraction: 0.6667,
    });
  });

  it('middle retry resolved by a child: main a→b2→c, b1 quarantined, not masked', () => {
    const entries = [...retries, makeEntry({ id: 'c', parent: 'b2', prompt: [1, 2, 3, 9, 11, 12], gen: [13] })];
    const build = buildChains(entries);
    expect(chainsOf(entries)).toEqual(['main:a>b2>c']);
    expect(build.notes.quarantined).toEqual(['b1']);
    expect(build.notes.unresolved_retries).toEqual([]);
    expect(assemble('r', entries).mask_sample).toBe(false);
  });

  it('first-call retry: main r2→k, r1 quarantined, roots 2, masked', () => {
    const entries = [
      makeEntry({ id: 'r1', prompt: [1, 2], gen: [3] }),
      makeEntry({ id: 'r2', prompt: [1, 2], gen: [4] }),
      makeEntry({ id: 'k', parent: 'r2', prompt: [1, 2, 4, 5], gen: [6] }),
    ];
    const build = buildChains(entries);
    expect(chainsOf(entries)).toEqual(['main:r2>k']);
    expect(build.notes.quarantined).toEqual(['r1']);
    expect(build.notes.roots).toBe(2);
    expect(assemble('r', entries).mask_sample).toBe(true);
  });

  it('empty-generation parent: main a→f by prefix recovery, not masked', () => {
    const entries = [
      makeEntry({ id: 'a', prompt: [1, 2], gen: [3] }),
      makeEntry({ id: 'e', parent: 'a', prompt: [1, 2, 3, 7], gen: [] }),
      makeEntry({ id: 'f', parent: 'e', prompt: [1, 2, 3, 7, 8], gen: [9] }),
    ];
    const build = buildChains(entries);
    expect(chainsOf(entries)).toEqual(['main:a>f']);
    expect(build.notes.empty_generation_calls).toEqual(['e']);
    expect(build.notes.parent_link_failures).toEqual({ parent_call_id_missing_recovered: 1 });
    expect(build.calls.find((c) => c.id === 'f')).toMatchObject({
      outcome: 'recovered',
      parentId: 'a',
      unresolvedBoundary: false,
    });
    expect(build.calls.find((c) => c.id === 'e')).toMatchObject({ status: 'empty_generation', emptyGeneration: true });
    expect(assemble('r', entries).mask_sample).toBe(false);
  });

  it('unresolved verdict: main a, branch-0 u, parent_unresolved, masked', () => {
    const entries = [
      makeEntry({ id: 'a', prompt: [1, 2], gen: [3] }),
      makeEntry({ id: 'u', res: 'unresolved', prompt: [1, 2, 3, 4], gen: [5] }),
    ];
    const build = buildChains(entries);
    expect(chainsOf(entries)).toEqual(['main:a', 'branch-0:u']);
    expect(build.notes.parent_link_failures).toEqual({ parent_unresolved: 1 });
    expect(build.notes.unresolved_parent_calls).toEqual(['u']);
    expect(assemble('r', entries).mask_sample).toBe(true);
  });

  it('digest mismatch: main a, branch-0 m, parent_digest_mismatch, masked', () => {
    const entries = [
      makeEntry({ id: 'a', prompt: [1, 2], gen: [3] }),
      makeEntry({ id: 'm', parent: 'a', prompt: [1, 2, 99, 4], gen: [5] }),
    ];
    const build = buildChains(entries);
    expect(chainsOf(entries)).toEqual(['main:a', 'branch-0:m']);
    expect(build.notes.parent_link_failures).toEqual({ parent_digest_mismatch: 1 });
    expect(build.calls.find((c) => c.id === 'm')).toMatchObject({
      outcome: 'boundary',
      reason: 'parent_digest_mismatch',
      unresolvedBoundary: true,
    });
    expect(assemble('r', entries).mask_sample).toBe(true);
  });

  it('two roots: chains listed a first, main is the older b, masked', () => {
    const entries = [
      makeEntry({ id: 'a', prompt: [1, 2], gen: [3], created_at: 200 }),
      makeEntry({ id: 'b', prompt: [7, 8], gen: [9], created_at: 100 }),
    ];
    expect(chainsOf(entries)).toEqual(['branch-0:a', 'main:b']);
    const r = assemble('r', entries);
    expect(r.mask_sample).toBe(true);
    if (r.rebuilt_response === null) throw new Error('expected a projection');
    expect(plain(r.rebuilt_response.output[0].prompt_token_ids)).toEqual([7, 8]);
  });

  it('conflicting duplicate: main a (first copy), duplicate_call_id_conflict, masked', () => {
    const entries = [
      makeEntry({ id: 'a', prompt: [1, 2], gen: [3] }),
      makeEntry({ id: 'a', prompt: [1, 2], gen: [4] }),
    ];
    const build = buildChains(entries);
    expect(chainsOf(entries)).toEqual(['main:a']);
    expect(build.notes.parent_link_failures).toEqual({ duplicate_call_id_conflict: 1 });
    expect(build.duplicates).toEqual([{ id: 'a', fileIndex: 1, conflict: true }]);
    const r = assemble('r', entries);
    expect(r.mask_sample).toBe(true);
    if (r.rebuilt_response === null) throw new Error('expected a projection');
    expect(plain(r.rebuilt_response.output[0].generation_token_ids)).toEqual([3]);
    expect(r.metrics.n_calls).toBe(2);
  });

  it('only a delta whose parent is absent: no chains, failed build', () => {
    const entries = [
      makeEntry({ id: 'd', parent: 'gone', delta: true, prompt: [6, 7], gen: [8], cumulative: [1, 6, 7, 8] }),
    ];
    const build = buildChains(entries);
    expect(build.chains).toEqual([]);
    expect(build.notes.parent_link_failures).toEqual({ delta_chain_unreconstructable: 1 });
    expect(build.notes.unresolved_parent_calls).toEqual(['d']);
    expect(build.calls[0]).toMatchObject({ status: 'unreconstructable', promptLength: null });
    expect(assemble('r', entries)).toEqual({
      rollout_id: 'r',
      builder: 'prefix_merging',
      rebuilt_response: null,
      mask_sample: true,
      error: 'ValueError: capture produced no safe trainable chain',
      metrics: { n_calls: 1 },
    });
  });
});

describe('docs/format.md#worked-outcomes full example', () => {
  const line1 =
    '{"continuation_context_digest":"","continuation_context_len":0,"continuation_fingerprint":"","created_at":1700000000.25,"cum_len":5,"digest":"f9621b3ed7fd0071bfc930ba0ed1ee53f9c21e6a3a4a251c9d6f145b5fbe8b18","fingerprint_version":null,"generation_log_probs":[-0.5,-1.25e-7],"generation_token_ids":[4,5],"model":"","model_call_id":"c1","output_items":[{"content":"hi","role":"assistant","type":"message"}],"parent_call_id":null,"parent_resolution":"root","parent_resolution_reason":"","prefix_requested":false,"prefix_supplied":false,"prompt_is_delta":false,"prompt_token_ids":[1,2,3],"rollout_id":"t0-r0","routed_experts":null,"schema_version":5,"token_item_index":0}';
  const line2 =
    '{"continuation_context_digest":"","continuation_context_len":0,"continuation_fingerprint":"","created_at":1700000001.0,"cum_len":8,"digest":"30876ed1ab7084245bacdd41d6ce90ddea8339be9ad96917a3b95214c57738db","fingerprint_version":null,"generation_log_probs":[-0.03125],"generation_token_ids":[8],"model":"","model_call_id":"c2","output_items":[],"parent_call_id":"c1","parent_resolution":"resolved","parent_resolution_reason":"","prefix_requested":false,"prefix_supplied":false,"prompt_is_delta":true,"prompt_token_ids":[6,7],"rollout_id":"t0-r0","routed_experts":null,"schema_version":5,"token_item_index":null}';
  const expected =
    '{"rollout_id":"t0-r0","builder":"prefix_merging","rebuilt_response":{"id":"proj-t0-r0","model":"","object":"response","output":[{"content":"hi","role":"assistant","type":"message","prompt_token_ids":[1,2,3],"generation_token_ids":[4,5],"generation_log_probs":[-0.5,-1.25e-7]},{"type":"message","prompt_token_ids":[1,2,3,4,5,6,7],"generation_token_ids":[8],"generation_log_probs":[-0.03125]}],"usage":{"input_tokens":3,"output_tokens":3}},"metrics":{"n_calls":2,"chains":1,"roots":1,"quarantined_calls":0,"quarantined_fraction":0.0,"delivered_fraction":1.0,"generated_tokens_captured":3,"generated_tokens_delivered":3,"parent_link_failures":{},"unresolved_parent_calls":0,"empty_generation_calls":0},"mask_sample":false,"unresolved_retries":[],"unresolved_parent_calls":[],"_capture_snapshot":{"snapshot_id":"<32 hex>","version":3}}';

  it('prints exactly the documented result', () => {
    const entries = [line1, line2].map((l) => validateTokenEntry(parseJson(l)));
    expect(computeTokenDigest([1, 2, 3, 4, 5, 6, 7, 8])).toBe(entries[1].digest);
    const { result, chains } = assembleWithChains('t0-r0', entries);
    const finished = finishConsumerResult(result, { incomplete: false, snapshot_id: '<32 hex>', version: 3 });
    expect(orderedJson(finished)).toBe(expected);
    expect(chains?.calls.map((c) => [c.id, c.storedAsDelta, c.storedPromptLength, c.promptLength])).toEqual([
      ['c1', false, 3, 3],
      ['c2', true, 2, 7],
    ]);
  });

  it('an incomplete snapshot masks and adds capture_incomplete last', () => {
    const entries = [line1, line2].map((l) => validateTokenEntry(parseJson(l)));
    const finished = finishConsumerResult(assemble('t0-r0', entries), {
      incomplete: true,
      snapshot_id: 's',
      version: 3,
    });
    expect(finished.mask_sample).toBe(true);
    expect(Object.keys(finished.metrics).at(-1)).toBe('capture_incomplete');
    expect(Object.keys(finished).at(-1)).toBe('_capture_snapshot');
    const dry = finishConsumerResult(assemble('t0-r0', entries), { incomplete: false });
    expect('_capture_snapshot' in dry).toBe(false);
  });
});
