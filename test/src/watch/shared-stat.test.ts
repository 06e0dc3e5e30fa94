/**
 * The stat pass shared by two threads at the start of a live load: a listing that crosses
 * threads intact, every rollout stat'ed exactly once by whichever thread claims it, and the
 * mtime of the file the model's own stat pass takes (J, else S, I, M).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listDirectory, scanDirectory } from '../../../src/layout/scan-directory.js';
import { firstInOrder, recentHead, recentOrder } from '../../../src/watch/recent-order.js';
import { IdText, listingOf, sharedListing, statHere, statNextChunk } from '../../../src/watch/shared-stat.js';
import { makeStore, useTempDirs } from '../../support/watch.js';

const tempDir = useTempDirs();

/** What the model's own stat pass gives an unread rollout: the mtime of its first file. */
function firstFileMtime(dir: string, id: string): number {
  for (const suffix of ['.tokens.jsonl', '.tokens.state.json', '.tokens.intents', '.tokens.incomplete']) {
    const p = path.join(dir, id + suffix);
    if (fs.existsSync(p)) return fs.lstatSync(p).mtimeMs;
  }
  return 0;
}

describe('shared stat pass', () => {
  it('carries a listing across threads unchanged', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 12 });
    fs.writeFileSync(path.join(dir, 'only-state.tokens.state.json'), '{}');
    fs.writeFileSync(path.join(dir, 'bad id!.tokens.jsonl'), '');
    fs.writeFileSync(path.join(dir, '.tokens-state-abcd1234'), '');
    fs.writeFileSync(path.join(dir, 'lock-only.tokens.lock'), '');
    const direct = await scanDirectory(dir);
    const { shared, ids } = sharedListing(listDirectory(dir));
    // As a message between threads would carry it.
    const cross = () => listingOf(structuredClone(shared));
    const crossed = cross();
    expect(crossed.ids).toEqual(ids);
    expect(crossed.ids).toEqual([...direct.rollouts.keys()]);
    // The rollouts' Map is made when first looked into: the same, whichever way first.
    expect(crossed.listing.rollouts.size).toBe(direct.rollouts.size);
    expect({ ...crossed.listing, rollouts: new Map(crossed.listing.rollouts) }).toEqual(direct);
    expect(direct.lockOnly).toEqual(['lock-only']);
    const looked = cross().listing.rollouts;
    expect(looked.get('only-state')).toEqual(new Set(['state']));
    expect(looked.has('bad id!')).toBe(false);
    expect(new Map(looked)).toEqual(direct.rollouts);
    const empty = listingOf(
      sharedListing({ idText: '', masks: new Uint8Array(0), invalidNames: [], tempStateFiles: [], lockOnly: [] })
        .shared,
    );
    expect(empty.ids).toEqual([]);
    expect(empty.listing.rollouts.size).toBe(0);
  });

  it('gives the listing thread the ids from the shared text, index by index', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 12 });
    fs.writeFileSync(path.join(dir, 'only-state.tokens.state.json'), '{}');
    const { shared, ids } = sharedListing(listDirectory(dir));
    const text = new IdText(shared.ids, shared.masks.length);
    expect(text.length).toBe(13);
    expect(Array.from({ length: text.length }, (_, i) => text.at(i))).toEqual(ids);
    expect([text.at(-1), text.at(13)]).toEqual([undefined, undefined]);
    expect(new IdText('one', 1).at(0)).toBe('one');
    expect(new IdText('', 0).length).toBe(0);
  });

  it("stats every rollout once, whichever side claims it, with its first file's mtime", async () => {
    const dir = tempDir();
    const generated = await makeStore(dir, {
      rollouts: 700,
      calls: 1,
      prompt: 2,
      gen: 1,
      turn: 1,
      mix: false,
      fast: true,
    });
    // Rollouts without J: their state file, else their intents, gives the mtime.
    fs.writeFileSync(path.join(dir, 'no-j.tokens.state.json'), '{}');
    fs.writeFileSync(path.join(dir, 'intents-only.tokens.intents'), '');
    fs.utimesSync(path.join(dir, 'intents-only.tokens.intents'), 1000, 1000);
    fs.utimesSync(path.join(dir, `${generated[3]}.tokens.jsonl`), 2000, 2000);
    const { shared, ids } = sharedListing(listDirectory(dir));
    // Two claimants taking turns (each claim a chunk): between them every chunk is taken once.
    let a = 0;
    let b = 0;
    for (;;) {
      const tookA = statNextChunk(dir, ids, shared);
      if (tookA) a++;
      const tookB = statNextChunk(dir, ids, shared);
      if (tookB) b++;
      if (!tookA && !tookB) break;
    }
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);
    const mtimes = await statHere(dir, ids, shared, Promise.resolve(true));
    expect(Array.from(mtimes)).toEqual(ids.map((id) => firstFileMtime(dir, id)));
    expect(mtimes[ids.indexOf('intents-only')]).toBe(1_000_000);
    expect(mtimes[ids.indexOf(generated[3])]).toBe(2_000_000);
  });

  it('stats what the other side left when it stopped', async () => {
    const dir = tempDir();
    await makeStore(dir, { rollouts: 600, calls: 1, prompt: 2, gen: 1, turn: 1, mix: false, fast: true });
    const { shared, ids } = sharedListing(listDirectory(dir));
    // The other side claimed the first chunk and died before stat'ing it.
    new Int32Array(shared.next)[0] = 256;
    const mtimes = await statHere(dir, ids, shared, Promise.resolve(false));
    expect(Array.from(mtimes)).toEqual(ids.map((id) => firstFileMtime(dir, id)));
  });
});

describe('firstInOrder', () => {
  it('gives the first k of a full sort, in order', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const cmp = (x: { m: number; id: string }, y: { m: number; id: string }) =>
      y.m - x.m || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
    for (const n of [0, 1, 5, 48, 1000]) {
      const items = Array.from({ length: n }, (_, i) => ({
        m: Math.floor(rand() * 50),
        id: `r${Math.floor(rand() * 1e6)}-${i}`,
      }));
      for (const k of [0, 1, 10, 48, 2000])
        expect(firstInOrder(items, k, cmp)).toEqual([...items].sort(cmp).slice(0, k));
    }
  });
});

describe('recentOrder', () => {
  it('is the `recent` order (newest first, ties by id), with short and long runs of equal mtimes', () => {
    let seed = 11;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    // Few distinct mtimes (runs longer than an insertion sort takes), many, all equal, none.
    for (const [n, distinct] of [
      [0, 1],
      [1, 1],
      [300, 4],
      [2000, 300],
      [500, 1],
      [1000, 1e9],
    ] as const) {
      const ids = Array.from({ length: n }, (_, i) => `r${Math.floor(rand() * 1e6)}-${i}`);
      const mtimes = Float64Array.from({ length: n }, () => 1.7e12 + Math.floor(rand() * distinct) * 4.25);
      const want = ids
        .map((_, i) => i)
        .sort((a, b) => mtimes[b] - mtimes[a] || (ids[a] < ids[b] ? -1 : ids[a] > ids[b] ? 1 : 0));
      expect(Array.from(recentOrder(ids, mtimes))).toEqual(want);
    }
  });
});

describe('recentHead', () => {
  it('is the head of recentOrder, of any length, with and without ties at its end', () => {
    let seed = 5;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (const [n, distinct] of [
      [0, 1],
      [1, 1],
      [60, 3],
      [2000, 300],
      [500, 1],
      [1000, 1e9],
    ] as const) {
      const ids = Array.from({ length: n }, (_, i) => `r${Math.floor(rand() * 1e6)}-${i}`);
      const mtimes = Float64Array.from({ length: n }, () =>
        rand() < 0.05 ? 0 : 1.7e12 + Math.floor(rand() * distinct) * 4.25,
      );
      const order = Array.from(recentOrder(ids, mtimes));
      for (const k of [0, 1, 2, 48, n - 1, n, n + 5]) {
        if (k < 0) continue;
        expect(Array.from(recentHead(ids, mtimes, k))).toEqual(order.slice(0, k));
      }
    }
  });
});
