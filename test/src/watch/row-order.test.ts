import { describe, expect, it } from 'vitest';
import { CONDITIONS, ROLLOUT_STATUSES, type Condition } from '../../../src/status/rollout-status.js';
import { VERDICTS } from '../../../src/status/verdict.js';
import {
  NO_FILTER,
  SORT_MODES,
  VisibleRowsCache,
  countRow,
  directoryTotals,
  packRow,
  placeholderRow,
  updateVisibleRows,
  visibleRows,
  type RolloutRow,
  type RowFilter,
} from '../../../src/watch/rows.js';
import { RowList } from '../../../src/watch/row-list.js';

/** A small deterministic generator (the failures must be reproducible). */
function random(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]) => xs[int(xs.length)];
  return { next, int, pick };
}

type Rng = ReturnType<typeof random>;

/** A row with random fields: few distinct mtimes and call counts, so that ties are common. */
function randomRow(rng: Rng, id: string): RolloutRow {
  if (rng.int(5) === 0) return placeholderRow(id, rng.int(4) * 1000);
  const conditions = CONDITIONS.filter(() => rng.int(4) === 0) as Condition[];
  const verdict = rng.int(6) === 0 ? null : rng.pick(VERDICTS);
  return packRow(placeholderRow(id), {
    loaded: true,
    status: rng.pick(ROLLOUT_STATUSES),
    conditions,
    calls: rng.int(4),
    mtimeMs: rng.int(6) * 1000,
    verdict,
    unbuilt: verdict === 'masked' && rng.int(2) === 0,
    wouldMask: verdict === null || verdict === 'unavailable' ? null : verdict === 'masked',
    error: rng.int(10) === 0 ? { kind: 'io', message: 'x' } : undefined,
    danglingIntents: conditions.includes('dangling') ? ['c1'] : [],
  });
}

const FILTERS: RowFilter[] = [
  NO_FILTER,
  { ...NO_FILTER, masked: true },
  { ...NO_FILTER, dangling: true },
  { ...NO_FILTER, search: 'R1' },
];

describe('rows kept up to date change by change', () => {
  it('countRow in and out keeps the totals equal to a recomputation, after random puts and removals', () => {
    const rng = random(7);
    const rows = new Map<string, RolloutRow>();
    const totals = directoryTotals([], 2, 1);
    for (let step = 0; step < 3000; step++) {
      const id = `r${rng.int(200)}`;
      const prev = rows.get(id);
      if (prev) countRow(totals, prev, -1);
      if (rng.int(4) === 0) {
        rows.delete(id);
      } else {
        const row = randomRow(rng, id);
        rows.set(id, row);
        countRow(totals, row);
      }
      if (step % 100 === 0) expect(totals).toEqual(directoryTotals(rows.values(), 2, 1));
    }
    expect(totals).toEqual(directoryTotals(rows.values(), 2, 1));
  });

  it('updateVisibleRows equals a full sort, for every sort mode and filter', () => {
    const rng = random(11);
    for (const sort of SORT_MODES) {
      for (const filter of FILTERS) {
        const rows = new Map<string, RolloutRow>();
        let shown = RowList.of([]);
        for (let round = 0; round < 40; round++) {
          const before = new Map(rows);
          const changed = new Map<string, RolloutRow>();
          const removed = new Set<string>();
          // Rounds of very different sizes: a few changes, and a whole load at once.
          const n = round === 0 ? 300 : rng.int(3) === 0 ? rng.int(150) : rng.int(5);
          for (let k = 0; k < n; k++) {
            const id = `r${rng.int(300)}`;
            if (rows.has(id) && rng.int(5) === 0) {
              rows.delete(id);
              changed.delete(id);
              removed.add(id);
            } else {
              const row = randomRow(rng, id);
              rows.set(id, row);
              removed.delete(id);
              changed.set(id, row);
            }
          }
          // With the replaced rows (a few changes are then placed by binary search) and without.
          const touched = [...changed.keys(), ...removed];
          const replaced =
            round % 2 === 0 ? touched.flatMap((id) => (before.has(id) ? [before.get(id)!] : [])) : undefined;
          shown = updateVisibleRows(
            shown,
            { changed: [...changed.values()], removed: [...removed], replaced },
            filter,
            sort,
          );
          expect([...shown].map((r) => r.id)).toEqual(visibleRows(rows.values(), filter, sort).map((r) => r.id));
          expect([...shown]).toEqual(visibleRows(rows.values(), filter, sort));
        }
      }
    }
  });

  it('VisibleRowsCache uses a delta only when it follows the rows it computed last', () => {
    const rng = random(3);
    const cache = new VisibleRowsCache();
    const a = Array.from({ length: 50 }, (_, i) => randomRow(rng, `r${i}`));
    const first = cache.rows({ rows: a, version: 1 }, NO_FILTER, 'recent');
    expect([...first]).toEqual(visibleRows(a, NO_FILTER, 'recent'));
    // Same state again: the same list.
    expect(cache.rows({ rows: a, version: 1 }, { ...NO_FILTER }, 'recent')).toBe(first);

    const changed = randomRow(rng, 'r3');
    const b = a.map((r) => (r.id === 'r3' ? changed : r)).filter((r) => r.id !== 'r4');
    const next = cache.rows(
      { rows: b, version: 2, delta: { since: 1, changed: [changed], removed: ['r4'] } },
      NO_FILTER,
      'recent',
    );
    expect([...next]).toEqual(visibleRows(b, NO_FILTER, 'recent'));

    // A delta from a state this cache never saw is not trusted: the rows are sorted afresh.
    const c = b.map((r) => (r.id === 'r5' ? randomRow(rng, 'r5') : r));
    const lying = { since: 1, changed: [], removed: [] };
    expect([...cache.rows({ rows: c, version: 3, delta: lying }, NO_FILTER, 'recent')]).toEqual(
      visibleRows(c, NO_FILTER, 'recent'),
    );
    // Another sort or filter: sorted afresh too.
    expect([...cache.rows({ rows: c, version: 3 }, NO_FILTER, 'calls')]).toEqual(visibleRows(c, NO_FILTER, 'calls'));
    expect([...cache.rows({ rows: c, version: 3 }, { ...NO_FILTER, masked: true }, 'calls')]).toEqual(
      visibleRows(c, { ...NO_FILTER, masked: true }, 'calls'),
    );
  });
});
