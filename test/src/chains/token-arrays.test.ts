import { describe, expect, it } from 'vitest';
import { concatTokens } from '../../../src/chains/token-arrays.js';

describe('concatTokens', () => {
  it('concatenates in order, ids of both kinds, without touching its inputs', () => {
    const first = [1, 2, 3];
    const out = concatTokens(first, [], [2n ** 70n, 4], [5]);
    expect(out).toEqual([1, 2, 3, 2n ** 70n, 4, 5]);
    expect(first).toEqual([1, 2, 3]);
    out.push(9);
    expect(first).toEqual([1, 2, 3]);
    expect(concatTokens()).toEqual([]);
    expect(concatTokens([7])).toEqual([7]);
  });

  it('is right with apache-arrow loaded (it sets Symbol.isConcatSpreadable, which concat would consult)', async () => {
    await import('apache-arrow');
    const prompt = Array.from({ length: 6000 }, (_, i) => i);
    const out = concatTokens(prompt, [1, 2], [3]);
    expect(out.length).toBe(6003);
    expect(out.slice(5998)).toEqual([5998, 5999, 1, 2, 3]);
    expect(Array.isArray(out)).toBe(true);
  });
});
