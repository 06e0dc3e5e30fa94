/**
 * TOKCAP_TRACE (../trace.ts): the first frames with rows listed and with the visible rows read,
 * told once each, once drawn.
 */
import { useEffect, useRef } from 'react';
import type { IndexedRows } from '../../../src/watch/row-list.js';
import type { Trace } from '../trace.js';

/** `listShown`: the list is on screen; `rows.slice(from, from + count)`: its visible rows. */
export function useFrameTrace(
  trace: Trace | undefined,
  listShown: boolean,
  rows: IndexedRows,
  from: number,
  count: number,
  loaded: number,
): void {
  const traced = useRef({ listed: false, read: false });
  useEffect(() => {
    if (!trace || !listShown || rows.length === 0) return;
    if (!traced.current.listed) trace(`frame: ${rows.length} rows listed`);
    traced.current.listed = true;
    if (!traced.current.read && rows.slice(from, from + count).every((r) => r.loaded)) {
      traced.current.read = true;
      trace(`frame: visible rows read (${loaded} read)`);
    }
  }, [trace, listShown, rows, from, count, loaded]);
}
