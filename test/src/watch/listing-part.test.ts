/**
 * A live load's first screen from the first part of its listing (issue 19): the listing tells
 * what it found after each getdents64 call that more may follow, the read worker sends the first
 * part, and the model shows that part's first screen, says the listing goes on and counts only
 * what is listed so far, then re-sorts into the directory's full order once it is listed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { headerLines } from '../../../commands/watch/layout.js';
import { rolloutPaths } from '../../../src/layout/file-names.js';
import { listDirectory, listDirectoryRaw, type ListingSoFar } from '../../../src/layout/scan-directory.js';
import { rawDirectory } from '../../../src/native/directory-entries.js';
import { DEFAULT_READERS, DirectoryModel, type DirectorySnapshot } from '../../../src/watch/directory-model.js';
import { NO_FILTER, visibleRows } from '../../../src/watch/rows.js';
import { listingOf, listingPartOf, sharedListing, type ListingPart, type LoadListing } from '../../../src/watch/shared-stat.js';
import type { createWorkerReaders as createFromSources } from '../../../src/watch/worker-readers.js';
import { ROOT, ensureBuilt } from '../../support/cli.js';
import { PLAIN, makeStore, useTempDirs } from '../../support/watch.js';

const tempDir = useTempDirs('tokcap-listing-part-');

let createCompiled: typeof createFromSources;
beforeAll(async () => {
  await ensureBuilt();
  const url = pathToFileURL(path.join(ROOT, 'dist', 'src', 'watch', 'worker-readers.js')).href;
  createCompiled = ((await import(url)) as { createWorkerReaders: typeof createFromSources }).createWorkerReaders;
}, 120_000);

/** `n` rollouts of one empty J each (long ids: few entries per getdents64 buffer), distinct ages. */
function jOnlyDirectory(n: number): { dir: string; ids: string[] } {
  const dir = tempDir();
  const ids = Array.from({ length: n }, (_, i) => `rollout-${'x'.repeat(40)}-${String(i).padStart(6, '0')}`);
  ids.forEach((id, i) => {
    const p = rolloutPaths(dir, id).jsonl;
    fs.writeFileSync(p, '');
    const t = 1_000_000 + ((i * 7919) % n);
    fs.utimesSync(p, t, t);
  });
  return { dir, ids };
}

describe('the listing so far', () => {
  it('is told after each getdents64 call that more may follow: growing prefixes of the final listing, none after the last', () => {
    const { dir } = jOnlyDirectory(300);
    const raw = rawDirectory();
    expect(raw, 'getdents64 and statx through koffi').toBeDefined();
    const seen: string[][] = [];
    const whole = listDirectoryRaw(dir, raw!, (part: ListingSoFar) => seen.push([...part.ids]), 4096);
    expect(seen.length).toBeGreaterThan(1);
    for (let i = 0; i < seen.length; i++) {
      expect(seen[i]).toEqual(whole.ids.slice(0, seen[i].length));
      if (i > 0) expect(seen[i].length).toBeGreaterThan(seen[i - 1].length);
    }
    expect(seen.at(-1)!.length).toBeLessThan(whole.ids.length);
    // A directory listed in one call tells nothing.
    const told: number[] = [];
    listDirectory(jOnlyDirectory(5).dir, (part) => told.push(part.ids.length));
    expect(told).toEqual([]);
  });
});

describe('a first screen from the first part of a listing', () => {
  it('says the listing goes on and counts what is listed so far; then the rows follow the full order', async () => {
    const { dir, ids } = jOnlyDirectory(200);
    const whole = listDirectory(dir);
    // A part of the listing: every third rollout (a sample, as the system's order gives one).
    const partIds = whole.ids.filter((_, i) => i % 3 === 0);
    const part: ListingPart = listingPartOf(dir, { ids: partIds.join('\n'), listed: 150 });
    let finish: (l: LoadListing) => void = () => {};
    const full = new Promise<LoadListing>((resolve) => (finish = resolve));
    const snapshots: DirectorySnapshot[] = [];
    const model = new DirectoryModel({
      dir,
      firstBatch: 10,
      readers: {
        scanForLoad: (_dir, onPart) => {
          onPart?.(part);
          return full;
        },
        readBatch: DEFAULT_READERS.readBatch,
      },
    });
    model.subscribe(() => snapshots.push(model.snapshot()));
    const scanned = model.rescan();
    while (snapshots.length === 0) await new Promise((r) => setTimeout(r, 5));

    // The part's first screen: the head of its own recent order, read; 150 listed so far.
    const shown = snapshots[0];
    const partMtimes = partIds.map((id) => fs.lstatSync(rolloutPaths(dir, id).jsonl).mtimeMs);
    const partHead = partIds.map((id, i) => ({ id, m: partMtimes[i] })).sort((a, b) => b.m - a.m || (a.id < b.id ? -1 : 1)).slice(0, 10);
    expect(shown.listedSoFar).toBe(150);
    expect(visibleRows(shown.rows, NO_FILTER, 'recent').map((r) => r.id)).toEqual(partHead.map((r) => r.id));
    expect(shown.rows.every((r) => r.loaded)).toBe(true);
    expect(shown.totals.rollouts).toBe(150);
    expect(shown.ready).toBe(false);
    const header = headerLines({ dir, totals: shown.totals, pending: shown.pending, ready: shown.ready, listedSoFar: shown.listedSoFar, sort: 'recent', filter: NO_FILTER, shown: 10, first: 1, last: 10 }, 120, PLAIN);
    expect(header[0]).toMatch(/listing… 150 rollouts so far$/);
    expect(header[1]).toMatch(/^150\+ rollouts/);
    expect(header.join('\n')).not.toMatch(/reading|up to date/);

    // The rest of the listing: the first screen is then the directory's, and no count says "so far".
    const { shared } = sharedListing(whole);
    const { listing } = listingOf(shared);
    finish({ listing, ids: whole.ids, stat: async () => Float64Array.from(whole.ids, (id) => fs.lstatSync(rolloutPaths(dir, id).jsonl).mtimeMs) });
    await scanned;
    await model.idle();
    const after = snapshots.slice(1);
    expect(after.every((s) => s.listedSoFar === undefined)).toBe(true);
    const firstOrdered = after.find((s) => s.rows.length >= 10)!;
    const final = model.snapshot();
    const recent = visibleRows(final.rows, NO_FILTER, 'recent').map((r) => r.id);
    expect(visibleRows(firstOrdered.rows, NO_FILTER, 'recent').slice(0, 10).map((r) => r.id)).toEqual(recent.slice(0, 10));
    expect(firstOrdered.totals.rollouts).toBe(200);
    const header2 = headerLines({ dir, totals: firstOrdered.totals, pending: firstOrdered.pending, ready: firstOrdered.ready, listedSoFar: firstOrdered.listedSoFar, sort: 'recent', filter: NO_FILTER, shown: 10, first: 1, last: 10 }, 120, PLAIN);
    expect(header2[0]).toMatch(/reading \d+\/200$/);
    expect(final.totals).toMatchObject({ rollouts: 200, loaded: 200 });
    expect(final.rows.map((r) => r.id).sort()).toEqual([...ids].sort());
    model.dispose();
  });

  it('comes from the read worker for a directory that takes more than one getdents64 call, and not for a small one', async () => {
    // ~80-byte records: a 1 MB buffer holds ~13,000; 20,000 rollouts take two calls.
    const { dir, ids } = jOnlyDirectory(20_000);
    const readers = createCompiled();
    try {
      const parts: ListingPart[] = [];
      const load = await readers.scanForLoad(dir, (p) => parts.push(p));
      expect(parts.length).toBe(1);
      const [part] = parts;
      expect(part.listed).toBeGreaterThan(0);
      expect(part.listed).toBeLessThan(ids.length);
      expect(part.ids).toEqual(load!.ids.slice(0, part.listed));
      expect(Array.from(part.stat())).toEqual(part.ids.map((id) => fs.lstatSync(rolloutPaths(dir, id).jsonl).mtimeMs));
      await load!.stat();
    } finally {
      await readers.close();
    }
    const small = tempDir();
    await makeStore(small, { rollouts: 20, mix: false });
    const again = createCompiled();
    try {
      const parts: ListingPart[] = [];
      expect(await again.scanForLoad(small, (p) => parts.push(p))).toBeDefined();
      expect(parts).toEqual([]);
    } finally {
      await again.close();
    }
  });
});
