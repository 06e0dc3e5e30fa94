/**
 * Wraps the directory model for the view: subscribes to it, hands the component a snapshot at
 * most every `throttleMs` (so a burst of reads during a long initial load costs a few renders, not
 * thousands), starts the first scan, and exposes refresh/rescan as fire-and-forget calls. All
 * reading happens in the model, asynchronously; nothing here waits for it, so input handling is
 * never held up by the store.
 */
import { useCallback, useEffect } from 'react';
import { useShownState } from './use-shown-state.js';
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
  /** Told of every snapshot handed to the view (TOKCAP_TRACE). */
  trace?: (event: string) => void;
}

export function useDirectoryModel(model: DirectoryModel, options: UseDirectoryModelOptions = {}): DirectoryModelHandle {
  const throttleMs = options.throttleMs ?? 100;
  const initialScan = options.initialScan ?? true;
  const trace = options.trace;
  // Handing React the snapshot on screen again would still render the app and write a whole
  // frame (~0.2 s for the cold first ones, on the first screen's path): useShownState skips it.
  const [snapshot, setSnapshot] = useShownState<DirectorySnapshot>(() => model.snapshot());

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let last = 0;
    let live = true;
    let shownRead = 0;
    const flush = () => {
      timer = undefined;
      if (!live) return;
      last = Date.now();
      const s = model.snapshot();
      shownRead = model.loaded;
      trace?.(`view: snapshot, ${s.totals.loaded} of ${s.totals.rollouts} read`);
      setSnapshot(s);
    };
    let due = 0;
    const unsubscribe = model.subscribe(() => {
      // While the first load runs, thousands of reads finish: a few snapshots a second suffice,
      // fewer for a huge directory (each one costs the view a pass over its changed rows, and
      // after a long chain of deltas a copy of every row; 100,000 rows: one a second). No
      // snapshot is taken here: only the one handed to the view. But the first rows read are
      // the first screen's (the load reads them first): they are shown at once.
      const firstRead = shownRead === 0 && model.loaded > 0;
      const spacing = model.ready
        ? throttleMs
        : firstRead
          ? 0
          : Math.max(throttleMs, LOADING_THROTTLE_MS, model.size / ROWS_PER_LOADING_MS);
      const at = firstRead ? Date.now() : last + spacing;
      if (timer !== undefined) {
        if (at >= due) return;
        clearTimeout(timer);
      }
      due = at;
      timer = setTimeout(flush, Math.max(0, at - Date.now()));
    });
    // Whatever changed between the first render and the subscription.
    setSnapshot(model.snapshot());
    if (initialScan) void model.rescan();
    return () => {
      live = false;
      unsubscribe();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [model, throttleMs, initialScan, trace, setSnapshot]);

  const refresh = useCallback((ids: readonly string[]) => void model.refresh(ids), [model]);
  const rescan = useCallback(() => void model.rescan(), [model]);
  return { snapshot, refresh, rescan };
}
