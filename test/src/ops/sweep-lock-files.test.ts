/**
 * Concurrent or interrupted sweeps must not leave lock files that no command
 * removes, and sweep reports each removal as it happens.
 *
 * docs/format.md#lock-file-lifetime: only sweep unlinks a lock file (while holding it), and sweep
 * only visits rollouts that have a state file. A sweep that waited on a lock file another sweep
 * then unlinked, and created a fresh one to lock, left that file beside nothing: no sweep visits
 * it again. The other sweep here is a real python3 process doing docs/format.md#sweep step 5.
 */
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { retireRollouts } from '../../../src/ops/retire.js';
import { sweepRetired, type SweepCandidate } from '../../../src/ops/sweep.js';
import { appendEntry } from '../../../src/ops/writer.js';
import { holdLock, startProcess, startTokcap } from '../../support/reliability.js';
import { entry, names, paths, setMtime, useTempDirs } from '../../support/store.js';

const tmp = useTempDirs('tokcap-sweep-locks-');

async function tombstones(ids: string[]): Promise<string> {
  const dir = tmp();
  for (const id of ids) await appendEntry({ dir }, entry('c1', { rollout: id }));
  await retireRollouts({ dir }, ids);
  for (const id of ids) setMtime(paths(dir, id).state, 1_700_000_000);
  return dir;
}

/** A python3 "sweep" of one rollout: EX lock, print "locked", wait, unlink S and L, release. */
const PY_SWEEP = `
import fcntl, os, sys, time
state, lock = sys.argv[1], sys.argv[2]
f = open(lock, 'a+b')
fcntl.flock(f.fileno(), fcntl.LOCK_EX)
print('locked', flush=True)
time.sleep(float(sys.argv[3]))
os.unlink(state)
os.unlink(lock)
fcntl.flock(f.fileno(), fcntl.LOCK_UN)
f.close()
`;

describe('sweep and lock files', () => {
  it('a rollout swept by someone else while this sweep waited: no lock file is left behind', async () => {
    const dir = await tombstones(['r']);
    const p = paths(dir, 'r');
    const other = startProcess('python3', ['-c', PY_SWEEP, p.state, p.lock, '1.0']);
    await new Promise<void>((resolve) =>
      other.child.stdout!.on('data', (b: Buffer) => b.toString().includes('locked') && resolve()),
    );
    // This sweep saw a candidate, then waits on the lock the other sweep holds and unlinks.
    const r = await sweepRetired({ dir, lockWaitMs: 20_000 }, { olderThanSeconds: 0 });
    expect((await other.done).code).toBe(0);
    expect(r.removed).toEqual([]);
    expect(r.failed).toEqual([]);
    expect(names(dir)).toEqual([]);
    expect(fs.existsSync(p.lock)).toBe(false);
  });

  it('a tombstone that never had a lock file (a copy) is swept and leaves none', async () => {
    const dir = await tombstones(['r']);
    fs.unlinkSync(paths(dir, 'r').lock);
    const r = await sweepRetired({ dir }, { olderThanSeconds: 0 });
    expect(r.removed.map((c) => c.rolloutId)).toEqual(['r']);
    expect(names(dir)).toEqual([]);
  });

  it('reports each removal before it examines the next rollout', async () => {
    const dir = await tombstones(['a', 'b']);
    const seen: [string, string[]][] = [];
    const onRemoved = (c: SweepCandidate) => seen.push([c.rolloutId, names(dir)]);
    await sweepRetired({ dir }, { olderThanSeconds: 0, onRemoved });
    expect(seen).toEqual([
      ['a', ['b.tokens.lock', 'b.tokens.state.json']],
      ['b', []],
    ]);
  });

  it('an interrupted `tokcap sweep` has already printed a line for every rollout it removed', async () => {
    const dir = await tombstones(['a', 'b']);
    // b's lock is held: the sweep removes a, then waits on b until it is killed.
    const holder = await holdLock(dir, 'b', 'ex', 3600);
    const sweep = startTokcap(['sweep', dir, '--older-than', '0s', '--lock-wait', '1h'], { timeoutMs: 600_000 });
    let out = '';
    await new Promise<void>((resolve) => {
      sweep.child.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        if (out.includes('\n')) resolve();
      });
      // A sweep that printed only at the end would print nothing while it waits for b.
      void sweep.done.then(() => resolve());
    });
    sweep.child.kill('SIGTERM');
    const done = await sweep.done;
    holder.child.kill('SIGKILL');
    await holder.done;
    expect(done.signal).toBe('SIGTERM');
    expect(done.stdout).toMatch(/^removed a {2}retired tombstone/m);
    expect(done.stdout).not.toMatch(/removed b/);
    expect(fs.existsSync(paths(dir, 'a').state)).toBe(false);
    expect(fs.existsSync(paths(dir, 'b').state)).toBe(true);
  });
});
