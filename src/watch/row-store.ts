/**
 * The rows of the directory model (one per rollout, read or not) and their totals, kept true row
 * by row; and what a snapshot takes of them: its rows (a copy, or a chain of deltas made into
 * rows only when asked for) and the delta since the previous snapshot.
 */
import type { DirectoryTotals, PackedRow, RolloutRow, RowDelta } from './rows.js';
import { countRow, packRow, placeholderRow } from './rows.js';
import { emptySummary, type StatusSummary } from '../status/summary.js';

/** A delta of more ids than this (and than half the rows) is not kept: see `markDirty`. */
export const MAX_DELTA = 4096;

/**
 * A snapshot's rows are made (see `RowsSource`) at the latest after this many snapshots with a
 * delta, or this many changed rows since the last made: an unmade chain keeps the rows it
 * replaced, and a load (thousands of rows per snapshot) keeps no second set of every row.
 */
const MAX_ROWS_CHAIN = 64;
const MAX_CHAIN_CHANGES = 1024;

/** What a snapshot takes of the rows. */
export interface TakenRows {
  /** The rows, made when first read. */
  readonly rows: () => readonly RolloutRow[];
  /** Since the previous take (absent for the first, and when too much changed to be worth listing). */
  readonly delta?: RowDelta;
  readonly totals: DirectoryTotals;
}

export class RowStore {
  /** Each row carries the signature of the files it was read from (`readKey`, `readKinds`). */
  private readonly rows = new Map<string, PackedRow>();
  /** The totals of `rows`, kept up to date row by row (`set`, `delete`). */
  private readonly totals: DirectoryTotals = {
    rollouts: 0,
    loaded: 0,
    summary: emptySummary(),
    invalidNames: 0,
    tempStateFiles: 0,
  };
  /**
   * Rollouts listed by a load whose rows are not placed yet (they follow the first screen's):
   * counted in the totals' rollouts, as rows not read.
   */
  unplaced = 0;
  /** Rows added or removed so far (a rescan's pass tells whether rows came or went meanwhile). */
  memberships = 0;
  /**
   * Ids whose row was set or deleted since the last take, with the row that take had (null:
   * none); null when that grew too long to keep.
   */
  private dirty: Map<string, RolloutRow | null> | null = new Map();
  /** Where the last take's rows come from. */
  private taken: RowsSource | null = null;

  get size(): number {
    return this.rows.size;
  }

  get loaded(): number {
    return this.totals.loaded;
  }

  get(id: string): PackedRow | undefined {
    return this.rows.get(id);
  }

  has(id: string): boolean {
    return this.rows.has(id);
  }

  ids(): string[] {
    return [...this.rows.keys()];
  }

  /** Every change of the rows goes through here and `delete`: the totals and the delta follow. */
  set(id: string, row: PackedRow): void {
    const prev = this.rows.get(id);
    if (prev) countRow(this.totals, prev, -1);
    else this.memberships++;
    countRow(this.totals, row);
    this.rows.set(id, row);
    this.markDirty(id, prev);
  }

  delete(id: string): boolean {
    const prev = this.rows.get(id);
    if (!prev) return false;
    countRow(this.totals, prev, -1);
    this.memberships++;
    this.rows.delete(id);
    this.markDirty(id, prev);
    return true;
  }

  /** Sets the mtime of a rollout not read yet on its placeholder row (its place in `recent` order). */
  placeMtime(id: string, mtimeMs: number): void {
    const row = this.rows.get(id);
    if (row && !row.loaded && row.mtimeMs !== mtimeMs) this.set(id, packRow(row, { mtimeMs }));
  }

  /**
   * Places a row for each of `ids[from..to)` not known yet; whether any was. `bulk`: into an
   * empty store, a large listing is placed without a delta (`markDirty` would drop it anyway,
   * and a view sorts that snapshot afresh).
   */
  place(ids: readonly string[], mtimes: Float64Array | undefined, from: number, to: number, bulk = false): boolean {
    if (bulk) this.dirty = null;
    let placed = false;
    for (let i = from; i < to; i++) {
      const id = ids[i];
      if (this.rows.has(id)) continue;
      this.set(id, placeholderRow(id, mtimes ? mtimes[i] : 0));
      placed = true;
    }
    return placed;
  }

  /** `prev`: the row before this change (the first change since the last take counts). */
  private markDirty(id: string, prev: RolloutRow | undefined): void {
    if (this.dirty === null) return;
    if (!this.dirty.has(id)) this.dirty.set(id, prev ?? null);
    // A delta as long as the rows themselves saves a view nothing: stop listing (a load without
    // a screen, `--once`, then keeps no second set of every id).
    if (this.dirty.size > MAX_DELTA && this.dirty.size > this.rows.size / 2) this.dirty = null;
  }

  /** The rows as of now for a snapshot; `first`: no snapshot was taken before (no delta). */
  take(first: boolean): TakenRows {
    let delta: RowDelta | undefined;
    if (!first && this.dirty) {
      const changed: RolloutRow[] = [];
      const removed: string[] = [];
      const replaced: RolloutRow[] = [];
      for (const [id, old] of this.dirty) {
        const row = this.rows.get(id);
        if (row === old) continue;
        if (row) changed.push(row);
        else removed.push(id);
        if (old) replaced.push(old);
      }
      delta = { changed, removed, replaced };
    }
    this.dirty = new Map();
    // With a delta, the rows are not copied (100,000 of them: ~5 ms and 0.8 MB per snapshot, on
    // every writer's change): a view follows the deltas and never asks for them.
    const base = this.taken;
    const changes = base && delta ? base.changes + delta.changed.length + delta.removed.length : Infinity;
    const source: RowsSource =
      delta && base && base.depth < MAX_ROWS_CHAIN && changes <= MAX_CHAIN_CHANGES
        ? { base, delta, depth: base.depth + 1, changes }
        : { made: [...this.rows.values()], depth: 0, changes: 0 };
    this.taken = source;
    const t = this.totals;
    return {
      rows: () => rowsOf(source),
      delta,
      totals: { ...t, rollouts: t.rollouts + this.unplaced, summary: copySummary(t.summary) },
    };
  }
}

/**
 * A snapshot's rows: made (a copy of the model's), or the rows of an earlier snapshot (`base`)
 * with the changes since (`delta`), made only when asked for.
 */
interface RowsSource {
  made?: readonly RolloutRow[];
  base?: RowsSource;
  delta?: RowDelta;
  /** Snapshots and changed rows since the last made rows. */
  depth: number;
  changes: number;
}

function rowsOf(source: RowsSource): readonly RolloutRow[] {
  if (source.made) return source.made;
  const deltas: RowDelta[] = [];
  let s = source;
  while (!s.made) {
    deltas.push(s.delta!);
    s = s.base!;
  }
  // The last word on each id changed since the made rows (null: removed).
  const latest = new Map<string, RolloutRow | null>();
  for (let i = deltas.length - 1; i >= 0; i--) {
    for (const id of deltas[i].removed) latest.set(id, null);
    for (const r of deltas[i].changed) latest.set(r.id, r);
  }
  // A changed row keeps its place, a new one comes last: the model's order but for an id removed and
  // added again (the model puts it last; a delta does not say so). Every reader sorts with a total
  // order (src/watch/rows.ts, ties broken by id), so the rows' own order shows nowhere.
  const rows: RolloutRow[] = [];
  for (const r of s.made) {
    const now = latest.get(r.id);
    if (now === undefined) rows.push(r);
    else {
      if (now) rows.push(now);
      latest.delete(r.id);
    }
  }
  for (const r of latest.values()) if (r) rows.push(r);
  source.made = rows;
  source.base = undefined;
  source.delta = undefined;
  return rows;
}

function copySummary(s: StatusSummary): StatusSummary {
  return { ...s, byStatus: { ...s.byStatus }, byCondition: { ...s.byCondition }, byVerdict: { ...s.byVerdict } };
}
