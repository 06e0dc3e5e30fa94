import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { TokenId } from '../../../src/digest/token-digest.js';
import { mulberry32 } from '../../../src/fixture/prng.js';
import type { JsonObject, JsonValue } from '../../../src/json/value.js';
import { compareFindings } from '../../../src/verify/findings.js';
import { verifyRollout } from '../../../src/verify/verify-rollout.js';
import { canonicalLine, paths, spelledOutTokenDigest, useTempDirs } from '../../support/store.js';

const tmp = useTempDirs();

/** docs/format.md#token-digests spelled out; null for an id it cannot encode. */
function digestOf(ids: readonly TokenId[]): string | null {
  try {
    return spelledOutTokenDigest(ids);
  } catch {
    return null;
  }
}

interface Rec {
  id: string;
  parent: string | null;
  delta: boolean;
  prompt: TokenId[];
  gen: TokenId[];
  digest: string | null;
  cumLen: number | null;
  resolution: string | null;
}

/**
 * The token checks of docs/conformance.md#verify-findings read literally: every cumulative sequence and
 * full prompt built as an array, every digest computed from scratch.
 */
function expectedFindings(recs: Rec[]): { code: string; call_id: string; parent_call_id?: string }[] {
  const first = new Map<string, Rec>();
  for (const r of recs) if (!first.has(r.id)) first.set(r.id, r);
  const cum = (id: string, seen = new Set<string>()): TokenId[] | null => {
    const r = first.get(id);
    if (!r || seen.has(id)) return null;
    seen.add(id);
    if (!r.delta) return [...r.prompt, ...r.gen];
    const up = r.parent === null ? null : cum(r.parent, seen);
    return up === null ? null : [...up, ...r.prompt, ...r.gen];
  };
  const out: { code: string; call_id: string; parent_call_id?: string }[] = [];
  for (const r of first.values()) {
    const c = cum(r.id);
    if (!r.delta) {
      if (r.digest && digestOf(c!) !== r.digest) out.push({ code: 'token_digest_mismatch', call_id: r.id });
      if (r.cumLen !== null && r.cumLen !== c!.length) out.push({ code: 'cum_len_mismatch', call_id: r.id });
    } else if (c === null) {
      out.push({ code: 'delta_unreconstructable', call_id: r.id });
    } else if ((r.digest && digestOf(c) !== r.digest) || (r.cumLen !== null && r.cumLen !== c.length)) {
      out.push({ code: 'delta_digest_mismatch', call_id: r.id });
    }
    if (r.resolution === 'resolved' && r.parent !== null && !first.has(r.parent)) {
      out.push({ code: 'parent_missing', call_id: r.id, parent_call_id: r.parent });
    }
    if (r.parent !== null && first.has(r.parent)) {
      const p = first.get(r.parent)!;
      const prompt = r.delta ? (c === null ? null : c.slice(0, c.length - r.gen.length)) : r.prompt;
      const pc = cum(p.id);
      const len = p.cumLen ?? pc?.length ?? null;
      const want = p.digest ? p.digest : pc === null ? null : digestOf(pc);
      if (
        prompt !== null &&
        len !== null &&
        want !== null &&
        (len > prompt.length || digestOf(prompt.slice(0, len)) !== want)
      ) {
        out.push({ code: 'parent_link_mismatch', call_id: r.id, parent_call_id: p.id });
      }
    }
    if (!r.digest || r.cumLen === null) out.push({ code: 'missing_digest', call_id: r.id });
  }
  return out;
}

/**
 * A rollout of chains and branches, full and delta records mixed, with every kind of damage.
 * `rootIds` more ids in the prompt of each record with no parent: from 256 on, the sequences go
 * through the token digest's cache (token-digest.ts), whose comparisons also answer a full
 * child's link to the full parent digested just before it.
 */
function randomRollout(seed: number, rootIds = 0): Rec[] {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const id = (): TokenId => {
    const r = rnd();
    return r < 0.995
      ? Math.floor(rnd() * 150000)
      : r < 0.997
        ? 2n ** 60n + BigInt(Math.floor(rnd() * 1000))
        : r < 0.9985
          ? -3
          : 2 ** 40;
  };
  const ids = (n: number): TokenId[] => Array.from({ length: n }, id);
  const truth = new Map<string, TokenId[]>();
  const recs: Rec[] = [];
  const calls = 1 + Math.floor(rnd() * 14);
  for (let k = 0; k < calls; k++) {
    const callId = `c${k}`;
    const parent = k === 0 || rnd() < 0.1 ? null : rnd() < 0.08 ? 'ghost' : pick(recs).id;
    const parentTruth = parent === null ? undefined : truth.get(parent);
    const delta = parentTruth !== undefined && rnd() < 0.6;
    const suffix = ids(Math.floor(rnd() * 40) + (parentTruth === undefined ? rootIds : 0));
    const gen = ids(Math.floor(rnd() * 20));
    const fullPrompt = parentTruth ? [...parentTruth, ...suffix] : suffix;
    const cumulative = [...fullPrompt, ...gen];
    truth.set(callId, cumulative);
    const rec: Rec = {
      id: callId,
      parent,
      delta,
      prompt: delta ? suffix : fullPrompt,
      gen,
      digest: digestOf(cumulative) ?? '',
      cumLen: cumulative.length,
      resolution: parent === null ? 'root' : 'resolved',
    };
    const damage = rnd();
    if (damage < 0.06 && rec.prompt.length > 0) rec.prompt[Math.floor(rnd() * rec.prompt.length)] = id();
    else if (damage < 0.1) rec.cumLen = rec.cumLen! + pick([-1, 1, -5]);
    else if (damage < 0.13) rec.cumLen = null;
    else if (damage < 0.16) rec.digest = pick(['', null, 'ab'.repeat(32)]);
    else if (damage < 0.18 && !delta && parent !== null) rec.delta = true;
    else if (damage < 0.2 && !delta && parent !== null) rec.resolution = null;
    recs.push(rec);
  }
  // A cycle of two deltas, and records out of file order, now and then.
  if (rnd() < 0.1)
    recs.push(
      { ...recs[0], id: 'x1', parent: 'x2', delta: true, resolution: 'resolved' },
      { ...recs[0], id: 'x2', parent: 'x1', delta: true, resolution: 'resolved' },
    );
  if (rnd() < 0.2) recs.reverse();
  return recs;
}

function line(r: Rec): Buffer {
  const e: JsonObject = {
    schema_version: 5,
    rollout_id: 'r',
    model_call_id: r.id,
    prompt_token_ids: r.prompt as JsonValue[],
    generation_token_ids: r.gen as JsonValue[],
    generation_log_probs: r.gen.map(() => -0.5),
    parent_call_id: r.parent,
    parent_resolution: r.resolution,
    prompt_is_delta: r.delta,
    cum_len: r.cumLen,
    digest: r.digest,
  };
  return canonicalLine(e);
}

describe('verify-digests token checks', () => {
  it.each([
    ['short sequences', 0],
    ['sequences of 256 ids or more', 256],
  ])(
    'match the checks read literally on 400 random rollouts of full and delta chains with damage (%s)',
    async (_, rootIds) => {
      const dir = tmp();
      const codes = new Map<string, number>();
      for (let seed = 1; seed <= 400; seed++) {
        const recs = randomRollout(seed, rootIds);
        fs.writeFileSync(paths(dir).jsonl, Buffer.concat(recs.map(line)));
        const got = (await verifyRollout({ dir }, 'r'))
          .sort(compareFindings)
          .map(({ code, call_id, parent_call_id }) => ({
            code,
            call_id,
            ...(parent_call_id !== undefined ? { parent_call_id } : {}),
          }));
        const want = expectedFindings(recs);
        expect(got, `seed ${seed}`).toEqual(expect.arrayContaining(want));
        expect(got.length, `seed ${seed}`).toBe(want.length);
        for (const f of want) codes.set(f.code, (codes.get(f.code) ?? 0) + 1);
      }
      // The damage reached every check.
      for (const code of [
        'token_digest_mismatch',
        'cum_len_mismatch',
        'delta_unreconstructable',
        'delta_digest_mismatch',
        'parent_missing',
        'parent_link_mismatch',
        'missing_digest',
      ]) {
        expect(codes.get(code) ?? 0, code).toBeGreaterThan(3);
      }
    },
  );
});

describe("a full child's link to the full parent digested just before it (the digest cache's comparison)", () => {
  const seq = (n: number, from: number): number[] => Array.from({ length: n }, (_, i) => from + i);
  const rec = (id: string, parent: string | null, prompt: TokenId[], gen: TokenId[]): Rec => ({
    id,
    parent,
    delta: false,
    prompt,
    gen,
    digest: digestOf([...prompt, ...gen]),
    cumLen: prompt.length + gen.length,
    resolution: parent === null ? 'root' : 'resolved',
  });
  const parentPrompt = seq(300, 1000);
  const parentGen = seq(20, 5000);
  const parentSeq = [...parentPrompt, ...parentGen];
  const changedAt = (k: number): number[] => parentSeq.map((t, i) => (i === k ? t + 1 : t));
  const cases: [string, TokenId[], Rec[], boolean][] = [
    ['the prompt is the parent sequence and more', [...parentSeq, ...seq(50, 7000)], [], false],
    ['the prompt is exactly the parent sequence', parentSeq, [], false],
    ['the prompt is one id short of the parent sequence', parentSeq.slice(0, -1), [], true],
    ["the parent's last id differs", [...changedAt(parentSeq.length - 1), 1], [], true],
    ["the parent's first id differs", [...changedAt(0), 1], [], true],
    ["an id of the parent's prompt differs", [...changedAt(150), 1], [], true],
    [
      'an id past the parent sequence is a big integer (the cache is not used)',
      [...parentSeq, 2n ** 60n, 3],
      [],
      false,
    ],
    [
      'the cache held a longer sequence that the parent starts',
      [...parentSeq, ...seq(50, 9000)],
      [rec('x', null, [...parentSeq, ...seq(80, 8000)], [])],
      false,
    ],
    [
      'the cache held a longer sequence that the parent starts, and the child differs in it',
      [...changedAt(310), 1],
      [rec('x', null, [...parentSeq, ...seq(80, 8000)], [])],
      true,
    ],
  ];
  it.each(cases)('%s', async (_, childPrompt, before, mismatch) => {
    const dir = tmp();
    const recs = [...before, rec('p', null, parentPrompt, parentGen), rec('c', 'p', childPrompt, seq(10, 6000))];
    fs.writeFileSync(paths(dir).jsonl, Buffer.concat(recs.map(line)));
    const got = (await verifyRollout({ dir }, 'r')).map(({ code, call_id, parent_call_id }) => ({
      code,
      call_id,
      ...(parent_call_id !== undefined ? { parent_call_id } : {}),
    }));
    expect(got).toEqual(expectedFindings(recs));
    expect(got.some((f) => f.code === 'parent_link_mismatch')).toBe(mismatch);
  });
});
