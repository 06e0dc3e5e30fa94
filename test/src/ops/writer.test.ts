import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { freezeRollout } from '../../../src/ops/freeze.js';
import { retireRollouts } from '../../../src/ops/retire.js';
import { appendEntry, beginCall, markIncomplete } from '../../../src/ops/writer.js';
import {
  canonicalLine,
  dirSnapshot,
  entry,
  expectTokcapError,
  names,
  paths,
  sha256,
  stateJson,
  tempStateFiles,
  useTempDirs,
} from '../../support/store.js';

const tmp = useTempDirs();
const C1 = entry('c1');
const C2 = entry('c2', { prompt: [1, 2, 3, 4, 5, 6], gen: [7], parent: 'c1' });
const L1 = canonicalLine(C1);

describe('appendEntry (docs/format.md#append)', () => {
  it('appends the canonical line + LF, indexes its digest and bumps the version', async () => {
    const dir = tmp();
    const r = await appendEntry({ dir }, C1);
    expect(r).toEqual({ entryDigest: sha256(L1.subarray(0, -1)), duplicate: false });
    expect(fs.readFileSync(paths(dir).jsonl)).toEqual(L1);
    expect(stateJson(dir)).toEqual({
      entry_digests: { c1: r.entryDigest },
      frozen: false,
      incomplete: false,
      indexed_size: L1.length,
      retired: false,
      snapshot_id: '',
      version: 1,
    });
    expect(names(dir)).toEqual(['r.tokens.jsonl', 'r.tokens.lock', 'r.tokens.state.json']);
    expect(tempStateFiles(dir)).toEqual([]);
  });

  it('reproduces the docs/format.md#canonical-entry canonical line and its entry digest byte for byte', async () => {
    const dir = tmp();
    const e = entry('c1', {
      rollout: 't0-r0',
      createdAt: 1700000000.25,
      extra: {
        output_items: [{ type: 'message', role: 'assistant', content: 'hi' }],
        token_item_index: 0,
        generation_log_probs: [-0.5, -1.25e-7],
      },
    });
    const r = await appendEntry({ dir }, e);
    const line = fs.readFileSync(paths(dir, 't0-r0').jsonl, 'utf8');
    expect(line).toBe(
      '{"continuation_context_digest":"","continuation_context_len":0,"continuation_fingerprint":"","created_at":1700000000.25,"cum_len":5,"digest":"f9621b3ed7fd0071bfc930ba0ed1ee53f9c21e6a3a4a251c9d6f145b5fbe8b18","fingerprint_version":null,"generation_log_probs":[-0.5,-1.25e-7],"generation_token_ids":[4,5],"model":"","model_call_id":"c1","output_items":[{"content":"hi","role":"assistant","type":"message"}],"parent_call_id":null,"parent_resolution":"root","parent_resolution_reason":"","prefix_requested":false,"prefix_supplied":false,"prompt_is_delta":false,"prompt_token_ids":[1,2,3],"rollout_id":"t0-r0","routed_experts":null,"schema_version":5,"token_item_index":0}\n',
    );
    expect(r.entryDigest).toBe('911da8ab57b1f2d70eb3b4633d80e58d87058a08e3bdd215cd4c1c2bae59880d');
  });

  it('is idempotent for an identical entry: duplicate true, J, version and state unchanged', async () => {
    const dir = tmp();
    await appendEntry({ dir }, C1);
    const listing = dirSnapshot(dir);
    const again = await appendEntry({ dir }, C1);
    expect(again.duplicate).toBe(true);
    expect(dirSnapshot(dir)).toEqual(listing);
    expect(stateJson(dir).version).toBe(1);
  });

  it('refuses a different payload for a known call id with kind conflict, sets incomplete and bumps the version, J untouched', async () => {
    const dir = tmp();
    await appendEntry({ dir }, C1);
    const j = fs.readFileSync(paths(dir).jsonl);
    const err = await expectTokcapError(appendEntry({ dir }, entry('c1', { createdAt: 1700000005 })), 'conflict');
    expect(err.message).toBe("Model call id 'c1' was reused with a different payload for rollout 'r'");
    expect(err.pyClass).toBe('ValueError');
    expect(fs.readFileSync(paths(dir).jsonl)).toEqual(j);
    expect(stateJson(dir)).toMatchObject({ incomplete: true, version: 2, indexed_size: L1.length });
  });

  it('refuses to append after freeze with kind frozen and changes nothing', async () => {
    const dir = tmp();
    await appendEntry({ dir }, C1);
    await freezeRollout({ dir }, 'r');
    const listing = dirSnapshot(dir);
    const err = await expectTokcapError(appendEntry({ dir }, C2), 'frozen');
    expect(err.message).toBe('Token capture for rollout r is already frozen');
    expect(err.pyClass).toBe('RuntimeError');
    expect(dirSnapshot(dir)).toEqual(listing);
  });

  it('refuses to append after retire with kind retired', async () => {
    const dir = tmp();
    await retireRollouts({ dir }, ['r']);
    await expectTokcapError(appendEntry({ dir }, C1), 'retired');
    expect(fs.existsSync(paths(dir).jsonl)).toBe(false);
  });

  it('reconciles an unindexed tail before appending (version + recovered + 1)', async () => {
    const dir = tmp();
    await appendEntry({ dir }, C1);
    fs.appendFileSync(paths(dir).jsonl, canonicalLine(C2));
    await appendEntry({ dir }, entry('c3', { prompt: [9], gen: [8] }));
    const s = stateJson(dir);
    expect(s.version).toBe(3);
    expect(Object.keys(s.entry_digests as object).sort()).toEqual(['c1', 'c2', 'c3']);
    expect(s.indexed_size).toBe(fs.statSync(paths(dir).jsonl).size);
  });

  it('validates the entry (an invalid record is refused before any file is touched)', async () => {
    const dir = tmp();
    await expectTokcapError(appendEntry({ dir }, { ...C1, generation_log_probs: [] }), 'schema');
    await expectTokcapError(appendEntry({ dir }, { ...C1, rollout_id: 'bad id' }), 'invalid_rollout_id');
    expect(names(dir)).toEqual([]);
  });
});

describe('beginCall (docs/format.md#begin-call)', () => {
  it('appends the call id + LF to the intents file and writes no state', async () => {
    const dir = tmp();
    await beginCall({ dir }, 'r', 'c1');
    await beginCall({ dir }, 'r', 'é');
    expect(fs.readFileSync(paths(dir).intents, 'utf8')).toBe('c1\né\n');
    expect(names(dir)).toEqual(['r.tokens.intents', 'r.tokens.lock']);
  });

  it('refuses after freeze (frozen) and after retire (retired), writing no intent', async () => {
    const dir = tmp();
    await freezeRollout({ dir }, 'r');
    await expectTokcapError(beginCall({ dir }, 'r', 'c1'), 'frozen');
    await retireRollouts({ dir }, ['r']);
    const err = await expectTokcapError(beginCall({ dir }, 'r', 'c1'), 'retired');
    expect(err.message).toBe('Token capture for rollout r is retired');
    expect(fs.existsSync(paths(dir).intents)).toBe(false);
  });
});

describe('markIncomplete (docs/format.md#mark-incomplete)', () => {
  it('sets incomplete, bumps the version and appends the (possibly empty) call id to the marker file', async () => {
    const dir = tmp();
    await markIncomplete({ dir }, 'r', 'c1');
    await markIncomplete({ dir }, 'r', '');
    expect(fs.readFileSync(paths(dir).incomplete, 'utf8')).toBe('c1\n\n');
    expect(stateJson(dir)).toMatchObject({ incomplete: true, version: 2 });
  });

  it('works after freeze and bumps the version, keeping frozen and the snapshot id', async () => {
    const dir = tmp();
    await appendEntry({ dir }, C1);
    const snap = await freezeRollout({ dir }, 'r');
    await markIncomplete({ dir }, 'r', 'c2');
    expect(stateJson(dir)).toMatchObject({
      frozen: true,
      incomplete: true,
      snapshot_id: snap.snapshotId,
      version: snap.version + 1,
    });
    const again = await freezeRollout({ dir }, 'r');
    expect(again).toMatchObject({ snapshotId: snap.snapshotId, version: snap.version + 1, incomplete: true });
  });

  it('refuses after retire with kind retired', async () => {
    const dir = tmp();
    await retireRollouts({ dir }, ['r']);
    await expectTokcapError(markIncomplete({ dir }, 'r', 'c1'), 'retired');
    expect(fs.existsSync(paths(dir).incomplete)).toBe(false);
  });
});
