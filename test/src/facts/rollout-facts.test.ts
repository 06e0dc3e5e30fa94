import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { rolloutFacts } from '../../../src/facts/rollout-facts.js';
import { freezeRollout } from '../../../src/ops/freeze.js';
import { appendEntry, beginCall, markIncomplete } from '../../../src/ops/writer.js';
import { canonicalLine, dirSnapshot, entry, paths, stateJson, useTempDirs } from '../../support/store.js';

const tmp = useTempDirs();
const C1 = entry('c1');
const C2 = entry('c2', { prompt: [1, 2, 3, 4, 5, 6], gen: [7], parent: 'c1' });
const L1 = canonicalLine(C1);
const L2 = canonicalLine(C2);
const L3 = canonicalLine(entry('c3', { prompt: [1, 2, 3, 4, 5, 6, 7, 8], gen: [9], parent: 'c2' }));

/** Writer store: intents c1..c4, entries c1, c2 indexed, c3 appended by hand (unindexed tail). */
async function storeWithTail(): Promise<string> {
  const dir = tmp();
  for (const c of ['c1', 'c2', 'c3', 'c4']) await beginCall({ dir }, 'r', c);
  await appendEntry({ dir }, C1);
  await appendEntry({ dir }, C2);
  fs.appendFileSync(paths(dir).jsonl, L3);
  return dir;
}

describe('rolloutFacts', () => {
  it('fast path counts from the index plus the tail (entries_source "index"); --deep scans every line ("scan")', async () => {
    const dir = await storeWithTail();
    const fast = await rolloutFacts({ dir }, 'r');
    const deep = await rolloutFacts({ dir }, 'r', { deep: true });
    expect(fast.entries_source).toBe('index');
    expect(deep.entries_source).toBe('scan');
    expect(fast).toMatchObject({
      files: ['.tokens.intents', '.tokens.jsonl', '.tokens.state.json'],
      frozen: false,
      retired: false,
      incomplete_flag: false,
      intents: ['c1', 'c2', 'c3', 'c4'],
      dangling_intents: ['c4'],
      version: 2,
      snapshot_id: '',
      entries: 3,
      indexed_size: L1.length + L2.length,
      file_size: L1.length + L2.length + L3.length,
      unindexed_bytes: L3.length,
      torn_tail: false,
      missing_final_newline: false,
      bad_lines: 0,
      errors: [],
    });
    expect(deep).toEqual({ ...fast, entries_source: 'scan' });
  });

  it('flags a torn final line and a missing final newline, in both modes', async () => {
    const dir = await storeWithTail();
    fs.appendFileSync(paths(dir).jsonl, '{"model_call_id":"c4","gen');
    for (const deep of [false, true]) {
      const f = await rolloutFacts({ dir }, 'r', { deep });
      expect(f, `deep=${deep}`).toMatchObject({
        torn_tail: true,
        missing_final_newline: true,
        entries: 3,
        bad_lines: 0,
      });
    }
  });

  it('a parseable final line without LF is not torn, but is missing its final newline', async () => {
    const dir = await storeWithTail();
    fs.appendFileSync(paths(dir).jsonl, canonicalLine(entry('c4', { prompt: [7], gen: [8] })).subarray(0, -1));
    for (const deep of [false, true]) {
      const f = await rolloutFacts({ dir }, 'r', { deep });
      expect(f, `deep=${deep}`).toMatchObject({
        torn_tail: false,
        missing_final_newline: true,
        entries: 4,
        dangling_intents: [],
      });
    }
  });

  it('flags a missing final newline even when that last line is already indexed (fast path)', async () => {
    const dir = await storeWithTail();
    fs.appendFileSync(paths(dir).jsonl, canonicalLine(entry('c4', { prompt: [7], gen: [8] })).subarray(0, -1));
    await freezeRollout({ dir }, 'r');
    expect(stateJson(dir).indexed_size).toBe(fs.statSync(paths(dir).jsonl).size);
    const deep = await rolloutFacts({ dir }, 'r', { deep: true });
    expect(deep.missing_final_newline).toBe(true);
    const fast = await rolloutFacts({ dir }, 'r');
    expect(fast.entries_source).toBe('index');
    expect(fast.missing_final_newline).toBe(true);
  });

  it('reads nothing into a lock file: no lock file is created and nothing on disk changes', async () => {
    const dir = await storeWithTail();
    fs.appendFileSync(paths(dir).jsonl, '{"torn');
    fs.unlinkSync(paths(dir).lock);
    const before = dirSnapshot(dir);
    await rolloutFacts({ dir }, 'r');
    await rolloutFacts({ dir }, 'r', { deep: true });
    expect(dirSnapshot(dir)).toEqual(before);
    expect(fs.existsSync(paths(dir).lock)).toBe(false);
  });

  it('--deep counts every valid line, duplicates included', async () => {
    const dir = await storeWithTail();
    fs.appendFileSync(paths(dir).jsonl, L1);
    await freezeRollout({ dir }, 'r');
    expect((await rolloutFacts({ dir }, 'r', { deep: true })).entries).toBe(4);
  });

  it('falls back to a scan for a legacy state and reports indexed_size null', async () => {
    const dir = await storeWithTail();
    fs.writeFileSync(paths(dir).state, '{"version":5,"frozen":true,"snapshot_id":"abc"}\n');
    const f = await rolloutFacts({ dir }, 'r');
    expect(f).toMatchObject({
      entries_source: 'scan',
      entries: 3,
      indexed_size: null,
      version: 5,
      frozen: true,
      snapshot_id: 'abc',
    });
  });

  it('reports state, markers and an unreadable state as facts, not exceptions', async () => {
    const dir = tmp();
    await markIncomplete({ dir }, 'r', 'c1');
    await markIncomplete({ dir }, 'r', '');
    expect(await rolloutFacts({ dir }, 'r')).toMatchObject({
      files: ['.tokens.incomplete', '.tokens.state.json'],
      incomplete_flag: true,
      incomplete_marker_calls: ['c1', ''],
      version: 2,
      entries: 0,
      indexed_size: 0,
      file_size: 0,
    });
    fs.writeFileSync(paths(dir).state, '[]');
    const f = await rolloutFacts({ dir }, 'r');
    expect(f).toMatchObject({ incomplete_flag: false, version: 0, indexed_size: null, snapshot_id: '' });
    expect(f.errors.map((e) => e.kind)).toEqual(['corrupt']);
  });

  it('gives indexed_size 0 for a rollout without a state file', async () => {
    const dir = tmp();
    fs.writeFileSync(paths(dir).jsonl, L1);
    expect(await rolloutFacts({ dir }, 'r')).toMatchObject({
      files: ['.tokens.jsonl'],
      indexed_size: 0,
      entries: 1,
      entries_source: 'scan',
      file_size: L1.length,
    });
  });

  it('counts the whole JSONL as unindexed when there is no state file (indexed_size 0)', async () => {
    const dir = tmp();
    fs.writeFileSync(paths(dir).jsonl, L1);
    const f = await rolloutFacts({ dir }, 'r');
    expect(f.indexed_size).toBe(0);
    expect(f.unindexed_bytes).toBe(L1.length);
  });
});
