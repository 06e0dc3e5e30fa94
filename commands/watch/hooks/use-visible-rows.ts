/**
 * The rows a view shows (filtered and sorted), kept up to date from each snapshot's delta: a
 * frame during a load of 100,000 rollouts does not sort them all again.
 */
import { useMemo, useState } from 'react';
import type { DirectorySnapshot } from '../../../src/watch/directory-model.js';
import { VisibleRowsCache, type RowFilter, type SortMode } from '../../../src/watch/rows.js';

export function useVisibleRows(snapshot: DirectorySnapshot, filter: RowFilter, sort: SortMode) {
  // One cache for the app's life (a lazy initial state, never set).
  const [cache] = useState(() => new VisibleRowsCache());
  return useMemo(() => cache.rows(snapshot, filter, sort), [cache, snapshot, filter, sort]);
}
