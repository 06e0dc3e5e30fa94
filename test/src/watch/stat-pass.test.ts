/**
 * The stat pass on its own: a rollout never read is to be read, placed with its first file's
 * mtime; one read is to be read again only when one of its files changed; a frozen or retired
 * rollout with the same files is not stat'ed at all.
 */
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { rolloutPaths } from '../../../src/layout/file-names.js';
import { scanDirectory } from '../../../src/layout/scan-directory.js';
import { DEFAULT_READERS } from '../../../src/watch/directory-model.js';
import { RowStore } from '../../../src/watch/row-store.js';
import { placeholderRow, withBookkeeping } from '../../../src/watch/rows.js';
import { StatPass } from '../../../src/watch/stat-pass.js';
import { makeStore, useTempDirs } from '../../support/watch.js';

const tempDir = useTempDirs('tokcap-stat-pass-');

/** A stat pass over `dir` that records the paths it stats. */
function statPass(dir: string, rows: RowStore) {
  const statted: string[] = [];
  const pass = new StatPass(
    {
      dir,
      stat: (p) => {
        statted.push(p);
        return DEFAULT_READERS.stat(p);
      },
      statUnread: true,
      concurrency: 2,
    },
    rows,
  );
  return { pass, statted };
}

describe('the stat pass', () => {
  it('finds every rollout not read yet, placed with the mtime of its first listed file', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir, { rollouts: 3, mix: false });
    ids.forEach((id, i) => fs.utimesSync(rolloutPaths(dir, id).jsonl, 1_000 + i, 1_000 + i));
    const rows = new RowStore();
    for (const id of ids) rows.set(id, placeholderRow(id));
    const { pass } = statPass(dir, rows);
    const changed = await pass.changed(await scanDirectory(dir), ids, () => false);
    expect(changed.sort((a, b) => a.mtimeMs - b.mtimeMs)).toEqual(
      ids.map((id, i) => ({ id, mtimeMs: (1_000 + i) * 1000 })),
    );
    expect(ids.map((id) => rows.get(id)!.mtimeMs)).toEqual(ids.map((_, i) => (1_000 + i) * 1000));
    expect(await pass.unchanged(ids[0])).toBe(false);
  });

  it('finds a rollout read before only when one of its files changed, and never stats a frozen or retired one', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir);
    const rows = new RowStore();
    const outcomes = await DEFAULT_READERS.readBatch({ dir }, ids);
    outcomes.forEach((o, i) => {
      if (!o.ok || 'gone' in o) throw new Error(`${ids[i]} not read`);
      rows.set(ids[i], withBookkeeping(o.row, null, 1, o.signature));
    });
    const { pass, statted } = statPass(dir, rows);
    const listing = await scanDirectory(dir);
    expect(await pass.changed(listing, ids, () => false)).toEqual([]);
    const settled = ids.filter((id) => rows.get(id)!.frozen || rows.get(id)!.retired);
    expect(settled.length).toBeGreaterThan(0);
    for (const id of settled) expect(statted.filter((p) => p.includes(`/${id}.tokens.`))).toEqual([]);

    const touched = ids.find((id) => !settled.includes(id))!;
    fs.utimesSync(rolloutPaths(dir, touched).jsonl, 2_000_000, 2_000_000);
    // (placed with its newest file's mtime)
    const newest = Math.max(
      ...Object.values(rolloutPaths(dir, touched))
        .filter((p) => fs.existsSync(p) && !p.endsWith('.lock'))
        .map((p) => fs.lstatSync(p).mtimeMs),
    );
    expect(await pass.changed(listing, ids, () => false)).toEqual([{ id: touched, mtimeMs: newest }]);
    expect(await pass.unchanged(touched)).toBe(false);
    expect(await pass.unchanged(ids.find((id) => id !== touched && !settled.includes(id))!)).toBe(true);
  });

  it('stops once told to', async () => {
    const dir = tempDir();
    const ids = await makeStore(dir, { rollouts: 4, mix: false });
    const rows = new RowStore();
    for (const id of ids) rows.set(id, placeholderRow(id));
    const { pass, statted } = statPass(dir, rows);
    expect(await pass.changed(await scanDirectory(dir), ids, () => true)).toEqual([]);
    expect(statted).toEqual([]);
  });
});
