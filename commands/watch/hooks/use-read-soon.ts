/**
 * During a load, the rows on screen not read yet are read next, whatever the sort, filter or
 * scroll position (the load's own order is the default view's).
 */
import { useEffect } from 'react';
import type { DirectoryModel } from '../../../src/watch/directory-model.js';
import type { IndexedRows } from '../../../src/watch/row-list.js';

/** `rows.slice(from, from + count)`: the rows on screen, while `loading` (a load runs, the list shown). */
export function useReadSoon(
  model: DirectoryModel,
  loading: boolean,
  rows: IndexedRows,
  from: number,
  count: number,
): void {
  useEffect(() => {
    if (!loading) return;
    const unread: string[] = [];
    for (const r of rows.slice(from, from + count)) if (!r.loaded) unread.push(r.id);
    if (unread.length > 0) model.readSoon(unread);
  }, [model, loading, rows, from, count]);
}
