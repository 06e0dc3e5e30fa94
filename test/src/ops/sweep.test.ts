import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freezeRollout } from '../../../src/ops/freeze.js';
import { retireRollouts } from '../../../src/ops/retire.js';
import { sweepRetired } from '../../../src/ops/sweep.js';
import { appendEntry, beginCall } from '../../../src/ops/writer.js';
import { dirSnapshot, entry, names, paths, setMtime, useTempDirs } from '../../support/store.js';

const tmp = useTempDirs();

// The sweep clock: now = T0 + 1000 s, older_than = 100 s, so the cutoff is exactly T0 + 900.
const T0 = 1_700_000_000;
const NOW = () => T0 + 1000;
const OLD = T0 + 900; // mtime == cutoff: old enough
const YOUNG = T0 + 901; // one second too young

/**
 * A directory with:
 *  old      retired tombstone at the cutoff, with a leftover I and M beside the fence
 *  .dot     retired tombstone (id starting with a dot), older than the cutoff
 *  young    retired tombstone one second younger than the cutoff
 *  withj    retired, old, but its J reappeared (retired-with-records)
 *  live     not retired, old, with J
 *  frozen   frozen, not retired, old
 *  "bad id" a retired-looking state file with an invalid id, old
 *  notes.txt, .tokens-state-abcd1234  foreign / temp files
 */
async function sweepFixture(): Promise<string> {
  const dir = tmp();
  for (const id of ['old', '.dot', 'young', 'withj', 'live', 'frozen']) {
    await beginCall({ dir }, id, 'c1');
    await appendEntry({ dir }, entry('c1', { rollout: id }));
  }
  await freezeRollout({ dir }, 'frozen');
  await retireRollouts({ dir }, ['old', '.dot', 'young', 'withj']);
  fs.writeFileSync(paths(dir, 'old').intents, 'c2\n');
  fs.writeFileSync(paths(dir, 'old').incomplete, 'c2\n');
  fs.writeFileSync(paths(dir, 'withj').jsonl, 'left over\n');
  fs.writeFileSync(path.join(dir, 'bad id.tokens.state.json'), '{"retired":true}\n');
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'keep');
  fs.writeFileSync(path.join(dir, '.tokens-state-abcd1234'), '{}');
  setMtime(paths(dir, 'old').state, OLD);
  setMtime(paths(dir, '.dot').state, OLD - 5000);
  setMtime(paths(dir, 'young').state, YOUNG);
  for (const id of ['withj', 'live', 'frozen']) setMtime(paths(dir, id).state, OLD - 1);
  setMtime(path.join(dir, 'bad id.tokens.state.json'), OLD - 1);
  return dir;
}

const ids = (r: { removed: { rolloutId: string }[] }) => r.removed.map((c) => c.rolloutId);

describe('sweepRetired (docs/format.md#sweep with the tokcap safety rule)', () => {
  it('removes only retired rollouts whose state mtime is at or before the cutoff: S, I, M and L', async () => {
    const dir = await sweepFixture();
    const before = dirSnapshot(dir);
    const r = await sweepRetired({ dir }, { olderThanSeconds: 100, now: NOW });
    expect(ids(r)).toEqual(['.dot', 'old']);
    expect(r.skippedWithRecords).toEqual(['withj']);
    expect(r.failed).toEqual([]);
    expect(r.dryRun).toBe(false);
    expect(r.removed.find((c) => c.rolloutId === 'old')!.ageSeconds).toBe(100);
    expect(r.removed.find((c) => c.rolloutId === '.dot')!.ageSeconds).toBe(5100);

    const gone = Object.keys(before).filter((n) => !names(dir).includes(n));
    expect(gone.sort()).toEqual([
      '.dot.tokens.lock',
      '.dot.tokens.state.json',
      'old.tokens.incomplete',
      'old.tokens.intents',
      'old.tokens.lock',
      'old.tokens.state.json',
    ]);
    // Everything else is byte-for-byte untouched (J never goes; skipped rollouts keep their fence).
    const after = dirSnapshot(dir);
    // Lock files of the rollouts it only examined are opened and locked, never written.
    for (const [name, snap] of Object.entries(after)) expect(snap, name).toEqual(before[name]);
    expect(fs.readFileSync(paths(dir, 'withj').jsonl, 'utf8')).toBe('left over\n');
  });

  it('dry run reports the same verdicts, changes nothing and creates no lock file', async () => {
    const dir = await sweepFixture();
    fs.unlinkSync(paths(dir, 'old').lock);
    fs.unlinkSync(paths(dir, 'live').lock);
    const before = dirSnapshot(dir);
    const r = await sweepRetired({ dir }, { olderThanSeconds: 100, now: NOW, dryRun: true });
    expect(ids(r)).toEqual(['.dot', 'old']);
    expect(r.skippedWithRecords).toEqual(['withj']);
    expect(r.dryRun).toBe(true);
    expect(dirSnapshot(dir)).toEqual(before);
  });

  it('is idempotent: a second run removes nothing and changes nothing', async () => {
    const dir = await sweepFixture();
    await sweepRetired({ dir }, { olderThanSeconds: 100, now: NOW });
    const before = dirSnapshot(dir);
    const r = await sweepRetired({ dir }, { olderThanSeconds: 100, now: NOW });
    expect(ids(r)).toEqual([]);
    expect(r.skippedWithRecords).toEqual(['withj']);
    const after = dirSnapshot(dir);
    expect(Object.keys(after)).toEqual(Object.keys(before));
    expect(after).toEqual(before);
  });

  it('ignores invalid ids, foreign and temporary files, and rollouts without a state file', async () => {
    const dir = await sweepFixture();
    fs.writeFileSync(path.join(dir, 'nostate.tokens.intents'), 'c1\n');
    await sweepRetired({ dir }, { olderThanSeconds: 100, now: NOW });
    expect(fs.readFileSync(path.join(dir, 'bad id.tokens.state.json'), 'utf8')).toBe('{"retired":true}\n');
    expect(fs.existsSync(path.join(dir, 'notes.txt'))).toBe(true);
    expect(fs.existsSync(path.join(dir, '.tokens-state-abcd1234'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'nostate.tokens.intents'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'nostate.tokens.lock'))).toBe(false);
  });

  it('with a large enough age sweeps nothing; with 0 it also sweeps the young tombstone', async () => {
    const dir = await sweepFixture();
    expect(ids(await sweepRetired({ dir }, { olderThanSeconds: 100_000, now: NOW, dryRun: true }))).toEqual([]);
    expect(ids(await sweepRetired({ dir }, { olderThanSeconds: 0, now: NOW }))).toEqual(['.dot', 'old', 'young']);
    expect(names(dir).filter((n) => n.startsWith('young.'))).toEqual([]);
  });

  it('reports an unreadable old state in failed and goes on with the others', async () => {
    const dir = await sweepFixture();
    fs.writeFileSync(paths(dir, 'broken').state, '{not json');
    setMtime(paths(dir, 'broken').state, OLD - 1);
    const r = await sweepRetired({ dir }, { olderThanSeconds: 100, now: NOW });
    expect(r.failed.map((f) => [f.rolloutId, f.error.kind])).toEqual([['broken', 'corrupt']]);
    expect(ids(r)).toEqual(['.dot', 'old']);
    expect(fs.existsSync(paths(dir, 'broken').state)).toBe(true);
  });
});
