/**
 * The rows a view shows, in display order, kept in blocks of a few hundred: an update that
 * places a few changed rows copies the blocks they are in and the list of blocks, not every
 * row. 100,000 rows in one array cost a copy of the array per writer's update and a move of
 * every row after each one placed (the writers' rows are the newest: placed at the top), ~5 ms
 * and 0.8 MB of garbage per update; in blocks of 512, a few microseconds.
 *
 * Immutable: an update returns a new list that shares the blocks it did not change, so a view
 * can keep the list it rendered while the next one is made.
 */
import type { RolloutRow } from './rollout-row.js';

/** Rows read by index in display order: a `RowList`, or an array (which has the same methods). */
export interface IndexedRows {
  readonly length: number;
  /** The row at `i` (undefined outside 0..length-1). */
  at(i: number): RolloutRow | undefined;
  /** The rows from `from` up to (not including) `to`, as an array. */
  slice(from?: number, to?: number): RolloutRow[];
}

/** Rows per block when a list is cut into blocks; an update splits a block past twice this. */
const BLOCK = 512;

type Compare = (a: RolloutRow, b: RolloutRow) => number;

export class RowList implements IndexedRows, Iterable<RolloutRow> {
  readonly length: number;
  /** Where each block ends in the list (exclusive): `ends[b] - blocks[b].length` is its start. */
  private readonly ends: Int32Array;
  /** The block of the last `at` (rows are read in runs: a screen, a search for the selection). */
  private finger = 0;

  private constructor(private readonly blocks: readonly (readonly RolloutRow[])[]) {
    this.ends = new Int32Array(blocks.length);
    let end = 0;
    for (let b = 0; b < blocks.length; b++) this.ends[b] = end += blocks[b].length;
    this.length = end;
  }

  /** A list of `rows` (already in display order; the array is not kept). */
  static of(rows: readonly RolloutRow[]): RowList {
    const blocks: RolloutRow[][] = [];
    for (let from = 0; from < rows.length; from += BLOCK) blocks.push(rows.slice(from, from + BLOCK));
    return new RowList(blocks);
  }

  /** A list of these blocks (none empty; not copied: the caller gives them up). */
  static ofBlocks(blocks: RolloutRow[][]): RowList {
    return new RowList(blocks);
  }

  at(i: number): RolloutRow | undefined {
    if (!(i >= 0 && i < this.length)) return undefined;
    const b = this.blockOf(i);
    return this.blocks[b][i - (this.ends[b] - this.blocks[b].length)];
  }

  slice(from = 0, to = this.length): RolloutRow[] {
    const start = Math.max(0, from < 0 ? this.length + from : from);
    const end = Math.min(this.length, to < 0 ? this.length + to : to);
    const out: RolloutRow[] = [];
    if (start >= end) return out;
    for (let b = this.blockOf(start); b < this.blocks.length && out.length < end - start; b++) {
      const first = this.ends[b] - this.blocks[b].length;
      const block = this.blocks[b];
      for (let k = Math.max(0, start - first); k < block.length && first + k < end; k++) out.push(block[k]);
    }
    return out;
  }

  *[Symbol.iterator](): IterableIterator<RolloutRow> {
    for (const block of this.blocks) yield* block;
  }

  /** Calls `visit` on every row, in order (no iterator per row). */
  forEach(visit: (row: RolloutRow) => void): void {
    for (const block of this.blocks) for (let k = 0; k < block.length; k++) visit(block[k]);
  }

  /**
   * This list (sorted by `cmp`, a total order) without the rows of `removed` (the very objects
   * in it; others are ignored) and with the rows of `added` placed in `cmp` order. Each row is
   * found by binary search over the blocks, then in its block; a block is copied once, on its
   * first change.
   */
  update(removed: readonly RolloutRow[], added: readonly RolloutRow[], cmp: Compare): RowList {
    const blocks = this.blocks.slice() as RolloutRow[][];
    const own = new Set<RolloutRow[]>();
    const writable = (b: number): RolloutRow[] => {
      let block = blocks[b];
      if (!own.has(block)) {
        block = block.slice();
        blocks[b] = block;
        own.add(block);
      }
      return block;
    };
    for (const row of removed) {
      const b = blockFor(blocks, row, cmp);
      if (b === blocks.length) continue;
      const at = lowerBound(blocks[b], row, cmp);
      if (blocks[b][at] !== row) continue;
      const block = writable(b);
      block.splice(at, 1);
      // No empty block: each block's last row is what the search above compares.
      if (block.length === 0) blocks.splice(b, 1);
    }
    for (const row of added) {
      if (blocks.length === 0) {
        const block = [row];
        own.add(block);
        blocks.push(block);
        continue;
      }
      // After every row before it: the first block whose last row is not before it, else the last.
      const b = Math.min(blockFor(blocks, row, cmp), blocks.length - 1);
      const block = writable(b);
      block.splice(lowerBound(block, row, cmp), 0, row);
    }
    // Blocks that grew past twice the size are cut again (only those copied here can have).
    for (let b = 0; b < blocks.length; b++) {
      const block = blocks[b];
      if (block.length <= 2 * BLOCK) continue;
      const parts: RolloutRow[][] = [];
      for (let from = 0; from < block.length; from += BLOCK) parts.push(block.slice(from, from + BLOCK));
      blocks.splice(b, 1, ...parts);
      b += parts.length - 1;
    }
    return new RowList(blocks);
  }

  private blockOf(i: number): number {
    const f = this.finger;
    if (f < this.blocks.length && i < this.ends[f] && i >= this.ends[f] - this.blocks[f].length) return f;
    let lo = 0;
    let hi = this.blocks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ends[mid] <= i) lo = mid + 1;
      else hi = mid;
    }
    this.finger = lo;
    return lo;
  }
}

/** Builds a `RowList` row by row, in order (a pass over every row: a load's larger updates). */
export class RowListBuilder {
  private readonly blocks: RolloutRow[][] = [];
  private block: RolloutRow[] = [];

  push(row: RolloutRow): void {
    if (this.block.length === BLOCK) {
      this.blocks.push(this.block);
      this.block = [];
    }
    this.block.push(row);
  }

  done(): RowList {
    if (this.block.length > 0) this.blocks.push(this.block);
    this.block = [];
    return RowList.ofBlocks(this.blocks.splice(0));
  }
}

/** The first block whose last row is not before `row` (`blocks.length`: none). */
function blockFor(blocks: readonly (readonly RolloutRow[])[], row: RolloutRow, cmp: Compare): number {
  let lo = 0;
  let hi = blocks.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const block = blocks[mid];
    if (cmp(block[block.length - 1], row) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first row of `rows` (sorted by `cmp`) not before `row`. */
function lowerBound(rows: readonly RolloutRow[], row: RolloutRow, cmp: Compare): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp(rows[mid], row) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
