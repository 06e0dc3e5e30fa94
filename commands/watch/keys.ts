/**
 * What each key does, as a pure function of the view state: `reduceKey(ui, input, key, ctx)`.
 * The App applies it to a state it also keeps in a ref, so that keys arriving together (fast
 * typing, a paste, `tmux send-keys`) are applied one after the other, each on the result of the
 * previous one, without waiting for a render (a search typed and then Enter opens the first
 * match, not whatever was selected before).
 */
import type { Key } from 'ink';
import { NO_FILTER, nextSortMode, type RowFilter, type SortMode } from '../../src/watch/rows.js';
import { INITIAL_NAV, idAt, navReducer, selectedIndex, type ListNav, type ListRows } from './navigation.js';

import type { Screen } from './key-help.js';

export type { Screen };

export interface UiState {
  readonly screen: Screen;
  readonly help: boolean;
  /** The search being typed, or null when not in search mode. */
  readonly searchDraft: string | null;
  readonly filter: RowFilter;
  readonly sort: SortMode;
  readonly nav: ListNav;
  /** The rollout shown in the rollout view. */
  readonly openId: string | null;
  /** First line shown in the rollout view. */
  readonly detailOffset: number;
  /** The call (index in the rollout's chain tree) whose text the rollout view shows; null: the rollout. */
  readonly callIndex: number | null;
  readonly quit: boolean;
}

export function initialUi(sort: SortMode = 'recent'): UiState {
  return {
    screen: 'list',
    help: false,
    searchDraft: null,
    filter: NO_FILTER,
    sort,
    nav: INITIAL_NAV,
    openId: null,
    detailOffset: 0,
    callIndex: null,
    quit: false,
  };
}

export interface KeyContext {
  /** The rows the list shows for a filter and sort, in display order (or their ids). */
  rows(filter: RowFilter, sort: SortMode): ListRows;
  /** Rows in a page of the list. */
  page: number;
  /** Lines in a page of the rollout view. */
  detailPage: number;
  /** The largest useful first line of the rollout view. */
  detailMax: number;
  /** Calls of the open rollout's chain tree (what `t` and `T` step through). */
  callCount?: number;
}

export const PLAIN_KEY: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
  super: false,
  hyper: false,
  capsLock: false,
  numLock: false,
};

/**
 * Ctrl-C as the terminal sends it in raw mode. Ink quits on it only when it arrives alone; in a
 * chunk with other keys (typed ahead, pasted, sent by tmux) it reaches the App as one character.
 */
const CTRL_C = '\u0003';

/** The key of one character of a chunk that arrived at once (Enter, Esc, Backspace or plain). */
export function keyOf(ch: string): Key {
  if (ch === CTRL_C) return { ...PLAIN_KEY, ctrl: true };
  if (ch === '\r' || ch === '\n') return { ...PLAIN_KEY, return: true };
  if (ch === '\u001b') return { ...PLAIN_KEY, escape: true };
  if (ch === '\u007f') return { ...PLAIN_KEY, delete: true };
  if (ch === '\b') return { ...PLAIN_KEY, backspace: true };
  return PLAIN_KEY;
}

/** Splits what Ink delivered into single keys: a chunk of plain characters becomes one key each. */
export function splitKeys(input: string, key: Key): [string, Key][] {
  // eslint-disable-next-line no-control-regex -- backspace and DEL are what terminals send for erasing
  if (input.length > 1 && !key.ctrl && !key.meta && !/^[\u0008\u007f]+$/.test(input))
    return [...input].map((ch) => [ch, keyOf(ch)]);
  return [[input, key]];
}

/** Characters a rollout id can have (docs/format.md#rollout-ids): nothing else can match a search. */
const ID_CHARS = /[^A-Za-z0-9._-]/g;

export function reduceKey(ui: UiState, input: string, key: Key, ctx: KeyContext): UiState {
  if (input === CTRL_C || (key.ctrl && input === 'c')) return { ...ui, quit: true };
  if (ui.searchDraft !== null) return searchKey(ui, input, key);
  if (input === 'q') return { ...ui, quit: true };
  if (ui.help) return input === '?' || key.escape || key.return ? { ...ui, help: false } : ui;
  if (input === '?') return { ...ui, help: true };
  if (ui.screen === 'detail') return detailKey(ui, input, key, ctx);

  const rows = ctx.rows(ui.filter, ui.sort);
  // The selection follows the rollout the user moved it to, also while the first load places and
  // re-sorts rows (navigation.ts); untouched, it stays on the top row.
  const nav = (action: Parameters<typeof navReducer>[1]): UiState => ({ ...ui, nav: navReducer(ui.nav, action) });
  const page = ctx.page;
  if (key.upArrow || input === 'k') return nav({ type: 'move', delta: -1, rows, page });
  if (key.downArrow || input === 'j') return nav({ type: 'move', delta: 1, rows, page });
  if (key.pageUp) return nav({ type: 'move', delta: -page, rows, page });
  if (key.pageDown || input === ' ') return nav({ type: 'move', delta: page, rows, page });
  if (key.home || input === 'g') return nav({ type: 'home', rows, page });
  if (key.end || input === 'G') return nav({ type: 'end', rows, page });
  if (key.return || key.rightArrow) {
    const i = selectedIndex(ui.nav, rows);
    return i < 0 ? ui : { ...ui, screen: 'detail', openId: idAt(rows, i)!, detailOffset: 0, callIndex: null };
  }
  if (input === '/') return { ...ui, searchDraft: ui.filter.search };
  if (input === 'm') return { ...ui, filter: { ...ui.filter, masked: !ui.filter.masked } };
  if (input === 'i') return { ...ui, filter: { ...ui.filter, incomplete: !ui.filter.incomplete } };
  if (input === 'd') return { ...ui, filter: { ...ui.filter, dangling: !ui.filter.dangling } };
  if (input === 's') return { ...ui, sort: nextSortMode(ui.sort) };
  if (key.escape) return { ...ui, filter: NO_FILTER };
  return ui;
}

function searchKey(ui: UiState, input: string, key: Key): UiState {
  const draft = ui.searchDraft ?? '';
  const set = (search: string, searchDraft: string | null): UiState => ({
    ...ui,
    searchDraft,
    filter: { ...ui.filter, search },
  });
  if (key.escape) return set('', null);
  if (key.return) return { ...ui, searchDraft: null };
  // eslint-disable-next-line no-control-regex -- backspace and DEL are what terminals send for erasing
  if (key.backspace || key.delete || /^[\u0008\u007f]+$/.test(input)) {
    const count = key.backspace || key.delete ? Math.max(1, input.length) : input.length;
    const next = draft.slice(0, Math.max(0, draft.length - count));
    return set(next, next);
  }
  if (input && !key.ctrl && !key.meta && !key.upArrow && !key.downArrow) {
    const typed = input.replace(ID_CHARS, '');
    if (typed !== '') return set(draft + typed, draft + typed);
  }
  return ui;
}

function detailKey(ui: UiState, input: string, key: Key, ctx: KeyContext): UiState {
  const back = key.escape || key.leftArrow || key.backspace || key.delete;
  // A call's text closes back to its rollout, the rollout back to the list.
  if (back && ui.callIndex !== null) return { ...ui, callIndex: null, detailOffset: 0 };
  if (back) return { ...ui, screen: 'list' };
  const calls = ctx.callCount ?? 0;
  if ((input === 't' || input === 'T') && calls > 0) {
    const step = input === 't' ? 1 : -1;
    const at = ui.callIndex === null ? (step > 0 ? 0 : calls - 1) : (ui.callIndex + step + calls) % calls;
    return { ...ui, callIndex: at, detailOffset: 0 };
  }
  const max = ctx.detailMax;
  const base = Math.min(ui.detailOffset, max);
  const to = (offset: number): UiState => ({ ...ui, detailOffset: Math.max(0, Math.min(max, offset)) });
  const page = Math.max(1, ctx.detailPage - 1);
  if (key.upArrow || input === 'k') return to(base - 1);
  if (key.downArrow || input === 'j') return to(base + 1);
  if (key.pageUp) return to(base - page);
  if (key.pageDown || input === ' ') return to(base + page);
  if (key.home || input === 'g') return to(0);
  if (key.end || input === 'G') return to(max);
  return ui;
}
