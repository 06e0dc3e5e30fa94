import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { freezeRollout } from '../../../src/ops/freeze.js';
import { retireRollouts } from '../../../src/ops/retire.js';
import { appendEntry, beginCall } from '../../../src/ops/writer.js';
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
const C2 = entry('c2', { prompt: [1, 2, 3, 4, 5, 6], gen: [7], parent: 'c1', createdAt: 1700000001 });
const C3 = entry('c3', { prompt: [1, 2, 3, 4, 5, 6, 7, 8], gen: [9], parent: 'c2', createdAt: 1700000002 });
const L1 = canonicalLine(C1);
const L2 = canonicalLine(C2);
const L3 = canonicalLine(C3);

/** A store made by the writer: intents c1, c2 and their two entries (version 2). */
async function writerStore(): Promise<string> {
  const dir = tmp();
  await beginCall({ dir }, 'r', 'c1');
  await appendEntry({ dir }, C1);
  await beginCall({ dir }, 'r', 'c2');
  await appendEntry({ dir }, C2);
  return dir;
}

const appendRaw = (dir: string, bytes: Buffer | string) => fs.appendFileSync(paths(dir).jsonl, bytes);
const jsonl = (dir: string) => fs.readFileSync(paths(dir).jsonl);
const ids = (snap: { entries: { model_call_id: string }[] }) => snap.entries.map((e) => e.model_call_id);

describe('freezeRollout on a clean writer-made store', () => {
  it('freezes once: new uuid4-hex snapshot id, version + 1, entries in file order, J untouched', async () => {
    const dir = await writerStore();
    const before = jsonl(dir);
    expect(stateJson(dir)).toMatchObject({ version: 2, frozen: false, indexed_size: L1.length + L2.length });
    const snap = await freezeRollout({ dir }, 'r');
    expect(ids(snap)).toEqual(['c1', 'c2']);
    expect(snap).toMatchObject({ rolloutId: 'r', incomplete: false, version: 3, danglingIntents: [] });
    expect(snap.snapshotId).toMatch(/^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(stateJson(dir)).toEqual({
      entry_digests: { c1: sha256(L1.subarray(0, -1)), c2: sha256(L2.subarray(0, -1)) },
      frozen: true,
      incomplete: false,
      indexed_size: L1.length + L2.length,
      retired: false,
      snapshot_id: snap.snapshotId,
      version: 3,
    });
    expect(jsonl(dir)).toEqual(before);
    expect(tempStateFiles(dir)).toEqual([]);
  });

  it('frozen twice returns the same snapshot id and version and writes nothing the second time', async () => {
    const dir = await writerStore();
    const first = await freezeRollout({ dir }, 'r');
    const listing = dirSnapshot(dir);
    const second = await freezeRollout({ dir }, 'r');
    expect(second.snapshotId).toBe(first.snapshotId);
    expect(second.version).toBe(first.version);
    expect(dirSnapshot(dir)).toEqual(listing);
  });

  it('reports dangling intents in intent order with duplicates, and marks the snapshot incomplete', async () => {
    const dir = await writerStore();
    await beginCall({ dir }, 'r', 'c9');
    await beginCall({ dir }, 'r', 'c1');
    await beginCall({ dir }, 'r', 'c9');
    const snap = await freezeRollout({ dir }, 'r');
    expect(snap.danglingIntents).toEqual(['c9', 'c9']);
    expect(snap.incomplete).toBe(true);
    // Not persisted: the state's flag stays false.
    expect(stateJson(dir).incomplete).toBe(false);
  });

  it('does not count a refused intent as dangling (newer-store rule)', async () => {
    const dir = await writerStore();
    await beginCall({ dir }, 'r', 'c8');
    await beginCall({ dir }, 'r', 'c9');
    const s = stateJson(dir);
    fs.writeFileSync(
      paths(dir).state,
      JSON.stringify({ ...s, refusals: [{ code: null, created_at: 1.5, model_call_id: 'c9' }] }) + '\n',
    );
    const snap = await freezeRollout({ dir }, 'r');
    expect(snap.danglingIntents).toEqual(['c8']);
    expect(stateJson(dir).refusals).toEqual([{ code: null, created_at: 1.5, model_call_id: 'c9' }]);
  });
});

describe('freezeRollout edge conditions', () => {
  it('on an absent rollout creates only L and S: frozen, version 1, empty complete snapshot', async () => {
    const dir = tmp();
    const snap = await freezeRollout({ dir }, 'r');
    expect(names(dir)).toEqual(['r.tokens.lock', 'r.tokens.state.json']);
    expect(snap).toMatchObject({ entries: [], incomplete: false, version: 1, danglingIntents: [] });
    expect(stateJson(dir)).toEqual({
      entry_digests: {},
      frozen: true,
      incomplete: false,
      indexed_size: 0,
      retired: false,
      snapshot_id: snap.snapshotId,
      version: 1,
    });
    expect(fs.statSync(paths(dir).lock).size).toBe(0);
  });

  it('refuses a retired rollout with kind retired and changes nothing', async () => {
    const dir = await writerStore();
    await retireRollouts({ dir }, ['r']);
    const listing = dirSnapshot(dir);
    const err = await expectTokcapError(freezeRollout({ dir }, 'r'), 'retired');
    expect(err.message).toBe('Token capture for rollout r is retired');
    expect(err.pyClass).toBe('RuntimeError');
    expect(dirSnapshot(dir)).toEqual(listing);
  });

  it('validates the id before touching the filesystem', async () => {
    const dir = tmp();
    const err = await expectTokcapError(freezeRollout({ dir }, 'a/b'), 'invalid_rollout_id');
    expect(err.message).toBe("Invalid rollout id: 'a/b'");
    expect(names(dir)).toEqual([]);
  });

  it('fails with index_offset when indexed_size is past the end of J, and writes nothing', async () => {
    const dir = await writerStore();
    const s = stateJson(dir);
    fs.writeFileSync(paths(dir).state, JSON.stringify({ ...s, indexed_size: L1.length + L2.length + 1 }) + '\n');
    const listing = dirSnapshot(dir);
    const err = await expectTokcapError(freezeRollout({ dir }, 'r'), 'index_offset');
    expect(err.message).toBe('Invalid token-capture index offset for rollout r');
    expect(dirSnapshot(dir)).toEqual(listing);
  });
});

describe('reconciliation through freeze (docs/format.md#reconcile)', () => {
  it('truncates a torn final line at its start, keeps the blank lines before it, and leaves it out of the snapshot', async () => {
    const dir = await writerStore();
    const good = L1.length + L2.length;
    appendRaw(dir, '\n  \n{"model_call_id":"c3","generation_tok');
    const snap = await freezeRollout({ dir }, 'r');
    expect(ids(snap)).toEqual(['c1', 'c2']);
    expect(jsonl(dir)).toEqual(Buffer.concat([L1, L2, Buffer.from('\n  \n')]));
    const s = stateJson(dir);
    expect(s.indexed_size).toBe(good + 4);
    // Nothing was recovered: only the freeze bump.
    expect(s.version).toBe(3);
    expect(snap.version).toBe(3);
  });

  it('treats a bad final line followed only by whitespace as torn, and cuts the whitespace after it too', async () => {
    const dir = await writerStore();
    appendRaw(dir, '{"torn": \n \t\n\n');
    await freezeRollout({ dir }, 'r');
    expect(jsonl(dir)).toEqual(Buffer.concat([L1, L2]));
  });

  it('fails on a corrupt middle line with kind corrupt (JSONDecodeError) and changes nothing', async () => {
    const dir = tmp();
    await appendEntry({ dir }, C1);
    appendRaw(dir, Buffer.concat([Buffer.from('{"model_call_id": garbage}\n'), L2]));
    const listing = dirSnapshot(dir);
    const err = await expectTokcapError(freezeRollout({ dir }, 'r'), 'corrupt');
    expect(err.pyClass).toBe('JSONDecodeError');
    expect(dirSnapshot(dir)).toEqual(listing);
    expect(stateJson(dir).frozen).toBe(false);
  });

  it('fails on an invalid record in the tail with kind schema and the rule message, changing nothing', async () => {
    const dir = tmp();
    await appendEntry({ dir }, C1);
    const bad = JSON.stringify({
      rollout_id: 'r',
      model_call_id: 'c2',
      prompt_token_ids: [1],
      generation_token_ids: [2, 3],
      generation_log_probs: [-1.5],
    });
    appendRaw(dir, bad + '\n');
    const listing = dirSnapshot(dir);
    const err = await expectTokcapError(freezeRollout({ dir }, 'r'), 'schema');
    expect(err.message).toContain(
      'generation_token_ids and generation_log_probs must have the same length (got 2 and 1)',
    );
    expect(err.pyClass).toBe('ValidationError');
    expect(dirSnapshot(dir)).toEqual(listing);
  });

  it('indexes unindexed tail lines and bumps the version once per line, identical duplicates included', async () => {
    const dir = await writerStore();
    appendRaw(dir, Buffer.concat([L3, Buffer.from('\n'), L1]));
    const snap = await freezeRollout({ dir }, 'r');
    // 2 (appends) + 2 recovered (c3 and the replayed c1) + 1 (freeze)
    expect(snap.version).toBe(5);
    expect(ids(snap)).toEqual(['c1', 'c2', 'c3', 'c1']);
    const s = stateJson(dir);
    expect(s.version).toBe(5);
    expect(s.indexed_size).toBe(L1.length * 2 + L2.length + L3.length + 1);
    expect(Object.keys(s.entry_digests as object).sort()).toEqual(['c1', 'c2', 'c3']);
    expect((s.entry_digests as Record<string, string>).c3).toBe(sha256(L3.subarray(0, -1)));
  });

  it('recovers tail lines on an already-frozen rollout: same snapshot id, version + recovered', async () => {
    const dir = await writerStore();
    const first = await freezeRollout({ dir }, 'r');
    appendRaw(dir, L3);
    const second = await freezeRollout({ dir }, 'r');
    expect(second.snapshotId).toBe(first.snapshotId);
    expect(second.version).toBe(first.version + 1);
    expect(ids(second)).toEqual(['c1', 'c2', 'c3']);
  });

  it('re-indexes a legacy state (no entry_digests, no indexed_size) from byte 0 without version bumps', async () => {
    const dir = await writerStore();
    fs.writeFileSync(
      paths(dir).state,
      '{"frozen":false,"incomplete":false,"retired":false,"snapshot_id":"","version":7,"x":1.0}\n',
    );
    const snap = await freezeRollout({ dir }, 'r');
    expect(snap.version).toBe(8);
    const s = stateJson(dir);
    expect(s.entry_digests).toEqual({ c1: sha256(L1.subarray(0, -1)), c2: sha256(L2.subarray(0, -1)) });
    expect(s.indexed_size).toBe(L1.length + L2.length);
    expect(fs.readFileSync(paths(dir).state, 'utf8')).toContain('"x":1.0');
  });

  it('for a legacy state with an integer indexed_size but no entry_digests, indexes only the lines after that offset', async () => {
    const dir = await writerStore();
    fs.writeFileSync(paths(dir).state, JSON.stringify({ indexed_size: L1.length, version: 4 }) + '\n');
    const snap = await freezeRollout({ dir }, 'r');
    expect(snap.version).toBe(5);
    expect(stateJson(dir).entry_digests).toEqual({ c2: sha256(L2.subarray(0, -1)) });
    expect(ids(snap)).toEqual(['c1', 'c2']);
  });

  it('on a conflicting payload bumps the version and sets incomplete on every attempt, keeping the old index', async () => {
    const dir = tmp();
    await appendEntry({ dir }, C1);
    const oldIndex = stateJson(dir).entry_digests;
    const other = canonicalLine(entry('c1', { createdAt: 1700000099 }));
    appendRaw(dir, Buffer.concat([L2, other]));
    const j = jsonl(dir);

    const err = await expectTokcapError(freezeRollout({ dir }, 'r'), 'conflict');
    expect(err.message).toBe("Model call id 'c1' has conflicting durable payloads for rollout 'r'");
    expect(err.pyClass).toBe('ValueError');
    expect(stateJson(dir)).toEqual({
      entry_digests: oldIndex,
      frozen: false,
      incomplete: true,
      indexed_size: L1.length,
      retired: false,
      snapshot_id: '',
      version: 2,
    });

    await expectTokcapError(freezeRollout({ dir }, 'r'), 'conflict');
    expect(stateJson(dir)).toMatchObject({
      version: 3,
      incomplete: true,
      frozen: false,
      indexed_size: L1.length,
      entry_digests: oldIndex,
    });
    expect(jsonl(dir)).toEqual(j);
    expect(tempStateFiles(dir)).toEqual([]);
  });

  it('a corrupt line inside the indexed prefix is not seen by reconciliation: the rollout is frozen, then the read fails', async () => {
    const dir = await writerStore();
    const j = jsonl(dir);
    j[0] = 0x5b; // '{' -> '[' : line 1 no longer parses, same length
    fs.writeFileSync(paths(dir).jsonl, j);
    await expectTokcapError(freezeRollout({ dir }, 'r'), 'corrupt');
    const s = stateJson(dir);
    expect(s).toMatchObject({ frozen: true, version: 3 });
    // A later freeze fails the same way without a further bump.
    await expectTokcapError(freezeRollout({ dir }, 'r'), 'corrupt');
    expect(stateJson(dir)).toEqual(s);
  });
});
