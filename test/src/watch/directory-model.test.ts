import * as fs from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendEntry, beginCall, markIncomplete } from '../../../src/ops/writer.js';
import { DEFAULT_READERS, DirectoryModel, type WatchReaders } from '../../../src/watch/directory-model.js';
import { directoryTotals, visibleRows, NO_FILTER, VisibleRowsCache } from '../../../src/watch/rows.js';
import { watchSnapshotJson } from '../../../src/watch/snapshot-json.js';
import { listing, makeStore, useTempDirs } from '../../support/watch.js';
import { entry } from '../../support/store.js';

const tempDir = useTempDirs();

/** Counts the rollouts each batch read asks for (the readers' own reads are real). */
function countingReaders() {
  const facts: string[] = [];
  const readers: Partial<WatchReaders> = {
    readBatch: async (store, ids, options) => {
      facts.push(...ids);
      return DEFAULT_READERS.readBatch(store, ids, options);
    },
  };
  return { readers, facts };
}

/**
 * Counts the files opened per path, in this process, through the real `fs` (Node's built-in
 * module, patched and synced into its ES module bindings): each rollout lock taken opens the
 * lock file once.
 */
function countOpens() {
  const require = createRequire(import.meta.url);
  const fsCjs = require('node:fs') as typeof fs;
  const original = fsCjs.openSync;
  const opened = new Map<string, number>();
  fsCjs.openSync = ((p: fs.PathLike, ...rest: unknown[]) => {
    const key = path.basename(String(p));
    opened.set(key, (opened.get(key) ?? 0) + 1);
    return (original as (...a: unknown[]) => number)(p, ...rest);
  }) as typeof fs.openSync;
  syncBuiltinESMExports();
  return {
    count: (name: string) => opened.get(name) ?? 0,
    names: () => [...opened.keys()],
    reset: () => opened.clear(),
    restore: () => {
      fsCjs.openSync = original;
      syncBuiltinESMExports();
    },
  };
}

async function loaded(model: DirectoryModel) {
  await model.rescan();
  await model.idle();
  return model.snapshot();
}

describe('DirectoryModel', () => {
  it('derives one row per rollout with its state, counts and first mask cause', async () => {
    const dir = tempDir();
    await makeStore(dir);
    const snap = await loaded(new DirectoryModel({ dir }));
    const byId = Object.fromEntries(snap.rows.map((r) => [r.id, r]));
    expect(Object.keys(byId).sort()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
    expect(snap.ready).toBe(true);
    expect(snap.pending).toBe(0);
    // The eight shapes of the generator, in order.
    expect(byId.r0).toMatchObject({
      status: 'live',
      conditions: [],
      verdict: 'trainable',
      calls: 3,
      wouldMask: false,
      causes: [],
    });
    expect(byId.r1).toMatchObject({
      status: 'live',
      conditions: ['dangling'],
      verdict: 'masked',
      danglingIntents: ['call-003'],
      wouldMask: true,
    });
    expect(byId.r1.causes[0].code).toBe('dangling_intents');
    expect(byId.r2).toMatchObject({
      status: 'live',
      conditions: ['dangling', 'incomplete'],
      incompleteMarkers: ['call-001'],
      incompleteFlag: true,
      wouldMask: true,
    });
    expect(byId.r2.causes.map((c) => c.code)).toEqual(['dangling_intents', 'capture_incomplete']);
    expect(byId.r3).toMatchObject({ status: 'live', calls: 4, wouldMask: true });
    expect(byId.r3.causes[0].code).toBe('unresolved_retries');
    expect(byId.r4.causes.map((c) => c.code)).toContain('unresolved_parent_calls');
    expect(byId.r5).toMatchObject({ status: 'frozen', frozen: true, wouldMask: false });
    expect(byId.r5.snapshotId).not.toBe('');
    // A tombstone's preview is the reference's failed build: masked, could not be built (as `build` says).
    expect(byId.r6).toMatchObject({
      status: 'retired',
      conditions: [],
      retired: true,
      verdict: 'masked',
      unbuilt: true,
      wouldMask: true,
    });
    expect(byId.r7).toMatchObject({
      status: 'live',
      conditions: ['dangling', 'torn_tail', 'unindexed_tail'],
      tornTail: true,
      danglingIntents: ['call-torn'],
    });
    expect(snap.totals).toMatchObject({ rollouts: 8, loaded: 8 });
    expect(snap.totals.summary.byStatus).toEqual({ live: 6, frozen: 1, retired: 1, unavailable: 0 });
    expect(snap.totals.summary.byCondition).toMatchObject({ torn_tail: 1, dangling: 3, incomplete: 1 });
    for (const r of snap.rows) expect(r.changedAt).toBeNull();
  });

  it('is read-only: no lock file created, nothing written, the torn tail left in place', async () => {
    const dir = tempDir();
    await makeStore(dir);
    const before = listing(dir);
    const model = new DirectoryModel({ dir });
    await loaded(model);
    await model.refresh(['r0', 'r7'], { force: true });
    expect(listing(dir)).toEqual(before);
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.lock'))).toEqual([]);
  });

  it('re-reads only rollouts whose files changed, and only the ones named', async () => {
    const dir = tempDir();
    await makeStore(dir);
    const { readers, facts } = countingReaders();
    const model = new DirectoryModel({ dir, readers });
    await loaded(model);
    expect(facts.length).toBe(8);

    // Nothing changed: a rescan stats, reads nothing.
    facts.length = 0;
    await model.rescan();
    await model.idle();
    expect(facts).toEqual([]);

    // A writer adds an intent to r0: a rescan reads r0 only.
    await beginCall({ dir }, 'r0', 'call-new');
    await model.rescan();
    await model.idle();
    expect(facts).toEqual(['r0']);
    const r0 = model.row('r0')!;
    expect(r0.danglingIntents).toEqual(['call-new']);
    expect(r0.changedAt).not.toBeNull();
    expect(r0.seq).toBe(2);
    // Once: the new row carries the signature of what it was read from.
    facts.length = 0;
    await model.rescan();
    await model.idle();
    expect(facts).toEqual([]);
    expect(model.row('r0')!.seq).toBe(2);

    // Named refresh: only the named rollout, and only if it changed.
    facts.length = 0;
    await model.refresh(['r1']);
    expect(facts).toEqual([]);
    await markIncomplete({ dir }, 'r1', '');
    await model.refresh(['r1']);
    expect(facts).toEqual(['r1']);
    expect(model.row('r1')!.incompleteMarkers).toEqual(['']);
    expect(model.row('r1')!.incompleteFlag).toBe(true);
  });

  it('reads each rollout once: one lock taken and one open of each file, for the facts and the preview together', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir, { rollouts: 16, mix: true });
    // Lock files exist, as next to a running writer: each lock taken opens one.
    for (const id of ids) fs.writeFileSync(path.join(dir, `${id}.tokens.lock`), '');
    const opens = countOpens();
    try {
      const model = new DirectoryModel({ dir });
      const snap = await loaded(model);
      expect(snap.rows.filter((r) => r.loaded)).toHaveLength(16);
      for (const id of ids) {
        expect(opens.count(`${id}.tokens.lock`), id).toBe(1);
        for (const kind of ['jsonl', 'state.json', 'intents']) {
          if (fs.existsSync(path.join(dir, `${id}.tokens.${kind}`)))
            expect(opens.count(`${id}.tokens.${kind}`), `${id} ${kind}`).toBe(1);
        }
      }
      // The second shape of the generator has a dangling intent: its verdict came from that copy.
      expect(snap.rows.find((r) => r.id === ids[1])!.wouldMask).toBe(true);

      // After the load, a change to one rollout costs that rollout's read, once.
      const r = ids[3];
      await beginCall({ dir }, r, 'call-new');
      opens.reset();
      await model.refresh([r]);
      expect(opens.names().sort()).toEqual([
        `${r}.tokens.intents`,
        `${r}.tokens.jsonl`,
        `${r}.tokens.lock`,
        `${r}.tokens.state.json`,
      ]);
      expect(opens.count(`${r}.tokens.lock`)).toBe(1);
      expect(model.row(r)!.danglingIntents).toContain('call-new');
      model.dispose();
    } finally {
      opens.restore();
    }
  });

  it('tells its listeners when a read finishes, so the last snapshot counts nothing in flight', async () => {
    const dir = tempDir();
    await makeStore(dir);
    const model = new DirectoryModel({ dir });
    await loaded(model);
    const seen: number[] = [];
    model.subscribe(() => seen.push(model.snapshot().pending));
    await beginCall({ dir }, 'r0', 'call-new');
    await model.refresh(['r0']);
    await model.idle();
    expect(model.row('r0')!.danglingIntents).toEqual(['call-new']);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[seen.length - 1]).toBe(0);
  });

  it('adds new rollouts and drops vanished ones', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 2, mix: false });
    const model = new DirectoryModel({ dir });
    await loaded(model);
    await appendEntry({ dir }, entry('c0', { rollout: 'fresh' }));
    await model.refresh(['fresh']);
    expect(model.row('fresh')).toMatchObject({ loaded: true, calls: 1, status: 'live' });
    for (const n of fs.readdirSync(dir)) if (n.startsWith('r0.')) fs.rmSync(path.join(dir, n));
    await model.refresh(['r0']);
    expect(model.row('r0')).toBeUndefined();
    await model.rescan();
    await model.idle();
    expect(
      model
        .snapshot()
        .rows.map((r) => r.id)
        .sort(),
    ).toEqual(['fresh', 'r1']);
  });

  it('shows an unreadable rollout with its error instead of failing', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 2, mix: false });
    // A state "file" that is a directory cannot be read.
    fs.mkdirSync(path.join(dir, 'broken.tokens.state.json'));
    fs.writeFileSync(path.join(dir, 'broken.tokens.intents'), 'c1\n');
    const snap = await loaded(new DirectoryModel({ dir }));
    const broken = snap.rows.find((r) => r.id === 'broken')!;
    expect(broken.loaded).toBe(true);
    expect(broken.error?.message).toMatch(/directory/);
    expect(snap.totals.summary.byStatus.unavailable).toBe(1);
    expect(broken).toMatchObject({ status: 'unavailable', conditions: [], verdict: 'unavailable', wouldMask: null });
    expect(snap.rows.filter((r) => r.error)).toHaveLength(1);
    const json = watchSnapshotJson(snap);
    expect(json.rollouts.broken.error).toEqual({ kind: broken.error!.kind, message: broken.error!.message });
  });

  it('keeps reading when a reader throws, and reports the directory error', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 3, mix: false });
    const model = new DirectoryModel({
      dir,
      batchSize: 1,
      readers: {
        readBatch: async (store, ids) => {
          if (ids.includes('r1')) throw new Error('boom');
          return DEFAULT_READERS.readBatch(store, ids);
        },
      },
    });
    const snap = await loaded(model);
    expect(snap.rows.find((r) => r.id === 'r1')!.error).toEqual({ kind: 'other', message: 'boom' });
    expect(snap.rows.filter((r) => !r.error).map((r) => r.wouldMask)).toEqual([false, false]);

    const gone = new DirectoryModel({ dir: path.join(dir, 'missing') });
    const s = await loaded(gone);
    expect(s.scanError).toMatchObject({
      kind: 'io',
      message: expect.stringMatching(/ENOENT/),
      system: { code: 'ENOENT', syscall: 'opendir' },
    });
    expect(s.rows).toEqual([]);
  });

  it('reads rollouts named by events ahead of a long backlog', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 30, calls: 2, mix: false });
    const { readers, facts } = countingReaders();
    const model = new DirectoryModel({ dir, readers, concurrency: 1, batchSize: 1 });
    await model.rescan(); // queued, one read at a time
    expect(model.busy).toBe(true);
    await model.refresh(['r29', 'r03'], { force: true });
    // Both named ids were read long before the backlog drained.
    expect(facts.indexOf('r03')).toBeLessThan(6);
    await model.idle();
    expect(model.busy).toBe(false);
    expect(new Set(facts).size).toBe(30);
  });

  it('reads the rows a view shows next when asked, and nothing it was not going to read', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 30, calls: 2, mix: false });
    const { readers, facts } = countingReaders();
    const model = new DirectoryModel({ dir, readers, concurrency: 1, batchSize: 2, firstBatch: 2 });
    await model.rescan(); // queued, one batch at a time
    expect(model.busy).toBe(true);
    // The view shows the rows at the end of the load's order (the oldest).
    const waiting = visibleRows(model.snapshot().rows, NO_FILTER, 'recent').filter((r) => !r.loaded);
    const shown = waiting.slice(-3).map((r) => r.id);
    model.readSoon([...shown, 'not-a-rollout']);
    const readBefore = facts.length;
    await model.idle();
    // Right after the batch in flight when asked (without it: the last three read).
    expect(facts.slice(readBefore, readBefore + 4)).toEqual(expect.arrayContaining(shown));
    expect(facts.length).toBe(30);
    expect(new Set(facts).size).toBe(30);
  });

  it("keeps its totals and each snapshot's delta true to its rows as rollouts are read, change and go", async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 24 });
    const model = new DirectoryModel({ dir, batchSize: 3, concurrency: 1 });
    const cache = new VisibleRowsCache();
    let deltas = 0;
    // Snapshots taken while the load runs (each listener call), as a view takes them.
    const check = () => {
      const snap = model.snapshot();
      if (snap.delta) deltas++;
      expect(snap.totals).toEqual(directoryTotals(snap.rows, snap.invalidNames.length, snap.tempStateFiles.length));
      expect([...cache.rows(snap, NO_FILTER, 'recent')]).toEqual(visibleRows(snap.rows, NO_FILTER, 'recent'));
    };
    model.subscribe(check);
    await model.rescan();
    await model.idle();
    check();
    await beginCall({ dir }, 'r0', 'call-new');
    await appendEntry({ dir }, entry('call-x', { rollout: 'r8' }));
    for (const n of fs.readdirSync(dir)) if (n.startsWith('r5.')) fs.rmSync(path.join(dir, n));
    fs.writeFileSync(path.join(dir, 'new1.tokens.intents'), 'c9\n');
    await model.rescan();
    await model.idle();
    check();
    expect(model.row('r5')).toBeUndefined();
    expect(model.row('new1')?.danglingIntents).toEqual(['c9']);
    // The view's rows came from deltas, not only from full sorts.
    expect(deltas).toBeGreaterThan(5);
  });

  it('gives each snapshot its own rows when they are asked for late, past many snapshots with deltas', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir, { rollouts: 12 });
    const model = new DirectoryModel({ dir });
    await loaded(model);
    const gone = ids[5];
    const candidates = [...ids, 'n1', 'n2'];
    const rowsNow = () => new Map(candidates.flatMap((id) => (model.row(id) ? [[id, model.row(id)]] : [])));
    const taken: { snap: ReturnType<DirectoryModel['snapshot']>; expected: ReturnType<typeof rowsNow> }[] = [];
    const take = () => taken.push({ snap: model.snapshot(), expected: rowsNow() });
    take();
    // Past the bound of a chain of snapshots whose rows are not made (64), with rows changed, added and removed.
    for (let k = 0; k < 150; k++) {
      if (k === 40) await appendEntry({ dir }, entry('call-x', { rollout: 'n1' }));
      if (k === 90) for (const n of fs.readdirSync(dir)) if (n.startsWith(`${gone}.`)) fs.rmSync(path.join(dir, n));
      if (k === 120) await appendEntry({ dir }, entry('call-y', { rollout: 'n2' }));
      await model.refresh([ids[k % 12], 'n1', 'n2', gone], { force: true });
      take();
    }
    expect(taken.filter((t) => t.snap.delta).length).toBeGreaterThan(140);
    // The latest first, then the others from the oldest: each one's rows are as the model had them then.
    for (const { snap, expected } of [taken.at(-1)!, ...taken]) {
      expect(snap.rows.length).toBe(expected.size);
      expect(new Map(snap.rows.map((r) => [r.id, r]))).toEqual(expected);
      for (const r of snap.rows) expect(r).toBe(expected.get(r.id));
    }
    expect(taken.at(-1)!.expected.has(gone)).toBe(false);
    expect(taken[0].expected.has(gone)).toBe(true);
    expect(taken.at(-1)!.expected.has('n2')).toBe(true);
  });

  it('sorts recent first by default and filters', async () => {
    const dir = tempDir();
    await makeStore(dir);
    const snap = await loaded(new DirectoryModel({ dir }));
    const recent = visibleRows(snap.rows, NO_FILTER, 'recent').map((r) => r.id);
    expect(recent[0]).toBe('r7');
    expect(recent.at(-1)).toBe('r0');
    expect(visibleRows(snap.rows, { ...NO_FILTER, masked: true }, 'id').map((r) => r.id)).toEqual([
      'r1',
      'r2',
      'r3',
      'r4',
      'r6',
      'r7',
    ]);
    expect(visibleRows(snap.rows, { ...NO_FILTER, dangling: true }, 'id').map((r) => r.id)).toEqual(['r1', 'r2', 'r7']);
    expect(visibleRows(snap.rows, { ...NO_FILTER, incomplete: true }, 'id').map((r) => r.id)).toEqual(['r2']);
    expect(visibleRows(snap.rows, { ...NO_FILTER, search: 'R3' }, 'id').map((r) => r.id)).toEqual(['r3']);
    expect(visibleRows(snap.rows, NO_FILTER, 'state')[0].id).toBe('r7');
  });
});
