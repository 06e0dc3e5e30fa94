import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { appendEntry } from '../../../src/ops/writer.js';
import { freezeRollout } from '../../../src/ops/freeze.js';
import { compareFindings, type Finding } from '../../../src/verify/findings.js';
import { verifyRollout } from '../../../src/verify/verify-rollout.js';
import { canonicalLine, dirSnapshot, entry, paths, useTempDirs } from '../../support/store.js';

const tmp = useTempDirs();
const C1 = entry('c1');
const C2 = entry('c2', { prompt: [1, 2, 3, 4, 5, 6], gen: [7], parent: 'c1' });
const C3 = entry('c3', { prompt: [1, 2, 3, 4, 5, 6, 7, 8], gen: [9], parent: 'c2' });
const L1 = canonicalLine(C1);

async function cleanStore(): Promise<string> {
  const dir = tmp();
  await appendEntry({ dir }, C1);
  await appendEntry({ dir }, C2);
  return dir;
}

/** Findings sorted as the report sorts them, without the human messages. */
async function findings(dir: string): Promise<Omit<Finding, 'message'>[]> {
  const out = await verifyRollout({ dir }, 'r');
  return out.sort(compareFindings).map(({ message: _m, ...rest }) => rest);
}

/** Replaces the first occurrence of `from` after byte `at` with `to` (same length). */
function patch(dir: string, at: number, from: string, to: string): void {
  expect(to.length).toBe(from.length);
  const j = fs.readFileSync(paths(dir).jsonl);
  const i = j.indexOf(from, at);
  expect(i).toBeGreaterThanOrEqual(0);
  j.write(to, i);
  fs.writeFileSync(paths(dir).jsonl, j);
}

describe('verifyRollout', () => {
  it('finds nothing wrong in a clean writer-made store, frozen or not', async () => {
    const dir = await cleanStore();
    expect(await findings(dir)).toEqual([]);
    await freezeRollout({ dir }, 'r');
    expect(await findings(dir)).toEqual([]);
  });

  it('flipping one token byte in an indexed root line gives entry_digest_mismatch and token_digest_mismatch', async () => {
    const dir = await cleanStore();
    patch(dir, 0, '"prompt_token_ids":[1,2,3]', '"prompt_token_ids":[1,2,9]');
    expect(await findings(dir)).toEqual([
      { rollout_id: 'r', code: 'token_digest_mismatch', severity: 'error', call_id: 'c1' },
      { rollout_id: 'r', code: 'entry_digest_mismatch', severity: 'error', call_id: 'c1', line: 1 },
    ]);
  });

  it('flipping a token in an indexed child line also breaks its parent link', async () => {
    const dir = await cleanStore();
    patch(dir, L1.length, '"prompt_token_ids":[1,2,3,4,5,6]', '"prompt_token_ids":[1,2,3,4,9,6]');
    expect(await findings(dir)).toEqual([
      { rollout_id: 'r', code: 'parent_link_mismatch', severity: 'error', call_id: 'c2', parent_call_id: 'c1' },
      { rollout_id: 'r', code: 'token_digest_mismatch', severity: 'error', call_id: 'c2' },
      { rollout_id: 'r', code: 'entry_digest_mismatch', severity: 'error', call_id: 'c2', line: 2 },
    ]);
  });

  it('a line appended by hand past indexed_size is an unindexed_tail warning (with its physical line number)', async () => {
    const dir = await cleanStore();
    fs.appendFileSync(paths(dir).jsonl, Buffer.concat([Buffer.from('\n'), canonicalLine(C3)]));
    expect(await findings(dir)).toEqual([
      { rollout_id: 'r', code: 'unindexed_tail', severity: 'warning', call_id: 'c3', line: 4 },
    ]);
  });

  it('a torn final line is a torn_tail warning; the same bytes followed by a line are malformed_line', async () => {
    const dir = await cleanStore();
    fs.appendFileSync(paths(dir).jsonl, '{"model_call_id":"c3"');
    expect(await findings(dir)).toEqual([{ rollout_id: 'r', code: 'torn_tail', severity: 'warning', line: 3 }]);
    fs.appendFileSync(paths(dir).jsonl, '\n' + canonicalLine(C3).toString());
    expect(await findings(dir)).toEqual([
      { rollout_id: 'r', code: 'malformed_line', severity: 'error', line: 3 },
      { rollout_id: 'r', code: 'unindexed_tail', severity: 'warning', call_id: 'c3', line: 4 },
    ]);
  });

  it('reports an identical replay past the index as duplicate_identical plus unindexed_tail', async () => {
    const dir = await cleanStore();
    fs.appendFileSync(paths(dir).jsonl, L1);
    expect(await findings(dir)).toEqual([
      { rollout_id: 'r', code: 'duplicate_identical', severity: 'warning', call_id: 'c1' },
      { rollout_id: 'r', code: 'unindexed_tail', severity: 'warning', call_id: 'c1', line: 3 },
    ]);
  });

  it('is read-only: no lock file is created and nothing changes', async () => {
    const dir = await cleanStore();
    fs.appendFileSync(paths(dir).jsonl, '{"torn');
    fs.unlinkSync(paths(dir).lock);
    const before = dirSnapshot(dir);
    await verifyRollout({ dir }, 'r');
    expect(dirSnapshot(dir)).toEqual(before);
  });

  it('reports an unreadable state as state_unreadable and skips the index checks', async () => {
    const dir = await cleanStore();
    fs.writeFileSync(paths(dir).state, '[1]');
    expect(await findings(dir)).toEqual([{ rollout_id: 'r', code: 'state_unreadable', severity: 'error' }]);
  });
});
