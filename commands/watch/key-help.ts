/**
 * What the keys do, in words: the footer's keys line (as many as fit) and the help overlay.
 */
import type { RowFilter } from '../../src/watch/rows.js';
import { cellWidth as stringWidth } from './cells.js';
import { truncate } from './fit-text.js';

export type Screen = 'list' | 'detail';

/** In order of importance: what does not fit is left out (arrows need no explanation). */
const LIST_KEYS: readonly [string, string][] = [
  ['Enter', 'open'],
  ['/', 'search'],
  ['m', 'masked'],
  ['i', 'incomplete'],
  ['d', 'dangling'],
  ['s', 'sort'],
  ['↑↓', 'move'],
  ['PgUp/PgDn', 'page'],
];
const DETAIL_KEYS: readonly [string, string][] = [
  ['↑↓', 'scroll'],
  ['Esc', 'back'],
  ['PgUp/PgDn', 'page'],
  ['t/T', 'call text'],
];
const ALWAYS: readonly [string, string][] = [
  ['?', 'help'],
  ['q', 'quit'],
];

/** The keys line: as many keys as fit, `? help  q quit` always. */
export function footerLine(screen: Screen, width: number, filter: RowFilter): string {
  const keys = screen === 'list' ? LIST_KEYS : DETAIL_KEYS;
  const fmt = ([k, what]: readonly [string, string]) => {
    const on = (k === 'm' && filter.masked) || (k === 'i' && filter.incomplete) || (k === 'd' && filter.dangling);
    return `${k} ${what}${on ? '*' : ''}`;
  };
  const tail = ALWAYS.map(fmt).join('  ');
  let line = '';
  for (const k of keys) {
    const candidate = line === '' ? fmt(k) : `${line}  ${fmt(k)}`;
    if (stringWidth(candidate) + 2 + stringWidth(tail) > width) break;
    line = candidate;
  }
  return truncate(line === '' ? tail : `${line}  ${tail}`, width);
}

export const HELP_LINES: readonly string[] = [
  'tokcap watch: a live, read-only view of a capture directory',
  '',
  'Directory view',
  '  ↑ ↓  j k          move the selection',
  '  PgUp PgDn         move a page',
  '  Home End  g G     first / last rollout',
  '  Enter             open the selected rollout',
  '  /                 search ids (Enter keeps, Esc clears)',
  '  m  i  d           only would-be-masked / incomplete / dangling (toggle)',
  '  s                 sort: recent first, id, state, most calls',
  '  Esc               clear search and filters',
  'Rollout view',
  '  ↑ ↓  PgUp PgDn    scroll        Esc  back',
  '  t  T              the next / previous call as text (generated tokens shaded by log-prob)',
  'Anywhere: ? help, q quit.',
  '',
  '• marks a row that changed in the last 5 s. WOULD MASK is what the reference consumer',
  'would decide if the rollout were consumed now, with its first cause (+N more).',
  'Nothing is written: no lock file is created, locks are shared and short.',
];
