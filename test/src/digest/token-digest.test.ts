import { describe, it, expect } from 'vitest';
import {
  computeTokenDigest,
  computeTokenDigestOfParts,
  EMPTY_TOKEN_DIGEST,
  sharedWithCachedDigest,
  TokenSequence,
  type TokenId,
} from '../../../src/digest/token-digest.js';
import { mulberry32 } from '../../../src/fixture/prng.js';
import { spelledOutTokenDigest } from '../../support/store.js';

const reference = spelledOutTokenDigest;

/** The digest, or 'error' for the library's own refusal of an id (and any error of `reference`). */
function outcome(f: () => string, library = true): string {
  try {
    return f();
  } catch (e) {
    const message = (e as Error).message;
    return !library || /^token ids must be non-negative|^token id .* does not fit in 64 bits/.test(message)
      ? 'error'
      : message;
  }
}

describe('token digests', () => {
  it('equal the spelled-out digest for a run of sequences that extend, shorten and change one another', () => {
    const rnd = mulberry32(99);
    const id = (): TokenId => {
      const r = rnd();
      return r < 0.999
        ? Math.floor(rnd() * 200000)
        : r < 0.9995
          ? 2 ** 32 + Math.floor(rnd() * 1e6)
          : 2n ** 63n + BigInt(Math.floor(rnd() * 1e6));
    };
    let prompt: TokenId[] = Array.from({ length: 300 }, id);
    const kinds = [0, 0, 0, 0, 0, 0];
    for (let step = 0; step < 500; step++) {
      const r = rnd();
      const kind = r < 0.4 ? 0 : r < 0.5 ? 1 : r < 0.6 ? 2 : r < 0.7 ? 3 : r < 0.75 ? 4 : 5;
      kinds[kind]++;
      if (kind === 0) prompt = prompt.concat(Array.from({ length: Math.floor(rnd() * 600) }, id));
      else if (kind === 1) prompt = prompt.slice(0, Math.floor(rnd() * prompt.length));
      else if (kind === 2) prompt[Math.floor(rnd() * prompt.length)] = id();
      else if (kind === 3) prompt = Array.from({ length: Math.floor(rnd() * 2000) }, id);
      // A bad id after a shared prefix: the error, and the next digest still right.
      else if (kind === 4)
        prompt = [...prompt.slice(0, Math.floor(rnd() * prompt.length)), rnd() < 0.5 ? -1 : 1.5, ...prompt.slice(0, 5)];
      const generation = Array.from({ length: Math.floor(rnd() * 300) }, id);
      const whole = [...prompt, ...generation];
      const expected = outcome(() => reference(whole), false);
      expect(outcome(() => computeTokenDigestOfParts([prompt, generation]))).toBe(expected);
      expect(outcome(() => computeTokenDigest(whole))).toBe(expected);
      const cut = Math.floor(rnd() * whole.length);
      expect(outcome(() => computeTokenDigest(whole, cut))).toBe(outcome(() => reference(whole.slice(0, cut)), false));
      if (kind === 4) expect(expected).toBe('error');
    }
    expect(Math.min(...kinds)).toBeGreaterThan(10);
  });

  it('say whether a sequence starts with the one digested before it, when both went through the cache', () => {
    const rnd = mulberry32(7);
    const id = (): TokenId => Math.floor(rnd() * 200000);
    const startsWith = (q: readonly TokenId[], p: readonly TokenId[]) =>
      p.length <= q.length && p.every((t, i) => q[i] === t);
    let prompt: TokenId[] = Array.from({ length: 300 }, id);
    let whole: TokenId[] = prompt;
    let previous: TokenId[] | undefined;
    const answers = { starts: 0, not: 0, unknown: 0 };
    for (let step = 0; step < 600; step++) {
      const r = rnd();
      // Mostly as a rollout's calls go: the last prompt and generation, and more.
      if (r < 0.45) prompt = whole.concat(Array.from({ length: Math.floor(rnd() * 400) }, id));
      else if (r < 0.55) prompt = prompt.slice(0, Math.floor(rnd() * prompt.length));
      else if (r < 0.7) prompt[Math.floor(rnd() * prompt.length)] = id();
      else if (r < 0.8) prompt = Array.from({ length: Math.floor(rnd() * 1500) }, id);
      else if (r < 0.85)
        prompt = [...prompt.slice(0, Math.floor(rnd() * prompt.length)), 2n ** 63n, ...prompt.slice(0, 300)];
      else if (r < 0.88) prompt = prompt.map((t) => (t === 2n ** 63n ? 5 : t));
      const generation = Array.from({ length: Math.floor(rnd() * 100) }, id);
      outcome(() => computeTokenDigestOfParts([prompt, generation]));
      const shared = sharedWithCachedDigest();
      whole = [...prompt, ...generation];
      if (shared === -1) {
        answers.unknown++;
        previous = undefined;
        continue;
      }
      if (previous !== undefined) {
        expect(shared >= previous.length, `step ${step}`).toBe(startsWith(whole, previous));
        answers[shared >= previous.length ? 'starts' : 'not']++;
      }
      previous = whole;
    }
    expect(Math.min(answers.starts, answers.not, answers.unknown)).toBeGreaterThan(20);
  });

  it('say nothing of a sequence that did not go through the cache', () => {
    computeTokenDigest(Array.from({ length: 300 }, (_, i) => i));
    computeTokenDigest(Array.from({ length: 300 }, (_, i) => i));
    expect(sharedWithCachedDigest()).toBe(300);
    computeTokenDigest([]);
    expect(sharedWithCachedDigest()).toBe(-1);
    computeTokenDigest(Array.from({ length: 300 }, (_, i) => i));
    computeTokenDigest(Array.from({ length: 255 }, (_, i) => i));
    expect(sharedWithCachedDigest()).toBe(-1);
    computeTokenDigest(Array.from({ length: 300 }, (_, i) => (i === 100 ? 2n ** 63n : i)));
    expect(sharedWithCachedDigest()).toBe(-1);
  });

  it('hash sequences longer than the cache of converted ids the same way', () => {
    const long = Array.from({ length: (1 << 20) + 5 }, (_, i) => (i * 7919) % 150000);
    expect(computeTokenDigest(long)).toBe(reference(long));
    expect(computeTokenDigestOfParts([long.slice(0, 1000), long.slice(1000)])).toBe(reference(long));
  });

  it('of a TokenSequence equal the spelled-out digest of every prefix as it grows, shrinks and refuses bad ids', () => {
    const rnd = mulberry32(5);
    const seq = new TokenSequence();
    let model: TokenId[] = [];
    for (let step = 0; step < 300; step++) {
      const r = rnd();
      if (r < 0.6) {
        const part: TokenId[] = Array.from({ length: Math.floor(rnd() * 700) }, () =>
          rnd() < 0.99 ? Math.floor(rnd() * 2 ** 33) : 2n ** 64n - 1n,
        );
        seq.append(part);
        model = model.concat(part);
      } else if (r < 0.8) {
        const n = Math.floor(rnd() * (model.length + 1));
        seq.truncate(n);
        model = model.slice(0, n);
      } else {
        // Refused whole: nothing of it is appended.
        const bad = [1, 2, rnd() < 0.5 ? -4 : 2n ** 64n];
        expect(outcome(() => (seq.append(bad), ''))).toBe('error');
      }
      expect(seq.length).toBe(model.length);
      expect(seq.digest()).toBe(reference(model));
      const cut = Math.floor(rnd() * (model.length + 1));
      expect(seq.digest(cut)).toBe(reference(model.slice(0, cut)));
    }
    // Reset, with or without letting the memory go: empty, and usable again.
    for (const keep of [0, 2 ** 30]) {
      seq.reset(keep);
      expect(seq.length).toBe(0);
      expect(seq.digest()).toBe(EMPTY_TOKEN_DIGEST);
      seq.append([1, 2, 3]);
      expect(seq.digest()).toBe(reference([1, 2, 3]));
    }
  });
});
