/**
 * The directory model next to a real python3 process holding one rollout's lock (fcntl.flock,
 * test/support/py_store.py `hold`): that rollout is waited for in the background, with its own
 * wait, and nothing else waits for it: the other rows, the load's end, a change to another
 * rollout, and the model's end.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { appendEntry } from '../../../src/ops/writer.js';
import { DEFAULT_READERS, DirectoryModel, type WatchReaders } from '../../../src/watch/directory-model.js';
import { holdLock, type SpawnRun } from '../../support/reliability.js';
import { entry } from '../../support/store.js';
import { makeStore, useTempDirs } from '../../support/watch.js';

const tempDir = useTempDirs();
const holders: SpawnRun[] = [];
const models: DirectoryModel[] = [];

afterEach(async () => {
  for (const m of models.splice(0)) m.dispose();
  for (const h of holders.splice(0)) {
    h.child.kill('SIGKILL');
    await h.done;
  }
});

/** A python3 process holding `id`'s lock for a minute: longer than any test here runs. */
async function holdFor60s(dir: string, id: string): Promise<SpawnRun> {
  const h = await holdLock(dir, id, 'ex', 3600);
  holders.push(h);
  return h;
}

/** Whether the holder still runs (so still holds the lock). */
function holding(h: SpawnRun): boolean {
  return h.child.exitCode === null && h.child.signalCode === null;
}

async function until(what: string, check: () => boolean, h: SpawnRun): Promise<void> {
  while (!check()) {
    if (!holding(h)) throw new Error(`the lock holder exited before ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function model(dir: string, lockWaitMs: number, readers?: Partial<WatchReaders>): DirectoryModel {
  const m = new DirectoryModel({ dir, lockWaitMs, readers });
  models.push(m);
  return m;
}

describe('DirectoryModel with one rollout locked by another process', () => {
  it('reads every other rollout and is ready while that one waits for its lock', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir, { rollouts: 5 });
    const [locked, other] = ids;
    const holder = await holdFor60s(dir, locked);
    const m = model(dir, 60_000);
    void m.rescan();
    await until('the load was ready', () => m.ready, holder);

    const s = m.snapshot();
    expect([...s.lockWaits.keys()]).toEqual([locked]);
    // Counted as waiting for its lock, not as a read in progress.
    expect(s.pending).toBe(0);
    expect(s.totals.loaded).toBe(ids.length - 1);
    for (const r of s.rows) {
      if (r.id === locked) expect(r.loaded).toBe(false);
      else expect([r.loaded, r.status, r.error]).toEqual([true, 'live', undefined]);
    }

    // A change to another rollout is read meanwhile.
    const calls = m.row(other)!.calls!;
    await appendEntry({ dir }, entry('call-late', { rollout: other }));
    await m.refresh([other]);
    expect(m.row(other)!.calls).toBe(calls + 1);
    expect(holding(holder)).toBe(true);
    expect(m.snapshot().lockWaits.has(locked)).toBe(true);

    // Released: the waiting read completes.
    holder.child.kill('SIGKILL');
    await m.idle();
    expect(m.row(locked)).toMatchObject({ loaded: true, status: 'live' });
    expect(m.row(locked)!.error).toBeUndefined();
    expect(m.snapshot().lockWaits.size).toBe(0);
  });

  it('says why the rollout could not be read when its wait runs out', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir, { rollouts: 3 });
    const holder = await holdFor60s(dir, ids[1]);
    const m = model(dir, 300);
    await m.rescan();
    await m.idle();
    expect(holding(holder)).toBe(true);
    const s = m.snapshot();
    expect(s.lockWaits.size).toBe(0);
    expect(m.row(ids[1])!.error).toMatchObject({
      kind: 'lock_timeout',
      message: `timed out after 300ms waiting for the lock of rollout ${ids[1]}`,
    });
    for (const id of [ids[0], ids[2]]) expect(m.row(id)!.error).toBeUndefined();
  });

  it('ends the wait when disposed, long before the holder lets go', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir, { rollouts: 2 });
    const holder = await holdFor60s(dir, ids[0]);
    const waits: Promise<unknown>[] = [];
    const m = model(dir, 60_000, {
      readBatch: (store, batch, options) => {
        const read = DEFAULT_READERS.readBatch(store, batch, options);
        if (options?.signal) waits.push(read);
        return read;
      },
    });
    void m.rescan();
    await until('the rollout waited for its lock', () => m.snapshot().lockWaits.size === 1, holder);
    expect(waits).toHaveLength(1);
    m.dispose();
    await waits[0];
    expect(holding(holder)).toBe(true);
  });
});
