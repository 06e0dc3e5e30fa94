/**
 * Wraps the directory model for the view: subscribes to it, hands the component a snapshot at
 * most every `throttleMs` (so a burst of reads during a long initial load costs a few renders, not
 * thousands), starts the first scan, and exposes refresh/rescan as fire-and-forget calls. All
 * reading happens in the model, asynchronously; nothing here waits for it, so input handling is
 * never held up by the store.
 */
import { useCallback, useEffect, useState } from 'react';
import type { DirectoryModel, DirectorySnapshot } from '../../../src/watch/directory-model.js';

/** Minimum spacing of snapshots during the first load. */
export const LOADING_THROTTLE_MS = 250;
/**
 * ...and at least one millisecond per this many rows: during a load, a snapshot and the view's
 * update of its sorted rows from it are O(rows) (rows.ts `VisibleRowsCache`), ~25 ms at 100,000.
 */
const ROWS_PER_LOADING_MS = 100;

export interface DirectoryModelHandle {
  snapshot: DirectorySnapshot;
  refresh(ids: readonly string[]): void;
  rescan(): void;
}

export interface UseDirectoryModelOptions {
  /** Minimum time between two snapshots handed to the view (default 100 ms). */
  throttleMs?: number;
  /** Start a full scan on mount (default true). */
  initialScan?: boolean;
}

export function useDirectoryModel(model: DirectoryModel, options: UseDirectoryModelOptions = {}): DirectoryModelHandle {
  const throttleMs = options.throttleMs ?? 100;
  const initialScan = options.initialScan ?? true;
  const [snapshot, setSnapshot] = useState<DirectorySnapshot>(() => model.snapshot());

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let last = 0;
    let live = true;
    const flush = () => {
      timer = undefined;
      if (!live) return;
      last = Date.now();
      setSnapshot(model.snapshot());
    };
    const unsubscribe = model.subscribe(() => {
      if (timer !== undefined) return;
      // While the first load runs, thousands of reads finish: a few snapshots a second suffice,
      // fewer for a huge directory (each one copies every row; 100,000 rows: one a second). No
      // snapshot is taken here: only the one handed to the view.
      const spacing = model.ready ? throttleMs : Math.max(throttleMs, LOADING_THROTTLE_MS, model.size / ROWS_PER_LOADING_MS);
      timer = setTimeout(flush, Math.max(0, last + spacing - Date.now()));
    });
    // Whatever changed between the first render and the subscription.
    setSnapshot(model.snapshot());
    if (initialScan) void model.rescan();
    return () => {
      live = false;
      unsubscribe();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [model, throttleMs, initialScan]);

  const refresh = useCallback((ids: readonly string[]) => void model.refresh(ids), [model]);
  const rescan = useCallback(() => void model.rescan(), [model]);
  return { snapshot, refresh, rescan };
}
