/**
 * The header of the directory view: title and load state, the totals in the words of every
 * command's summary (../render/summary-text.ts), sort, filter and the range shown. Used by the Ink view
 * and by `watch --once`.
 */
import type { Styles } from '../render/styles.js';
import type { ErrorFacts } from '../../src/errors.js';
import { describeErrorFacts } from '../cli/errors.js';
import { conditionTokens, statusTokens, verdictTokens } from '../render/summary-text.js';
import type { DirectoryTotals, RowFilter, SortMode } from '../../src/watch/rows.js';
import { SORT_LABEL } from '../../src/watch/rows.js';
import { cellWidth as stringWidth } from './cells.js';
import { padEnd } from './fit-text.js';

/** Lines of the directory view above its rows: title, two lines of totals, sort/filter line, column heading. */
export const HEADER_HEIGHT = 5;

/** Rows of the directory view's list in a view of `height` lines. */
export function listHeight(height: number): number {
  return Math.max(1, height - HEADER_HEIGHT);
}

/**
 * The live view's heights on a terminal of `rows` lines: the whole app (one line short of the
 * terminal), the view above the footer, and the directory view's list of rows.
 */
export function viewHeights(rows: number): { total: number; view: number; page: number } {
  const total = Math.max(3, rows - 1);
  const view = total - 1;
  return { total, view, page: listHeight(view) };
}

export interface HeaderInfo {
  dir: string;
  totals: DirectoryTotals;
  pending: number;
  /** Rollouts waiting for a lock another process holds (read in the background; default 0). */
  lockWaits?: number;
  ready: boolean;
  scanError?: ErrorFacts;
  sort: SortMode;
  filter: RowFilter;
  shown: number;
  first: number;
  last: number;
}

export function filterLabel(f: RowFilter): string {
  const parts: string[] = [];
  if (f.masked) parts.push('masked');
  if (f.incomplete) parts.push('incomplete');
  if (f.dangling) parts.push('dangling');
  if (f.search !== '') parts.push(`id~"${f.search}"`);
  return parts.length ? parts.join(' + ') : 'none';
}

/** The header of the directory view: title, totals (two lines at most), sort and filter. */
export function headerLines(h: HeaderInfo, width: number, styles: Styles): string[] {
  const t = h.totals;
  // A DIR removed or made unreadable while watched: in the words of the error line (../cli/errors.ts).
  const scanError = h.scanError === undefined ? undefined : describeErrorFacts(h.scanError);
  const waits = !scanError && h.lockWaits ? `, ${h.lockWaits} waiting for lock` : '';
  const status =
    (scanError
      ? styles.error(`cannot list: ${scanError}`)
      : !h.ready
        ? styles.warn(`reading ${t.loaded}/${t.rollouts}`)
        : h.pending > 0
          ? styles.dim(`updating ${h.pending}`)
          : styles.ok('up to date')) + (waits && styles.warn(waits));
  const statusPlain =
    (scanError
      ? `cannot list: ${scanError}`
      : !h.ready
        ? `reading ${t.loaded}/${t.rollouts}`
        : h.pending > 0
          ? `updating ${h.pending}`
          : 'up to date') + waits;
  const titleRoom = Math.max(10, width - stringWidth(statusPlain) - 1);
  const title = padEnd(`tokcap watch ${h.dir}`, titleRoom);
  const lines = [styles.heading(title) + ' ' + (stringWidth(statusPlain) + 1 + titleRoom <= width ? status : '')];
  const n = (v: number, label: string, warn = false) => {
    const text = `${v} ${label}`;
    return { text, styled: v > 0 && warn ? styles.warn(text) : text };
  };
  const sum = t.summary;
  const tokens = [
    // Rows not read yet are not counted by status: the first token counts every rollout listed.
    { text: `${t.rollouts} rollouts`, styled: styles.heading(`${t.rollouts} rollouts`) },
    ...statusTokens(sum, styles).slice(1),
    ...verdictTokens(sum, styles),
    // What a narrow terminal cannot fit is cut from here on (two lines at most).
    ...conditionTokens(sum, styles),
    n(t.invalidNames, 'invalid names', true),
  ];
  lines.push(...packStyled(tokens, width).slice(0, 2));
  const range = h.shown === 0 ? '0 shown' : `${h.first}-${h.last} of ${h.shown}`;
  const left = `sort: ${SORT_LABEL[h.sort]}  filter: ${filterLabel(h.filter)}`;
  lines.push(styles.dim(padEnd(left, Math.max(0, width - range.length - 1)) + ' ' + range));
  return lines;
}

/** Tokens packed into lines of at most `width` cells (measured on the plain text, emitted styled). */
function packStyled(tokens: readonly { text: string; styled: string }[], width: number, sep = '  '): string[] {
  const lines: string[] = [];
  let plain = '';
  let styled = '';
  for (const t of tokens) {
    if (plain !== '' && stringWidth(plain + sep + t.text) > width) {
      lines.push(styled);
      plain = '';
      styled = '';
    }
    plain = plain === '' ? t.text : plain + sep + t.text;
    styled = styled === '' ? t.styled : styled + sep + t.styled;
  }
  if (plain !== '') lines.push(styled);
  return lines;
}
