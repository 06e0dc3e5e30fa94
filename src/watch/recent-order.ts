/**
 * The `recent` order of the watch's rows (src/watch/rows.ts: newest first, ties by id) over a
 * load's listing: the order of the read queue, the head of it that is the first screen, and the
 * first few of any order, each in one pass where it can be.
 */

/** A rollout to read, with the mtime that gives its place in the queue. */
export interface Queued {
  id: string;
  mtimeMs: number;
}

/** The `recent` order of rows.ts (newest first, ties by id). */
export function byRecency(a: Queued, b: Queued): number {
  return b.mtimeMs - a.mtimeMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The ids and their mtimes in the `recent` order of rows.ts (newest first, ties by id). */
export function inRecentOrder(ids: readonly string[], mtimes: Float64Array): { ids: string[]; mtimes: Float64Array } {
  const order = recentOrder(ids, mtimes);
  const sortedIds = new Array<string>(order.length);
  const sortedMtimes = new Float64Array(order.length);
  for (let to = 0; to < order.length; to++) {
    sortedIds[to] = ids[order[to]];
    sortedMtimes[to] = mtimes[order[to]];
  }
  return { ids: sortedIds, mtimes: sortedMtimes };
}

/**
 * The indices of `ids` in the `recent` order of rows.ts (newest first, ties by id). A sort with
 * a comparator takes ~0.15 s of this thread for 100,000 rollouts; here the mtimes are sorted as
 * plain numbers (natively), each index is placed by the rank of its mtime (a counting sort), and
 * only rollouts that share an mtime are compared by id (a coarse file-system clock makes short
 * runs of them).
 */
export function recentOrder(ids: readonly string[], mtimes: Float64Array): Uint32Array {
  const n = ids.length;
  // The distinct mtimes, oldest first.
  const distinct = Float64Array.from(mtimes).sort();
  let u = 0;
  for (let i = 0; i < n; i++) if (u === 0 || distinct[i] !== distinct[u - 1]) distinct[u++] = distinct[i];
  // rank[i]: 0 for the newest mtime; starts[r]: where rank r begins in the order.
  const rank = new Uint32Array(n);
  const starts = new Uint32Array(u + 1);
  for (let i = 0; i < n; i++) {
    const m = mtimes[i];
    let lo = 0;
    let hi = u - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (distinct[mid] < m) lo = mid + 1;
      else hi = mid;
    }
    rank[i] = u - 1 - lo;
    starts[rank[i] + 1]++;
  }
  for (let r = 0; r < u; r++) starts[r + 1] += starts[r];
  const order = new Uint32Array(n);
  const next = starts.slice(0, u);
  for (let i = 0; i < n; i++) order[next[rank[i]]++] = i;
  for (let r = 0; r < u; r++) {
    const from = starts[r];
    const to = starts[r + 1];
    if (to - from < 2) continue;
    if (to - from > 32) {
      const run = order.subarray(from, to);
      run.set(Array.from(run).sort((a, b) => (ids[a] < ids[b] ? -1 : ids[a] > ids[b] ? 1 : 0)));
      continue;
    }
    // Insertion sort: runs are short.
    for (let i = from + 1; i < to; i++) {
      const at = order[i];
      const id = ids[at];
      let j = i - 1;
      while (j >= from && ids[order[j]] > id) {
        order[j + 1] = order[j];
        j--;
      }
      order[j + 1] = at;
    }
  }
  return order;
}

/**
 * The indices of the first `k` of `ids` in the order of `recentOrder` (newest first, ties by id),
 * in that order: one pass, most rollouts turned away by one comparison of their mtime.
 */
export function recentHead(ids: readonly string[], mtimes: Float64Array, k: number): Uint32Array {
  // Comparisons inline, no comparator called per rollout: this runs once per load, cold, over
  // every rollout, on the first screen's path (at 100,000 in a fresh process: ~9-16 ms through
  // firstInOrder, ~5-6 ms so).
  const top = new Uint32Array(Math.max(0, Math.min(k, ids.length)));
  let size = 0;
  for (let i = 0; i < ids.length; i++) {
    const m = mtimes[i];
    if (size === top.length) {
      if (size === 0) break;
      const last = top[size - 1];
      if (m < mtimes[last] || (m === mtimes[last] && ids[i] > ids[last])) continue;
    }
    // After every one that comes before it (ids are distinct: no two are equal).
    let lo = 0;
    let hi = size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const t = top[mid];
      if (mtimes[t] > m || (mtimes[t] === m && ids[t] < ids[i])) lo = mid + 1;
      else hi = mid;
    }
    if (size < top.length) size++;
    top.copyWithin(lo + 1, lo, size - 1);
    top[lo] = i;
  }
  return top;
}

/** The first `k` items of `items` in `cmp` order, sorted (one pass: no sort of the whole array). */
export function firstInOrder<T>(items: ArrayLike<T>, k: number, cmp: (a: T, b: T) => number): T[] {
  const top: T[] = [];
  if (k <= 0) return top;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (top.length === k && cmp(item, top[k - 1]) >= 0) continue;
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(top[mid], item) <= 0) lo = mid + 1;
      else hi = mid;
    }
    top.splice(lo, 0, item);
    if (top.length > k) top.pop();
  }
  return top;
}
