/**
 * Batch row reads with a worker thread: the same rows as in this thread and as the one reading
 * of each rollout on its own (`readRollout`), nothing written, and a transparent
 * fallback when the worker cannot run. The worker is the compiled one (dist/), as the binary
 * uses it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { rolloutPaths } from '../../../src/layout/file-names.js';
import { scanDirectory } from '../../../src/layout/scan-directory.js';
import type { withRolloutLock as withRolloutLockFromSources } from '../../../src/lock/rollout-lock.js';
import { DEFAULT_READERS, DirectoryModel, type DirectorySnapshot } from '../../../src/watch/directory-model.js';
import { NO_FILTER, visibleRows, type RolloutRow } from '../../../src/watch/rows.js';
import { readRollout } from '../../../src/rollout-read/read-rollout.js';
import { rowRead } from '../../../src/rollout-read/row-read.js';
import { rowOf, type RowReadOutcome } from '../../../src/watch/row-batch.js';
import { createWorkerReaders as createFromSources } from '../../../src/watch/worker-readers.js';
import { ROOT, ensureBuilt } from '../../support/cli.js';
import { listing, makeStore, useTempDirs } from '../../support/watch.js';

const tempDir = useTempDirs();

function rowIn(outcome: RowReadOutcome) {
  if (!outcome.ok || 'gone' in outcome) throw new Error(`no row: ${JSON.stringify(outcome)}`);
  return outcome.row;
}
type Factory = typeof createFromSources;
let createCompiled: Factory;
// The compiled lock module: the one the compiled readers take their turns with, as in the binary.
let compiledLock: typeof withRolloutLockFromSources;

beforeAll(async () => {
  await ensureBuilt();
  const compiled = (file: string) => import(pathToFileURL(path.join(ROOT, 'dist', 'src', file)).href);
  createCompiled = ((await compiled('watch/worker-readers.js')) as { createWorkerReaders: Factory })
    .createWorkerReaders;
  compiledLock = ((await compiled('lock/rollout-lock.js')) as { withRolloutLock: typeof withRolloutLockFromSources })
    .withRolloutLock;
});

describe('worker readers', () => {
  it('read every shape in a worker thread, exactly as in this thread, changing nothing', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir);
    const before = listing(dir);
    const readers = createCompiled();
    try {
      const inWorker = await readers.readBatch({ dir }, ids);
      expect(readers.inWorker).toBe(true);
      expect(inWorker).toEqual(await DEFAULT_READERS.readBatch({ dir }, ids));
      for (let i = 0; i < ids.length; i++) {
        // The one reading in this thread, copying the rollout itself.
        const direct = rowOf(ids[i], rowRead(await readRollout({ dir }, ids[i])));
        expect(rowIn(inWorker[i]), ids[i]).toEqual(direct);
      }
    } finally {
      await readers.close();
    }
    expect(listing(dir)).toEqual(before);
  });

  it('take no rollout lock in the worker: while this thread holds one, a worker read of another rollout waits for it', async () => {
    // docs/format.md#lock-mechanism: the process holds one rollout lock at a time. The detail view reads in this
    // thread while the worker reads rows, so the worker's copies are made here, in turn.
    const dir = tempDir();
    const ids = await makeStore(dir, { rollouts: 2, mix: false });
    const [a, b] = ids;
    const readers = createCompiled();
    try {
      await readers.readBatch({ dir }, [a]);
      expect(readers.inWorker).toBe(true);
      // The lock of a is held by another flow of this process (as the detail view's read would).
      let release!: () => void;
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      const holding = compiledLock(rolloutPaths(dir, a).lock, a, 'shared', { waitMs: 0, readOnly: true }, () => {
        locked();
        return new Promise<void>((r) => (release = r));
      });
      await isLocked;
      let done = false;
      const readOfB = readers.readBatch({ dir }, [b]).then(([r]) => {
        done = true;
        return r;
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(done).toBe(false);
      release();
      await holding;
      expect(rowIn((await readOfB) as RowReadOutcome)).toEqual(rowOf(b, rowRead(await readRollout({ dir }, b))));
    } finally {
      await readers.close();
    }
  });

  it('carry what could not be read back as data', async () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'x.tokens.jsonl'));
    const readers = createCompiled();
    try {
      const [r] = await readers.readBatch({ dir, lockWaitMs: 0 }, ['x']);
      expect(rowIn(r).error?.message).toMatch(/directory/);
    } finally {
      await readers.close();
    }
  });

  it('list the directory in the worker and share the stat pass with this thread; the model reads the first screen first', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir, { rollouts: 600, calls: 1, prompt: 2, gen: 1, turn: 1, mix: false });
    // Distinct ages (every file of a rollout the same), in no relation to the ids or the listing's order.
    ids.forEach((id, i) => {
      const t = 1_000_000 + ((i * 7919) % 600);
      for (const p of Object.values(rolloutPaths(dir, id))) if (fs.existsSync(p)) fs.utimesSync(p, t, t);
    });
    const direct = await scanDirectory(dir);
    const readers = createCompiled();
    try {
      const load = await readers.scanForLoad(dir);
      expect(load).toBeDefined();
      // (its rollouts a Map made when first looked into)
      expect({ ...load!.listing, rollouts: new Map(load!.listing.rollouts) }).toEqual(direct);
      const mtimes = await load!.stat();
      expect(Array.from(mtimes)).toEqual(load!.ids.map((id) => fs.lstatSync(rolloutPaths(dir, id).jsonl).mtimeMs));

      // The model with both readers: the first batch is the first screen of the default order;
      // listeners hear first of that screen alone, then of every row, placed with its mtime.
      const batches: string[][] = [];
      let first: DirectorySnapshot | undefined;
      let placed: readonly RolloutRow[] | undefined;
      const model = new DirectoryModel({
        dir,
        firstBatch: 20,
        readers: {
          scanForLoad: readers.scanForLoad,
          readBatch: (store, batch) => {
            batches.push([...batch]);
            return readers.readBatch(store, batch);
          },
        },
      });
      model.subscribe(() => {
        const s = model.snapshot();
        first ??= s;
        if (placed === undefined && s.rows.length === 600) placed = s.rows;
      });
      await model.rescan();
      await model.idle();
      // The first screen's 20 rows (read, unless their read took longer than the model waits
      // for it: under load it can), and the other 580 counted as not read.
      expect(first!.rows.map((r) => r.id)).toEqual(batches[0]);
      expect(first!.totals.rollouts).toBe(600);
      expect(first!.totals.loaded).toBe(first!.rows.filter((r) => r.loaded).length);
      // Then every row, with its mtime; by then only rows of the first batch may have been read.
      expect(placed!.every((r) => r.mtimeMs >= 1_000_000_000)).toBe(true);
      expect(placed!.every((r) => r.mtimeMs >= 1_000_000_000)).toBe(true);
      expect(placed!.filter((r) => r.loaded).every((r) => batches[0].includes(r.id))).toBe(true);
      // Placed in the view's default order (its sort is then a pass over sorted rows).
      expect(placed!.map((r) => r.id)).toEqual(visibleRows(placed!, NO_FILTER, 'recent').map((r) => r.id));
      const final = model.snapshot();
      expect(final.totals.loaded).toBe(600);
      expect(batches[0]).toEqual(
        visibleRows(final.rows, NO_FILTER, 'recent')
          .slice(0, 20)
          .map((r) => r.id),
      );
      expect(batches.flat().sort()).toEqual([...ids].sort());
      model.dispose();
    } finally {
      await readers.close();
    }
  });

  it('read the batches asked for while the worker lists and stats for a load in this thread, and later ones in the worker, the same rows', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir);
    const here = await DEFAULT_READERS.readBatch({ dir }, ids);
    const readers = createCompiled();
    try {
      const load = await readers.scanForLoad(dir);
      expect(load).toBeDefined();
      // The worker loads its reading modules only after its share of the stat pass: this
      // batch does not wait for them.
      expect(readers.inWorker).toBe(false);
      expect(await readers.readBatch({ dir }, ids)).toEqual(here);
      await load!.stat();
      await vi.waitFor(() => expect(readers.inWorker).toBe(true), { timeout: 120_000, interval: 10 });
      expect(await readers.readBatch({ dir }, ids)).toEqual(here);
      expect(readers.inWorker).toBe(true);
    } finally {
      await readers.close();
    }
  });

  it('show the first screen of a large load alone, then place every row (more than a delta keeps) whole, in the recent order', async () => {
    const dir = tempDir();
    // 4,500 rollouts of one empty J file each, whose ages repeat (runs of equal mtimes, ties
    // broken by id), in no relation to the ids or the listing's order.
    const n = 4500;
    const ids = Array.from({ length: n }, (_, i) => `x${String((i * 7919) % n).padStart(5, '0')}`);
    ids.forEach((id, i) => {
      const p = rolloutPaths(dir, id).jsonl;
      fs.writeFileSync(p, '');
      const t = 1_000_000 + (i % 97);
      fs.utimesSync(p, t, t);
    });
    const readers = createCompiled();
    try {
      const batches: string[][] = [];
      const seen: { rows: number; rollouts: number; loaded: number; order: string[] }[] = [];
      const model = new DirectoryModel({
        dir,
        firstBatch: 40,
        readers: {
          scanForLoad: readers.scanForLoad,
          // What a read says does not matter here, only which rollouts are read when.
          readBatch: async (_store, batch) => {
            batches.push([...batch]);
            return batch.map(
              () => ({ ok: false, error: { kind: 'io', message: 'not read in this test' } }) satisfies RowReadOutcome,
            );
          },
        },
      });
      model.subscribe(() => {
        const s = model.snapshot();
        if (seen.length < 2 && seen.at(-1)?.rows !== s.rows.length)
          seen.push({
            rows: s.rows.length,
            rollouts: s.totals.rollouts,
            loaded: s.totals.loaded,
            order: s.rows.map((r) => r.id),
          });
      });
      await model.rescan();
      await model.idle();
      const final = model.snapshot();
      const recent = visibleRows(final.rows, NO_FILTER, 'recent').map((r) => r.id);
      // The first snapshot has the first screen's rows, read (reads that failed keep their rows'
      // places), and counts the others; the next has every row, placed in the recent order.
      expect(seen[0]).toEqual({ rows: 40, rollouts: n, loaded: 40, order: recent.slice(0, 40) });
      expect(seen[1]).toEqual({ rows: n, rollouts: n, loaded: 40, order: recent });
      expect(batches[0]).toEqual(recent.slice(0, 40));
      // Each rollout read once, and the totals agree with the rows.
      expect(batches.flat().sort()).toEqual([...ids].sort());
      expect(final.totals.rollouts).toBe(n);
      expect(final.totals.loaded).toBe(n);
      model.dispose();
    } finally {
      await readers.close();
    }
  });

  it('rescan a loaded directory in the worker: a change without an event is read again, a rollout gone goes, a new one comes, nothing else is read', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir);
    const readers = createCompiled();
    try {
      // The worker's signature of files not changed since a read is the read's own (the model
      // compares the two).
      const outcomes = await readers.readBatch({ dir }, ids);
      const listed = await readers.rescanListing(dir);
      expect(listed!.ids).toEqual([...(await scanDirectory(dir)).rollouts.keys()]);
      const readKeys = ids.flatMap((id, i) => {
        const read = outcomes[i];
        return read.ok && 'row' in read && read.signature ? [[id, read.signature.key]] : [];
      });
      expect(readKeys.length).toBeGreaterThan(ids.length / 2);
      for (const [id, key] of readKeys) expect(listed!.keys[listed!.ids.indexOf(id as string)], id as string).toBe(key);

      const reads: string[] = [];
      let rescans = 0;
      const model = new DirectoryModel({
        dir,
        readers: {
          scanForLoad: readers.scanForLoad,
          rescanListing: (d) => {
            rescans++;
            return readers.rescanListing(d);
          },
          readBatch: (store, batch) => {
            reads.push(...batch);
            return readers.readBatch(store, batch);
          },
        },
      });
      await model.rescan();
      await model.idle();
      expect(rescans).toBe(0);
      reads.length = 0;
      const [touched, removed] = ids;
      for (const p of Object.values(rolloutPaths(dir, touched)))
        if (fs.existsSync(p)) fs.utimesSync(p, 2_000_000, 2_000_000);
      for (const p of Object.values(rolloutPaths(dir, removed))) fs.rmSync(p, { force: true });
      fs.writeFileSync(path.join(dir, 'new1.tokens.intents'), 'c9\n');
      await model.rescan();
      await model.idle();
      expect(rescans).toBe(1);
      expect(reads.sort()).toEqual(['new1', touched].sort());
      expect(model.row(touched)?.mtimeMs).toBe(2_000_000_000);
      expect(model.row(removed)).toBeUndefined();
      expect(model.row('new1')?.danglingIntents).toEqual(['c9']);
      // Nothing changed since: nothing read.
      reads.length = 0;
      await model.rescan();
      await model.idle();
      expect(reads).toEqual([]);
      model.dispose();
    } finally {
      await readers.close();
    }
  });

  it('fall back to this thread when there is no compiled worker', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 2, mix: false });
    const readers = createFromSources(new URL('file:///nonexistent/read-worker.js'));
    const [r] = await readers.readBatch({ dir }, ['r0']);
    expect(readers.inWorker).toBe(false);
    expect(await readers.scanForLoad(dir)).toBeUndefined();
    expect(await readers.rescanListing(dir)).toBeUndefined();
    expect(rowIn(r)).toMatchObject({ loaded: true, wouldMask: false });
    await readers.close();
  });
});
