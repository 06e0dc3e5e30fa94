import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { deleteRollouts } from '../../../src/ops/delete.js';
import { dropRollout } from '../../../src/ops/drop.js';
import { freezeRollout } from '../../../src/ops/freeze.js';
import { retireRollouts, retireRolloutsOutcome } from '../../../src/ops/retire.js';
import { appendEntry, beginCall, markIncomplete } from '../../../src/ops/writer.js';
import {
  dirSnapshot,
  entry,
  expectTokcapError,
  names,
  paths,
  setMtime,
  stateBytes,
  stateJson,
  tempStateFiles,
  useTempDirs,
} from '../../support/store.js';

const tmp = useTempDirs();

/** A live rollout with J, I and M (state: version 2, incomplete). */
async function liveRollout(dir: string, id: string): Promise<void> {
  await beginCall({ dir }, id, 'c1');
  await appendEntry({ dir }, entry('c1', { rollout: id }));
  await markIncomplete({ dir }, id, 'c2');
}

const fileSet = (dir: string, id: string) =>
  names(dir)
    .filter((n) => n.startsWith(id + '.tokens.'))
    .map((n) => n.slice(id.length));

describe('dropRollout (docs/format.md#drop, newer store)', () => {
  it('returns false and changes nothing for an unfrozen rollout', async () => {
    const dir = tmp();
    await liveRollout(dir, 'r');
    const listing = dirSnapshot(dir);
    expect(await dropRollout({ dir }, 'r', '', 2)).toBe(false);
    expect(dirSnapshot(dir)).toEqual(listing);
  });

  it('returns false and changes nothing for a wrong snapshot id or a stale version', async () => {
    const dir = tmp();
    await liveRollout(dir, 'r');
    const snap = await freezeRollout({ dir }, 'r');
    const listing = dirSnapshot(dir);
    expect(await dropRollout({ dir }, 'r', '0'.repeat(32), snap.version)).toBe(false);
    expect(await dropRollout({ dir }, 'r', snap.snapshotId, snap.version - 1)).toBe(false);
    expect(await dropRollout({ dir }, 'r', snap.snapshotId, snap.version + 1)).toBe(false);
    expect(dirSnapshot(dir)).toEqual(listing);
  });

  it('a mark_incomplete after freeze makes the consumed snapshot stale', async () => {
    const dir = tmp();
    await liveRollout(dir, 'r');
    const snap = await freezeRollout({ dir }, 'r');
    await markIncomplete({ dir }, 'r', 'late');
    expect(await dropRollout({ dir }, 'r', snap.snapshotId, snap.version)).toBe(false);
    expect(fs.existsSync(paths(dir).jsonl)).toBe(true);
  });

  it('with the current identity writes the fence, removes J, I, M, keeps S and L, and returns true again on repeat', async () => {
    const dir = tmp();
    await liveRollout(dir, 'r');
    const s0 = stateJson(dir);
    fs.writeFileSync(
      paths(dir).state,
      JSON.stringify({ ...s0, refusals: [{ code: 'x', created_at: 1.5, model_call_id: 'c7' }], extra_key: 'kept' }) +
        '\n',
    );
    const snap = await freezeRollout({ dir }, 'r');
    expect(await dropRollout({ dir }, 'r', snap.snapshotId, snap.version)).toBe(true);
    expect(names(dir)).toEqual(['r.tokens.lock', 'r.tokens.state.json']);
    expect(stateJson(dir)).toEqual({
      entry_digests: {},
      extra_key: 'kept',
      frozen: true,
      incomplete: true,
      indexed_size: 0,
      refusals: [],
      retired: true,
      snapshot_id: snap.snapshotId,
      version: snap.version,
    });
    const bytes = stateBytes(dir);
    expect(await dropRollout({ dir }, 'r', snap.snapshotId, snap.version)).toBe(true);
    expect(stateBytes(dir)).toBe(bytes);
    expect(names(dir)).toEqual(['r.tokens.lock', 'r.tokens.state.json']);
    await expectTokcapError(freezeRollout({ dir }, 'r'), 'retired');
    expect(tempStateFiles(dir)).toEqual([]);
  });

  it('returns false for an unknown rollout and creates no state', async () => {
    const dir = tmp();
    expect(await dropRollout({ dir }, 'r', '', 0)).toBe(false);
    expect(fs.existsSync(paths(dir).state)).toBe(false);
  });
});

describe('retireRollouts (docs/format.md#retire)', () => {
  it('validates the whole batch first: an invalid id anywhere changes nothing, not even for the valid ids before it', async () => {
    const dir = tmp();
    await liveRollout(dir, 'a');
    const listing = dirSnapshot(dir);
    const err = await expectTokcapError(retireRollouts({ dir }, ['a', 'fresh', 'bad id', 'b']), 'invalid_rollout_id');
    expect(err.message).toBe("Invalid rollout id: 'bad id'");
    expect(dirSnapshot(dir)).toEqual(listing);
  });

  it('classifies removed/absent by record files, drops duplicates, fences unknown ids and keeps lock files', async () => {
    const dir = tmp();
    await liveRollout(dir, 'live');
    await appendEntry({ dir }, entry('c1', { rollout: 'frozen' }));
    const fsnap = await freezeRollout({ dir }, 'frozen');
    await freezeRollout({ dir }, 'stateonly'); // S + L only, no records
    await markIncomplete({ dir }, 'markonly', 'x');
    fs.unlinkSync(paths(dir, 'markonly').state); // only M left (plus L)

    const r = await retireRollouts({ dir }, ['live', 'unknown', 'frozen', 'live', 'stateonly', 'markonly', 'unknown']);
    expect(r).toEqual({ removed: ['live', 'frozen', 'markonly'], absent: ['unknown', 'stateonly'], failed: [] });

    for (const id of ['live', 'unknown', 'frozen', 'stateonly', 'markonly']) {
      expect(fileSet(dir, id), id).toEqual(['.tokens.lock', '.tokens.state.json']);
      expect(stateJson(dir, id), id).toMatchObject({ retired: true, indexed_size: 0, entry_digests: {}, refusals: [] });
    }
    expect(stateJson(dir, 'unknown')).toEqual({
      entry_digests: {},
      frozen: false,
      incomplete: false,
      indexed_size: 0,
      refusals: [],
      retired: true,
      snapshot_id: '',
      version: 0,
    });
    // Retire changes no version and clears no flag or snapshot id.
    expect(stateJson(dir, 'frozen')).toMatchObject({
      frozen: true,
      snapshot_id: fsnap.snapshotId,
      version: fsnap.version,
    });
    expect(stateJson(dir, 'live')).toMatchObject({ frozen: false, incomplete: true, version: 2 });
    expect(tempStateFiles(dir)).toEqual([]);
  });

  it('does not rewrite an already-retired state (mtime and bytes unchanged) but still removes leftover records', async () => {
    const dir = tmp();
    await liveRollout(dir, 'r');
    await retireRollouts({ dir }, ['r']);
    setMtime(paths(dir).state, 1_600_000_000);
    const before = fs.statSync(paths(dir).state);
    const bytes = stateBytes(dir);
    // A crash between the phases left a record file beside the fence.
    fs.writeFileSync(paths(dir).intents, 'c9\n');
    const r = await retireRollouts({ dir }, ['r']);
    expect(r).toEqual({ removed: ['r'], absent: [], failed: [] });
    const after = fs.statSync(paths(dir).state);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(after.ino).toBe(before.ino);
    expect(stateBytes(dir)).toBe(bytes);
    expect(names(dir)).toEqual(['r.tokens.lock', 'r.tokens.state.json']);
    // Retiring again is a no-op.
    expect(await retireRollouts({ dir }, ['r'])).toEqual({ removed: [], absent: ['r'], failed: [] });
    expect(fs.statSync(paths(dir).state).mtimeMs).toBe(before.mtimeMs);
  });

  it('an empty batch does nothing', async () => {
    const dir = tmp();
    expect(await retireRollouts({ dir }, [])).toEqual({ removed: [], absent: [], failed: [] });
    expect(names(dir)).toEqual([]);
  });

  it("reports a malformed state as failed and keeps that rollout's records, while retiring the others", async () => {
    const dir = tmp();
    await liveRollout(dir, 'bad');
    await liveRollout(dir, 'good');
    fs.writeFileSync(paths(dir, 'bad').state, '[1, 2]\n');
    const r = await retireRolloutsOutcome({ dir }, ['bad', 'good']);
    expect(r.removed).toEqual(['good']);
    expect(r.absent).toEqual([]);
    expect(r.failed.map((f) => [f.rolloutId, f.error.kind])).toEqual([['bad', 'corrupt']]);
    expect(fileSet(dir, 'bad')).toEqual([
      '.tokens.incomplete',
      '.tokens.intents',
      '.tokens.jsonl',
      '.tokens.lock',
      '.tokens.state.json',
    ]);
    expect(fs.readFileSync(paths(dir, 'bad').state, 'utf8')).toBe('[1, 2]\n');
  });

  it('fails as the reference does (corrupt) on a malformed state, after retiring the rest of the batch', async () => {
    const dir = tmp();
    await liveRollout(dir, 'bad');
    await liveRollout(dir, 'good');
    fs.writeFileSync(paths(dir, 'bad').state, '"x"\n');
    await expect(retireRollouts({ dir }, ['bad', 'good'])).rejects.toMatchObject({
      kind: 'corrupt',
      message: expect.stringContaining('Invalid token-capture state for rollout bad'),
    });
    expect(fs.readFileSync(paths(dir, 'bad').state, 'utf8')).toBe('"x"\n');
    expect(fileSet(dir, 'bad')).toContain('.tokens.jsonl');
    expect(fileSet(dir, 'good')).toEqual(['.tokens.lock', '.tokens.state.json']);
  });
});

describe('deleteRollouts (docs/format.md#delete, newer store)', () => {
  it('removes J, I, M and S, keeps L; a tombstone-only id counts as absent', async () => {
    const dir = tmp();
    await liveRollout(dir, 'live');
    await liveRollout(dir, 'tomb');
    await retireRollouts({ dir }, ['tomb']);
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'x');
    const r = await deleteRollouts({ dir }, ['live', 'tomb', 'never', 'live']);
    expect(r).toEqual({ removed: ['live'], absent: ['tomb', 'never'], failed: [] });
    expect(names(dir)).toEqual(['live.tokens.lock', 'never.tokens.lock', 'notes.txt', 'tomb.tokens.lock']);
  });

  it('validates the whole batch before deleting anything', async () => {
    const dir = tmp();
    await liveRollout(dir, 'a');
    const listing = dirSnapshot(dir);
    await expectTokcapError(deleteRollouts({ dir }, ['a', '']), 'invalid_rollout_id');
    expect(dirSnapshot(dir)).toEqual(listing);
  });

  it('lets a deleted id start over from the default state', async () => {
    const dir = tmp();
    await liveRollout(dir, 'r');
    await retireRollouts({ dir }, ['r']);
    await deleteRollouts({ dir }, ['r']);
    const snap = await freezeRollout({ dir }, 'r');
    expect(snap).toMatchObject({ version: 1, entries: [], incomplete: false });
    expect(stateJson(dir)).toMatchObject({ retired: false, frozen: true, version: 1 });
  });
});
