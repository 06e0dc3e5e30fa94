import { describe, expect, it } from 'vitest';
import { TokcapError } from '../../../src/errors.js';
import { pyRepr } from '../../../src/layout/py-repr.js';
import {
  assertValidRolloutId,
  dedupeIds,
  isValidRolloutId,
  validateRolloutIdBatch,
} from '../../../src/layout/rollout-id.js';
import { expectTokcapErrorSync } from '../../support/store.js';

describe('rollout id rule (docs/format.md#rollout-ids)', () => {
  it('accepts ASCII letters, digits, ".", "_" and "-", with no length limit', () => {
    for (const id of [
      'r',
      '9',
      '_',
      '.',
      '..',
      '...',
      '..x',
      '-x_',
      '-rf',
      '.hidden',
      'a.b-c_d',
      'a.tokens',
      'A'.repeat(1000),
    ]) {
      expect(isValidRolloutId(id), id).toBe(true);
    }
  });

  it('refuses the empty string and anything else, including a trailing newline', () => {
    for (const id of ['', 'bad id', 'a+b', 'a/b', 'a:b', '[r1]', 'é', 'a\n', '\na', 'a\0', 'a\u00a0', 'r\t']) {
      expect(isValidRolloutId(id), JSON.stringify(id)).toBe(false);
    }
  });

  it('reports an invalid id with the Python repr of it', () => {
    const err = expectTokcapErrorSync(() => assertValidRolloutId('a/b'), 'invalid_rollout_id');
    expect(err.message).toBe("Invalid rollout id: 'a/b'");
    expect(err.pythonString()).toBe("ValueError: Invalid rollout id: 'a/b'");
    expect(err.rolloutId).toBe('a/b');
    expect(expectTokcapErrorSync(() => assertValidRolloutId("it's"), 'invalid_rollout_id').message).toBe(
      `Invalid rollout id: "it's"`,
    );
    expect(expectTokcapErrorSync(() => assertValidRolloutId(''), 'invalid_rollout_id').message).toBe(
      "Invalid rollout id: ''",
    );
  });
});

describe('validateRolloutIdBatch (docs/format.md#retire step 0)', () => {
  it('drops duplicates, keeping first occurrences in order', () => {
    expect(validateRolloutIdBatch(['b', 'a', 'b', 'c', 'a'])).toEqual(['b', 'a', 'c']);
    expect(dedupeIds(['x', 'x'])).toEqual(['x']);
    expect(validateRolloutIdBatch([])).toEqual([]);
  });

  it('fails on the first invalid id, wherever it is in the batch', () => {
    const err = expectTokcapErrorSync(() => validateRolloutIdBatch(['a', 'b', 'bad id', 'x y']), 'invalid_rollout_id');
    expect(err.message).toBe("Invalid rollout id: 'bad id'");
    expect(() => validateRolloutIdBatch(['ok', ''])).toThrow(TokcapError);
  });
});

describe('pyRepr matches Python 3 repr() of a str', () => {
  // Expected values printed by python3 (3.11) for the same strings.
  const cases: [string, string][] = [
    ['a', "'a'"],
    ['', "''"],
    ["it's", `"it's"`],
    ['say "hi"', `'say "hi"'`],
    [`both ' and "`, `'both \\' and "'`],
    [`'"`, `'\\'"'`],
    ["'", `"'"`],
    ['"', `'"'`],
    ['a\\b', "'a\\\\b'"],
    ['tab\there', "'tab\\there'"],
    ['a\nb\rc', "'a\\nb\\rc'"],
    ['nul\x00', "'nul\\x00'"],
    ['\x1b[0m', "'\\x1b[0m'"],
    ['\x7f', "'\\x7f'"],
    ['\x85', "'\\x85'"],
    ['\u00a0x', "'\\xa0x'"],
    ['\u00ad', "'\\xad'"],
    ['é', "'é'"],
    ['\u2028', "'\\u2028'"],
    ['\u200b', "'\\u200b'"],
    ['\u061c', "'\\u061c'"],
    ['\u3000', "'\\u3000'"],
    ['\ufeff', "'\\ufeff'"],
    ['\ue000', "'\\ue000'"],
    ['\u0378', "'\\u0378'"],
    ['\ud800', "'\\ud800'"],
    ['😀', "'😀'"],
    ['\u{e0001}', "'\\U000e0001'"],
    [' ', "' '"],
    ['..x', "'..x'"],
  ];
  for (const [input, want] of cases) {
    it(`${JSON.stringify(input)} -> ${want}`, () => {
      expect(pyRepr(input)).toBe(want);
    });
  }

  it('always gives a valid rollout id in single quotes', () => {
    for (const id of ['r', '-rf', '..', 'a.b-c_d']) expect(pyRepr(id)).toBe(`'${id}'`);
  });
});
