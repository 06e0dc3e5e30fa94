/**
 * Selection and scrolling of the directory list, as a reducer: the selection follows a rollout
 * id (rows re-sort as the store changes), and the window scrolls just enough to keep it
 * visible. Pure; the App dispatches key actions with the rows currently shown.
 */
export interface ListNav {
  /** The selected rollout (null: none yet, the first row is selected). */
  selectedId: string | null;
  /** Index of the selection when it was last placed (used when the id leaves the list). */
  cursor: number;
  /** First visible row. */
  offset: number;
}

export const INITIAL_NAV: ListNav = { selectedId: null, cursor: 0, offset: 0 };

/**
 * The rows in display order, as ids or as the rows themselves (their `id`; an array or the view's
 * row list, src/watch/row-list.ts): a key or a frame then needs no list of every id (100,000 ids
 * made per key cost more than the key's frame).
 */
export interface ListRows {
  readonly length: number;
  at(i: number): string | { readonly id: string } | undefined;
}

export function idAt(rows: ListRows, i: number): string | undefined {
  // (`at` counts a negative index from the end)
  const x = i < 0 ? undefined : rows.at(i);
  return typeof x === 'string' ? x : x?.id;
}

export type NavAction =
  | { type: 'move'; delta: number; rows: ListRows; page: number }
  | { type: 'home'; rows: ListRows; page: number }
  | { type: 'end'; rows: ListRows; page: number }
  | { type: 'reset' };

function clamp(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, v));
}

/** Index of the selected row in `rows` (the id's position, else the remembered cursor clamped). */
export function selectedIndex(nav: ListNav, rows: ListRows): number {
  if (rows.length === 0) return -1;
  if (nav.selectedId !== null) {
    // The cursor is usually still right; only search when the rows moved.
    if (idAt(rows, nav.cursor) === nav.selectedId) return nav.cursor;
    for (let i = 0; i < rows.length; i++) if (idAt(rows, i) === nav.selectedId) return i;
  }
  return clamp(nav.cursor, 0, rows.length - 1);
}

/** The first visible row for a list of `count` rows with `page` visible, keeping `index` in view. */
export function visibleOffset(offset: number, index: number, count: number, page: number): number {
  const maxOffset = Math.max(0, count - page);
  let o = clamp(offset, 0, maxOffset);
  if (index >= 0) {
    if (index < o) o = index;
    else if (index >= o + page) o = index - page + 1;
  }
  return clamp(o, 0, maxOffset);
}

function place(nav: ListNav, rows: ListRows, index: number, page: number): ListNav {
  if (rows.length === 0) return { selectedId: null, cursor: 0, offset: 0 };
  const i = clamp(index, 0, rows.length - 1);
  const current = visibleOffset(nav.offset, selectedIndex(nav, rows), rows.length, page);
  return { selectedId: idAt(rows, i)!, cursor: i, offset: visibleOffset(current, i, rows.length, page) };
}

export function navReducer(nav: ListNav, action: NavAction): ListNav {
  switch (action.type) {
    case 'move':
      return place(nav, action.rows, selectedIndex(nav, action.rows) + action.delta, action.page);
    case 'home':
      return place(nav, action.rows, 0, action.page);
    case 'end':
      return place(nav, action.rows, action.rows.length - 1, action.page);
    case 'reset':
      return INITIAL_NAV;
  }
}
