import { describe, expect, it } from 'vitest';
import { buildChains } from '../../../src/chains/chain-builder.js';
import {
  assemble,
  consumerResultFor,
  failedBuild,
  finishConsumerResult,
  noRecordsResult,
} from '../../../src/chains/consumer-result.js';
import { CumulativeSequence } from '../../../src/chains/cumulative-sequence.js';
import { PrefixIndex } from '../../../src/chains/prefix-index.js';
import { checkPrefixContiguity, projectChain } from '../../../src/chains/projection.js';
import { computeTokenDigest } from '../../../src/digest/token-digest.js';
import { makeEntry, plain } from '../../support/entry-factory.js';

describe('consumer result shapes', () => {
  it('failed build and no-records objects have the documented key order', () => {
    expect(Object.keys(failedBuild('r', 'ValueError: x', 3))).toEqual([
      'rollout_id',
      'builder',
      'rebuilt_response',
      'mask_sample',
      'error',
      'metrics',
    ]);
    const none = finishConsumerResult(noRecordsResult('r'), { incomplete: true, snapshot_id: 's', version: 1 });
    expect(none).toEqual({
      rollout_id: 'r',
      builder: 'prefix_merging',
      rebuilt_response: null,
      mask_sample: true,
      error: 'capture contains no token records',
      metrics: { n_calls: 0, capture_incomplete: true },
      _capture_snapshot: { snapshot_id: 's', version: 1 },
    });
    expect(consumerResultFor('r', [])).toEqual(noRecordsResult('r'));
  });

  it('an unknown builder name is a failed build', () => {
    const r = assemble('r', [makeEntry({ id: 'a', prompt: [1], gen: [2] })], '', 'x');
    expect(r).toMatchObject({
      error: "ValueError: unknown builder 'x'; known: ['prefix_merging']",
      metrics: { n_calls: 1 },
    });
  });

  it('a negative token id fails the build only when a digest is computed', () => {
    const root = makeEntry({ id: 'a', prompt: [1, -3], gen: [4], digest: null, cum_len: null });
    expect(assemble('r', [root]).rebuilt_response).not.toBeNull();
    const child = makeEntry({ id: 'b', parent: 'a', prompt: [1, -3, 4, 5], gen: [6], digest: null, cum_len: null });
    expect(assemble('r', [root, child])).toMatchObject({
      rebuilt_response: null,
      error: 'ValueError: token ids must be non-negative, got -3',
      metrics: { n_calls: 2 },
    });
  });

  it('a stray inline token item breaks prefix contiguity', () => {
    const e = makeEntry({
      id: 'a',
      prompt: [1, 2],
      gen: [3],
      output_items: [{ type: 'message' }, { type: 'x', generation_token_ids: [9] }],
      token_item_index: 0,
    });
    expect(assemble('r', [e])).toMatchObject({
      error:
        "AssertionError: projection is not prefix-contiguous: an output item's prompt_token_ids does not extend the tokens seen so far",
    });
    expect(() => checkPrefixContiguity([{ generation_token_ids: [1], prompt_token_ids: 5 }])).toThrow(
      /not subscriptable/,
    );
  });

  it('without token_item_index every inline item carries, else the last item; routed_experts copied', () => {
    const inline = makeEntry({
      id: 'a',
      prompt: [1],
      gen: [2],
      output_items: [{ type: 'a', generation_token_ids: [] }, { type: 'b' }, { type: 'c', generation_token_ids: [7] }],
      routed_experts: [[1, 2]],
    });
    const projected = projectChain('r', [inline], '');
    expect(plain(projected.output)).toEqual([
      {
        type: 'a',
        generation_token_ids: [2],
        prompt_token_ids: [1],
        generation_log_probs: [-0.5],
        routed_experts: [[1, 2]],
      },
      { type: 'b' },
      {
        type: 'c',
        generation_token_ids: [2],
        prompt_token_ids: [1],
        generation_log_probs: [-0.5],
        routed_experts: [[1, 2]],
      },
    ]);
    // Existing keys keep their position, new ones go last.
    expect(Object.keys(projected.output[0])).toEqual([
      'type',
      'generation_token_ids',
      'prompt_token_ids',
      'generation_log_probs',
      'routed_experts',
    ]);
    // Two carriers of one call both get the same prompt: the second does not extend the first.
    expect(assemble('r', [inline])).toMatchObject({
      error: expect.stringMatching(/^AssertionError: projection is not prefix-contiguous/),
    });
    const last = assemble('r', [
      makeEntry({ id: 'a', prompt: [1], gen: [2], output_items: [{ type: 'a' }, { type: 'b' }] }),
    ]);
    expect(last.rebuilt_response?.output.map((o) => 'generation_token_ids' in o)).toEqual([false, true]);
  });
});

describe('builder steps', () => {
  it('delta cycles and unknown parents are unreconstructable; long reversed delta chains need no recursion', () => {
    const cyc = [
      makeEntry({ id: 'x', parent: 'y', delta: true, prompt: [1], gen: [2], digest: '' }),
      makeEntry({ id: 'y', parent: 'x', delta: true, prompt: [3], gen: [4], digest: '' }),
      makeEntry({ id: 'r', prompt: [5], gen: [6] }),
    ];
    expect(buildChains(cyc).notes.unresolved_parent_calls).toEqual(['x', 'y']);

    const n = 1500;
    const entries = [makeEntry({ id: 'c00000', prompt: [1], gen: [2] })];
    const cumulative = [1, 2];
    for (let i = 1; i < n; i++) {
      cumulative.push(3, 4);
      entries.push(
        makeEntry({
          id: `c${String(i).padStart(5, '0')}`,
          parent: `c${String(i - 1).padStart(5, '0')}`,
          delta: true,
          prompt: [3],
          gen: [4],
          digest: computeTokenDigest(cumulative),
          cum_len: cumulative.length,
        }),
      );
    }
    entries.reverse();
    const build = buildChains(entries);
    expect(build.notes.unresolved_parent_calls).toEqual([]);
    expect(build.chains).toHaveLength(1);
    expect(build.mainChain?.callIds).toHaveLength(n);
  });

  it('prefix recovery is switched on only when some claimed parent is not among the remaining entries', () => {
    const base = [
      makeEntry({ id: 'a', prompt: [1, 2], gen: [3] }),
      // b claims c, which sorts later: not placed when b is.
      makeEntry({ id: 'b', parent: 'c', prompt: [1, 2, 3, 4], gen: [5] }),
      makeEntry({ id: 'c', prompt: [1, 2, 3, 4, 5, 6], gen: [7] }),
    ];
    const off = buildChains(base);
    expect(off.prefixIndexActive).toBe(false);
    expect(off.calls.find((c) => c.id === 'b')).toMatchObject({ reason: 'parent_call_id_missing', parentId: null });
    const on = buildChains([...base, makeEntry({ id: 'z', parent: 'gone', prompt: [9], gen: [9] })]);
    expect(on.prefixIndexActive).toBe(true);
    expect(on.calls.find((c) => c.id === 'b')).toMatchObject({
      reason: 'parent_call_id_missing_recovered',
      parentId: 'a',
      outcome: 'recovered',
    });
  });

  it('orders ids by code point, not UTF-16 unit', () => {
    const entries = [
      makeEntry({ id: 'x\u{1F600}', prompt: [1], gen: [2] }),
      makeEntry({ id: 'x\uFFFF', prompt: [3], gen: [4] }),
    ];
    expect(buildChains(entries).placementOrder).toEqual(['x\uFFFF', 'x\u{1F600}']);
  });

  it('null resolution: missing_resolution, or a claimed link when a parent id is present', () => {
    const entries = [
      makeEntry({ id: 'a', prompt: [1], gen: [2] }),
      makeEntry({ id: 'b', res: null, parent: 'a', prompt: [1, 2, 3], gen: [4] }),
      makeEntry({ id: 'c', res: null, parent: null, prompt: [7, 7, 7, 7, 7], gen: [4] }),
    ];
    const build = buildChains(entries);
    expect(build.calls.map((c) => [c.id, c.outcome, c.reason, c.parentId])).toEqual([
      ['a', 'root', null, null],
      ['b', 'linked', null, 'a'],
      ['c', 'boundary', 'missing_resolution', null],
    ]);
  });
});

describe('PrefixIndex', () => {
  it('finds the longest indexed prefix (the whole prompt included) and flags shared sequences', () => {
    const index = new PrefixIndex<string>();
    index.add('p12', new CumulativeSequence([1], [2]));
    index.add('p1234', new CumulativeSequence([1, 2, 3], [4]));
    index.add('q1234', new CumulativeSequence([1, 2], [3, 4]));
    index.add('p19', new CumulativeSequence([1], [9]));
    expect(index.lookup([1, 2, 3])).toEqual({ node: 'p12', ambiguous: false });
    expect(index.lookup([1, 2, 3, 4])).toEqual({ node: 'p1234', ambiguous: true });
    expect(index.lookup([1, 9, 9])).toEqual({ node: 'p19', ambiguous: false });
    expect(index.lookup([2])).toBeUndefined();
    expect(index.lookup([1])).toBeUndefined();
  });

  it('handles bigint ids exactly', () => {
    const big = 2n ** 63n + 1n;
    const index = new PrefixIndex<string>();
    index.add('b', new CumulativeSequence([1], [big]));
    expect(index.lookup([1, 2n ** 63n])).toBeUndefined(); // same float64, different id
    expect(index.lookup([1, big, 5])).toEqual({ node: 'b', ambiguous: false });
  });
});
