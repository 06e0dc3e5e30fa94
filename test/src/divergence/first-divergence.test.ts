import { describe, expect, it } from 'vitest';
import { buildChains } from '../../../src/chains/chain-builder.js';
import { firstDivergences } from '../../../src/divergence/first-divergence.js';
import { PrefixTree } from '../../../src/divergence/prefix-tree.js';
import { makeEntry } from '../../support/entry-factory.js';

const seq = (ids: number[]) => ({ length: ids.length, at: (i: number) => ids[i] });
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

describe('PrefixTree', () => {
  it('finds the stored sequence sharing the longest prefix, the shortest among ties', () => {
    const t = new PrefixTree<string>();
    t.insert(seq([1, 2, 3, 4, 5]), 'long');
    t.insert(seq([1, 2, 3]), 'short');
    t.insert(seq([1, 9]), 'other');
    expect(t.longestPrefix(seq([1, 2, 3, 4, 7]))).toEqual({ match: 'long', shared: 4 });
    expect(t.longestPrefix(seq([1, 2, 3, 8]))).toEqual({ match: 'short', shared: 3 });
    expect(t.longestPrefix(seq([1, 2]))).toEqual({ match: 'short', shared: 2 });
    expect(t.longestPrefix(seq([7]))).toEqual({ match: 'other', shared: 0 });
    expect(new PrefixTree<string>().longestPrefix(seq([1]))).toBeUndefined();
  });

  it('treats a bigint id within the safe range as the same id as its number', () => {
    const t = new PrefixTree<string>();
    t.insert({ length: 2, at: (i) => [5n, 7n][i] }, 'a');
    expect(t.longestPrefix(seq([5, 7]))).toEqual({ match: 'a', shared: 2 });
  });
});

describe('firstDivergences', () => {
  it('is empty for a clean chain', () => {
    const build = buildChains([
      makeEntry({ id: 'a', prompt: [1, 2], gen: [3] }),
      makeEntry({ id: 'b', prompt: [1, 2, 3, 4], gen: [5], parent: 'a' }),
    ]);
    expect(firstDivergences(build)).toEqual([]);
  });

  it('names the candidate parent, the position, both windows and the drift', () => {
    const shared = range(1000, 20);
    // Generated [..., 151668, 271, 40, 41, 42, 43]; re-rendered [..., 151668, 198, 198, 40, ...].
    const a = makeEntry({ id: 'call-001', prompt: shared, gen: [151668, 271, 40, 41, 42, 43] });
    const b = makeEntry({
      id: 'call-002',
      prompt: [...shared, 151668, 198, 198, 40, 41, 42, 43, 50, 51],
      gen: [60],
      res: 'unresolved',
    });
    const [d] = firstDivergences(buildChains([a, b]));
    expect(d).toMatchObject({
      callId: 'call-002',
      kind: 'boundary',
      reason: 'parent_unresolved',
      candidateParentId: 'call-001',
      sharedLength: 21,
      position: 21,
      candidatePart: 'generation',
      candidateLength: 26,
    });
    expect(d.generated).toEqual({ start: 13, ids: [...shared.slice(13), 151668, 271, 40, 41, 42, 43] });
    expect(d.rerendered).toEqual({ start: 13, ids: [...shared.slice(13), 151668, 198, 198, 40, 41, 42, 43, 50, 51] });
    expect(d.hunk).toEqual({ start: 20, generated: [151668, 271], rerendered: [151668, 198, 198] });
  });

  it('prefers the call whose own tokens hold the divergence over a later call that repeats them', () => {
    const a = makeEntry({ id: 'a', prompt: [1, 2], gen: [3, 4] });
    const b = makeEntry({ id: 'b', prompt: [1, 2, 3, 4, 5], gen: [6], parent: 'a' });
    const c = makeEntry({ id: 'c', prompt: [1, 2, 3, 9, 9, 9], gen: [7], res: 'unresolved' });
    const [d] = firstDivergences(buildChains([a, b, c]));
    expect(d).toMatchObject({ callId: 'c', candidateParentId: 'a', position: 3, candidatePart: 'generation' });
  });

  it('reports an extra root, and a prompt that extends its candidate entirely has no position', () => {
    const a = makeEntry({ id: 'a', prompt: [1, 2], gen: [3], created_at: 1 });
    const b = makeEntry({ id: 'b', prompt: [1, 2, 3, 4], gen: [5], res: 'root', created_at: 2 });
    const [d] = firstDivergences(buildChains([a, b]));
    expect(d).toMatchObject({
      callId: 'b',
      kind: 'extra_root',
      reason: null,
      candidateParentId: 'a',
      sharedLength: 3,
      position: null,
      candidatePart: null,
    });
  });

  it('has no candidate when no earlier call shares a token', () => {
    const a = makeEntry({ id: 'a', prompt: [1, 2], gen: [3], created_at: 1 });
    const b = makeEntry({ id: 'b', prompt: [7, 8, 9], gen: [5], res: 'root', created_at: 2 });
    const [d] = firstDivergences(buildChains([a, b]));
    expect(d).toMatchObject({ callId: 'b', candidateParentId: null, sharedLength: 0, position: 0 });
  });

  it('compares hundreds of long calls without comparing every pair', () => {
    // 300 calls of a growing 30k-token conversation, each re-rendering one earlier token differently.
    const entries = [];
    let convo = range(10, 30_000);
    let parent: string | null = null;
    for (let i = 0; i < 300; i++) {
      const id = `call-${String(i).padStart(3, '0')}`;
      const gen = [100_000 + i, 100_500 + i];
      entries.push(makeEntry({ id, prompt: convo, gen, ...(parent ? { res: 'unresolved' as const } : {}) }));
      convo = [...convo, 100_000 + i, 7, 7, 100_500 + i, 42];
      parent = id;
    }
    const ds = firstDivergences(buildChains(entries));
    expect(ds).toHaveLength(299);
    expect(ds[0]).toMatchObject({ callId: 'call-001', candidateParentId: 'call-000', position: 30_001 });
    expect(ds[298]).toMatchObject({ callId: 'call-299', candidateParentId: 'call-298' });
  });
});
