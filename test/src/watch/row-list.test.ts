import { describe, expect, it } from 'vitest';
import { RowList } from '../../../src/watch/row-list.js';
import { packRow, placeholderRow, type RolloutRow } from '../../../src/watch/rows.js';

/** The `recent` order of rows.ts: newest first, ties by id. */
const recent = (a: RolloutRow, b: RolloutRow) => b.mtimeMs - a.mtimeMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

const row = (id: string, mtimeMs: number) => packRow(placeholderRow(id), { loaded: true, mtimeMs });

/** A small deterministic generator (the failures must be reproducible). */
function random(seed: number) {
  let s = seed >>> 0;
  return (n: number) => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return Math.floor((s / 2 ** 32) * n);
  };
}

describe('RowList: rows in display order, in blocks', () => {
  it('reads every index and range as the array it was made from', () => {
    const rows = Array.from({ length: 1300 }, (_, i) => row(`r${i}`, 5000 - i));
    const list = RowList.of(rows);
    expect(list.length).toBe(1300);
    for (const i of [0, 1, 511, 512, 513, 1023, 1024, 1299]) expect(list.at(i)).toBe(rows[i]);
    expect(list.at(-1)).toBeUndefined();
    expect(list.at(1300)).toBeUndefined();
    for (const [from, to] of [
      [0, 33],
      [500, 540],
      [1290, 1400],
      [1024, 1024],
      [700, 600],
    ])
      expect(list.slice(from, to)).toEqual(rows.slice(from, to));
    expect(list.slice()).toEqual(rows);
    expect([...list]).toEqual(rows);
    expect(RowList.of([]).slice(0, 10)).toEqual([]);
  });

  it('after hundreds of updates of a few rows each (one block growing past twice its size), equals a sort of the rows, and the lists before are unchanged', () => {
    const rand = random(5);
    const rows = new Map<string, RolloutRow>();
    for (let i = 0; i < 3000; i++) rows.set(`r${i}`, row(`r${i}`, rand(3000)));
    let list = RowList.of([...rows.values()].sort(recent));
    let clock = 3000;
    for (let round = 0; round < 400; round++) {
      const before = list;
      const beforeRows = [...before];
      const removed: RolloutRow[] = [];
      const added: RolloutRow[] = [];
      for (let k = rand(12); k >= 0; k--) {
        // Mostly rows that become the newest (a writer's), which all land in the first block.
        const id = rand(3) === 0 ? `r${rand(3000)}` : `new${rand(1500)}`;
        if (added.some((r) => r.id === id)) continue;
        const old = rows.get(id);
        if (old) removed.push(old);
        if (old && rand(6) === 0) {
          rows.delete(id);
          continue;
        }
        const next = row(id, rand(4) === 0 ? rand(3000) : ++clock);
        rows.set(id, next);
        added.push(next);
      }
      list = list.update(removed, added, recent);
      expect(list.length).toBe(rows.size);
      if (round % 20 === 0 || round === 399) expect([...list]).toEqual([...rows.values()].sort(recent));
      expect([...before]).toEqual(beforeRows);
    }
    expect([...list]).toEqual([...rows.values()].sort(recent));
  });

  it('drops a block emptied by an update and still places rows before, between and after the others', () => {
    const rows = Array.from({ length: 1100 }, (_, i) => row(`r${String(i).padStart(4, '0')}`, 10_000 - i));
    const list = RowList.of(rows);
    // The whole second block (512..1023) removed, then rows placed at the top, in its gap and at the end.
    const removed = rows.slice(512, 1024);
    const added = [row('top', 20_000), row('gap', 10_000 - 700), row('end', 1)];
    const next = list.update(removed, added, recent);
    const expected = [...rows.slice(0, 512), ...rows.slice(1024), ...added].sort(recent);
    expect([...next]).toEqual(expected);
    expect(next.at(0)?.id).toBe('top');
    expect(next.at(next.length - 1)?.id).toBe('end');
    expect(next.slice(512, 514).map((r) => r.id)).toEqual(['r0511', 'gap']);
    // Rows that are not in the list (another filter's) are not removed.
    expect(next.update([row('r0000', 10_000)], [], recent).length).toBe(next.length);
  });

  it('an update into an empty list, or of every row, leaves the rows in order', () => {
    const added = Array.from({ length: 40 }, (_, i) => row(`n${i}`, i % 7));
    const filled = RowList.of([]).update([], added, recent);
    expect([...filled]).toEqual([...added].sort(recent));
    expect(filled.update([...filled], [], recent).length).toBe(0);
  });
});
