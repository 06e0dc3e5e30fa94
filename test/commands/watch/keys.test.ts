import { describe, expect, it } from 'vitest';
import { NO_FILTER, type RowFilter, type SortMode } from '../../../src/watch/rows.js';
import {
  initialUi,
  keyOf,
  PLAIN_KEY,
  reduceKey,
  splitKeys,
  type KeyContext,
  type UiState,
} from '../../../commands/watch/keys.js';
import { navReducer, selectedIndex, visibleOffset, INITIAL_NAV } from '../../../commands/watch/navigation.js';

const ALL = ['r7', 'r6', 'r5', 'r4', 'r3', 'r2', 'r1', 'r0'];
const ctx: KeyContext = {
  rows: (f: RowFilter, s: SortMode) => {
    const ids = ALL.filter((id) => id.includes(f.search) && (!f.masked || ['r7', 'r4', 'r1'].includes(id)));
    return s === 'id' ? [...ids].sort() : ids;
  },
  page: 3,
  detailPage: 10,
  detailMax: 25,
};

/** Types `input` as Ink would deliver it: one key, or a chunk of several. */
function type(ui: UiState, input: string): UiState {
  for (const [i, k] of splitKeys(input, input.length === 1 ? keyOf(input) : PLAIN_KEY)) ui = reduceKey(ui, i, k, ctx);
  return ui;
}

describe('reduceKey', () => {
  it('quits on Ctrl-C that arrives with other keys, also while a search is typed', () => {
    expect(type(initialUi(), '/r4\r\r\u0003')).toMatchObject({ screen: 'detail', quit: true });
    expect(type(initialUi(), '/r\u0003')).toMatchObject({ quit: true });
  });

  it('applies keys that arrive together one after the other', () => {
    const ui = type(initialUi(), '/r4\r\r');
    expect(ui).toMatchObject({
      screen: 'detail',
      openId: 'r4',
      searchDraft: null,
      filter: { ...NO_FILTER, search: 'r4' },
    });
    expect(type(initialUi(), 'jjj\r').openId).toBe('r4');
  });

  it('moves by row, page, home and end, and opens the selection', () => {
    let ui = type(initialUi(), 'j');
    expect(selectedIndex(ui.nav, ALL)).toBe(1);
    ui = reduceKey(ui, '', { ...PLAIN_KEY, pageDown: true }, ctx);
    expect(selectedIndex(ui.nav, ALL)).toBe(4);
    ui = type(ui, 'G');
    expect(ui.nav).toMatchObject({ selectedId: 'r0', offset: 5 });
    ui = type(ui, 'g');
    expect(ui.nav).toMatchObject({ selectedId: 'r7', offset: 0 });
    ui = reduceKey(ui, '', { ...PLAIN_KEY, upArrow: true }, ctx);
    expect(ui.nav.selectedId).toBe('r7');
  });

  it('filters, sorts, clears with Esc; search keeps id characters only', () => {
    let ui = type(initialUi(), 'm');
    expect(ui.filter.masked).toBe(true);
    ui = type(ui, 's');
    expect(ui.sort).toBe('id');
    ui = reduceKey(ui, '', { ...PLAIN_KEY, escape: true }, ctx);
    expect(ui.filter).toEqual(NO_FILTER);
    ui = type(ui, '/');
    ui = type(ui, 'r 4/!');
    expect(ui.searchDraft).toBe('r4');
    ui = reduceKey(ui, '\u007f', { ...PLAIN_KEY, delete: true }, ctx);
    expect(ui.filter.search).toBe('r');
    ui = reduceKey(ui, '', { ...PLAIN_KEY, escape: true }, ctx);
    expect(ui).toMatchObject({ searchDraft: null, filter: NO_FILTER });
  });

  it('scrolls the rollout view within bounds and goes back', () => {
    let ui = type(initialUi(), '\r');
    expect(ui.screen).toBe('detail');
    ui = reduceKey(ui, '', { ...PLAIN_KEY, pageDown: true }, ctx);
    expect(ui.detailOffset).toBe(9);
    ui = type(ui, 'G');
    expect(ui.detailOffset).toBe(25);
    ui = type(ui, 'jjj');
    expect(ui.detailOffset).toBe(25);
    ui = type(ui, 'g');
    expect(ui.detailOffset).toBe(0);
    ui = reduceKey(ui, '', { ...PLAIN_KEY, escape: true }, ctx);
    expect(ui.screen).toBe('list');
  });

  it('help and quit', () => {
    let ui = type(initialUi(), '?');
    expect(ui.help).toBe(true);
    expect(type(ui, 'j')).toBe(ui); // keys do nothing under the help
    ui = type(ui, '?');
    expect(ui.help).toBe(false);
    expect(type(ui, 'q').quit).toBe(true);
    expect(type(type(initialUi(), '/'), 'q').quit).toBe(false); // a search may contain q
  });
});

describe('selection during the first load', () => {
  it('stays on the rollout the user moved it to as rows are placed and re-sorted; untouched, on the top row', () => {
    const ui = reduceKey(initialUi(), 'j', PLAIN_KEY, ctx);
    expect(ui.nav).toMatchObject({ selectedId: ALL[1], cursor: 1 });
    // A row placed above it, then the rows re-sorted: the same rollout, wherever it went.
    expect(selectedIndex(ui.nav, ['r8', ...ALL])).toBe(2);
    expect(selectedIndex(ui.nav, [...ALL].reverse())).toBe(ALL.length - 2);
    // Before any key the selection is the top row, whichever rollout that is.
    expect(selectedIndex(initialUi().nav, ['r8', ...ALL])).toBe(0);
  });
});

describe('navigation', () => {
  it('keeps the selected rollout when the rows move, and keeps it in view', () => {
    let nav = navReducer(INITIAL_NAV, { type: 'move', delta: 2, rows: ALL, page: 3 });
    expect(nav).toEqual({ selectedId: 'r5', cursor: 2, offset: 0 });
    const moved = ['r5', ...ALL.filter((id) => id !== 'r5')];
    expect(selectedIndex(nav, moved)).toBe(0);
    nav = navReducer(nav, { type: 'move', delta: 4, rows: ALL, page: 3 });
    expect(nav).toEqual({ selectedId: 'r1', cursor: 6, offset: 4 });
    expect(selectedIndex(nav, ['r0', 'r2'])).toBe(1); // gone: the position is kept, clamped
    expect(visibleOffset(0, 7, 8, 3)).toBe(5);
    expect(visibleOffset(5, 0, 8, 3)).toBe(0);
    expect(visibleOffset(9, -1, 2, 3)).toBe(0);
  });

  it('takes the rows themselves as well as their ids (no list of every id per key)', () => {
    const rows = ALL.map((id) => ({ id }));
    const rowCtx: KeyContext = { ...ctx, rows: (f, s) => (ctx.rows(f, s) as string[]).map((id) => ({ id })) };
    expect(navReducer(INITIAL_NAV, { type: 'move', delta: 2, rows, page: 3 })).toEqual(
      navReducer(INITIAL_NAV, { type: 'move', delta: 2, rows: ALL, page: 3 }),
    );
    expect(navReducer(INITIAL_NAV, { type: 'end', rows, page: 3 })).toEqual({ selectedId: 'r0', cursor: 7, offset: 5 });
    let ui = initialUi();
    for (const [i, k] of splitKeys('jj\r', PLAIN_KEY)) ui = reduceKey(ui, i, k, rowCtx);
    expect(ui).toMatchObject({ screen: 'detail', openId: 'r5' });
  });
});
