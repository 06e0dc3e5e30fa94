import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { freezeRollout } from '../../../src/ops/freeze.js';
import { readSnapshotReadOnly } from '../../../src/ops/read-snapshot.js';
import { retireRollouts } from '../../../src/ops/retire.js';
import { appendEntry, beginCall } from '../../../src/ops/writer.js';
import {
  canonicalLine,
  dirSnapshot,
  entry,
  expectTokcapError,
  paths,
  stateJson,
  useTempDirs,
} from '../../support/store.js';

const tmp = useTempDirs();
const C1 = entry('c1');
const C2 = entry('c2', { prompt: [1, 2, 3, 4, 5, 6], gen: [7], parent: 'c1' });
const L1 = canonicalLine(C1);
const L2 = canonicalLine(C2);
const L3 = canonicalLine(entry('c3', { prompt: [1, 2, 3, 4, 5, 6, 7, 8], gen: [9], parent: 'c2' }));

/** Writer store c1 (indexed), intents c1, c2, c3; then c2 appended by hand (unindexed tail). */
async function storeWithTail(): Promise<string> {
  const dir = tmp();
  for (const c of ['c1', 'c2', 'c3']) await beginCall({ dir }, 'r', c);
  await appendEntry({ dir }, C1);
  fs.appendFileSync(paths(dir).jsonl, L2);
  return dir;
}

const ids = (snap: { entries: { model_call_id: string }[] }) => snap.entries.map((e) => e.model_call_id);

describe('readSnapshotReadOnly', () => {
  it('sees what a freeze would (tail included) and changes nothing on disk, creating no lock file', async () => {
    const dir = await storeWithTail();
    fs.appendFileSync(paths(dir).jsonl, '\n{"model_call_id":"c3","gen');
    fs.unlinkSync(paths(dir).lock);
    const before = dirSnapshot(dir);
    const snap = await readSnapshotReadOnly({ dir }, 'r');
    expect(dirSnapshot(dir)).toEqual(before);
    expect(fs.existsSync(paths(dir).lock)).toBe(false);
    expect(ids(snap)).toEqual(['c1', 'c2']);
    expect(snap).toMatchObject({
      rolloutId: 'r',
      snapshotId: '',
      version: 1,
      incomplete: true,
      danglingIntents: ['c3'],
    });
    // The torn line starts after L1, L2 and the blank line.
    expect(snap.tornTailAt).toBe(L1.length + L2.length + 1);
  });

  it('leaves an existing lock file and every other file untouched (size, mtime, inode, bytes)', async () => {
    const dir = await storeWithTail();
    const before = dirSnapshot(dir);
    await readSnapshotReadOnly({ dir }, 'r');
    expect(dirSnapshot(dir)).toEqual(before);
  });

  it('agrees with a real freeze on entries and dangling intents', async () => {
    const dir = await storeWithTail();
    const preview = await readSnapshotReadOnly({ dir }, 'r');
    const frozen = await freezeRollout({ dir }, 'r');
    expect(ids(preview)).toEqual(ids(frozen));
    expect(preview.danglingIntents).toEqual(frozen.danglingIntents);
    expect(preview.incomplete).toBe(frozen.incomplete);
  });

  it('reports no torn tail for a clean store', async () => {
    const dir = await storeWithTail();
    expect((await readSnapshotReadOnly({ dir }, 'r')).tornTailAt).toBeUndefined();
  });

  it('throws conflict for a conflicting tail line, without bumping the version or setting incomplete', async () => {
    const dir = await storeWithTail();
    fs.appendFileSync(paths(dir).jsonl, canonicalLine(entry('c1', { createdAt: 1700000042 })));
    const before = dirSnapshot(dir);
    const err = await expectTokcapError(readSnapshotReadOnly({ dir }, 'r'), 'conflict');
    expect(err.message).toBe("Model call id 'c1' has conflicting durable payloads for rollout 'r'");
    expect(dirSnapshot(dir)).toEqual(before);
    expect(stateJson(dir)).toMatchObject({ version: 1, incomplete: false });
  });

  it('accepts an identical duplicate in the tail (a replay, not a conflict)', async () => {
    const dir = await storeWithTail();
    fs.appendFileSync(paths(dir).jsonl, L1);
    expect(ids(await readSnapshotReadOnly({ dir }, 'r'))).toEqual(['c1', 'c2', 'c1']);
  });

  it('throws corrupt for a corrupt middle line and index_offset for an index past the end', async () => {
    const dir = await storeWithTail();
    fs.appendFileSync(paths(dir).jsonl, Buffer.concat([Buffer.from('{oops\n'), L3]));
    await expectTokcapError(readSnapshotReadOnly({ dir }, 'r'), 'corrupt');

    const dir2 = await storeWithTail();
    fs.writeFileSync(paths(dir2).state, JSON.stringify({ ...stateJson(dir2), indexed_size: 10_000 }));
    await expectTokcapError(readSnapshotReadOnly({ dir: dir2 }, 'r'), 'index_offset');
  });

  it('refuses a retired rollout with kind retired', async () => {
    const dir = await storeWithTail();
    await retireRollouts({ dir }, ['r']);
    await expectTokcapError(readSnapshotReadOnly({ dir }, 'r'), 'retired');
  });

  it('works on an absent rollout without creating anything', async () => {
    const dir = tmp();
    const snap = await readSnapshotReadOnly({ dir }, 'r');
    expect(snap).toMatchObject({ entries: [], incomplete: false, version: 0, snapshotId: '' });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('throws corrupt, like freeze, when the unparseable final line lies inside the indexed prefix', async () => {
    const dir = tmp();
    await appendEntry({ dir }, C1);
    await appendEntry({ dir }, C2);
    const j = fs.readFileSync(paths(dir).jsonl);
    j[L1.length] = 0x5b; // line 2 "{" -> "[": same size, still indexed, no longer JSON
    fs.writeFileSync(paths(dir).jsonl, j);
    const copy = tmp();
    for (const n of fs.readdirSync(dir)) fs.copyFileSync(`${dir}/${n}`, `${copy}/${n}`);
    await expectTokcapError(freezeRollout({ dir: copy }, 'r'), 'corrupt');
    expect(fs.readFileSync(paths(copy).jsonl)).toEqual(j); // freeze did not truncate it
    await expectTokcapError(readSnapshotReadOnly({ dir }, 'r'), 'corrupt');
  });
});
