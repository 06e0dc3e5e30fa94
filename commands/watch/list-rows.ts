/**
 * The rows of the directory view: the column heading and one fixed-width line per rollout, from
 * the model's rows (no React, no filesystem). The Ink view renders these lines and `watch --once`
 * prints them, so the live view and the one-shot rendering cannot drift apart. Widths are
 * measured on the plain text; colour comes after padding, through the semantic styles.
 */
import type { Styles } from '../render/styles.js';
import { formatAgeSince } from '../cli/shared.js';
import { couldNotBeRead } from '../cli/errors.js';
import type { MaskCause } from '../../src/chains/mask-causes.js';
import type { RolloutRow } from '../../src/watch/rows.js';
import { padEnd, padStart, truncate } from './fit-text.js';

/** Rows that changed less than this long ago are highlighted. */
export const HIGHLIGHT_MS = 5000;

const CAUSE_LABEL: Record<MaskCause['code'], string> = {
  no_records: 'no records',
  build_error: 'build failed',
  capture_incomplete: 'marked incomplete',
  dangling_intents: 'dangling intents',
  unresolved_retries: 'unresolved retry',
  unresolved_parent_calls: 'unresolved parent',
  roots_not_one: 'roots ≠ 1',
  chains_not_one: 'chains ≠ 1',
  empty_delivery: 'empty delivery',
};

export function causeLabel(c: MaskCause): string {
  return CAUSE_LABEL[c.code] ?? c.code;
}

export interface Columns {
  id: number;
  mask: number;
}

/** Fixed columns after the id: status, calls, dangling, incomplete markers, version, age. */
const FIXED = [
  { title: 'STATUS', width: 11, align: 'left' },
  { title: 'CALLS', width: 5, align: 'right' },
  { title: 'DANG', width: 4, align: 'right' },
  { title: 'INC', width: 3, align: 'right' },
  { title: 'VER', width: 4, align: 'right' },
  { title: 'AGE', width: 4, align: 'right' },
] as const;
const MARK_WIDTH = 2;
const FIXED_WIDTH = FIXED.reduce((s, c) => s + c.width + 1, 0);

/** Splits the width between the id and the mask column (the id gets what it needs, within limits). */
export function columnsFor(width: number, longestId: number): Columns {
  const rest = width - MARK_WIDTH - FIXED_WIDTH - 1;
  const id = Math.max(7, Math.min(Math.max(longestId, 7), 40, rest - 10));
  return { id, mask: Math.max(4, rest - id) };
}

export function columnHeading(cols: Columns): string {
  let line = ' '.repeat(MARK_WIDTH) + padEnd('ROLLOUT', cols.id) + ' ';
  for (const c of FIXED) line += (c.align === 'left' ? padEnd(c.title, c.width) : padStart(c.title, c.width)) + ' ';
  return line + padEnd('WOULD MASK', cols.mask);
}

export interface RowLineOptions {
  now: number;
  selected: boolean;
  cols: Columns;
  styles: Styles;
  /**
   * Whether the last column is padded to its width (default true). The live view pads only the
   * selected row, whose highlight spans the line: elsewhere the padding is blank cells that Ink
   * would process character by character in each frame (about half of a row's characters).
   */
  padLast?: boolean;
  /** Since when (the clock of `now`) the rollout waits for a lock another process holds, if it does. */
  lockWaitSince?: number;
}

/** A wait for a lock, counted in whole seconds. */
export function lockWaitText(now: number, since: number): string {
  return `waiting for lock (${Math.max(0, Math.floor((now - since) / 1000))}s)`;
}

/** The mask column's plain text and style of a row. */
function maskCell(
  r: RolloutRow,
  now: number,
  lockWaitSince: number | undefined,
): { text: string; tone: 'error' | 'masked' | 'ok' | 'dim' } {
  if (lockWaitSince !== undefined) {
    // Waiting again after a wait that failed: why the last read failed comes after.
    const wait = lockWaitText(now, lockWaitSince);
    return r.error ? { text: `${wait}; ${couldNotBeRead(r.error)}`, tone: 'error' } : { text: wait, tone: 'dim' };
  }
  if (r.error) return { text: couldNotBeRead(r.error), tone: 'error' };
  if (!r.loaded) return { text: '…', tone: 'dim' };
  if (r.wouldMask === null) return { text: '-', tone: 'dim' };
  if (!r.wouldMask) return { text: 'no', tone: 'ok' };
  const first = r.causes[0];
  const more = r.causes.length > 1 ? ` +${r.causes.length - 1}` : '';
  return { text: `masked: ${first ? causeLabel(first) : '?'}${more}`, tone: 'masked' };
}

/** One row of the directory list, exactly `MARK_WIDTH + cols + …` cells wide (less, unpadded, without `padLast`). */
export function rowLine(
  r: RolloutRow,
  { now, selected, cols, styles, padLast = true, lockWaitSince }: RowLineOptions,
): string {
  const recent = r.changedAt !== null && now - r.changedAt < HIGHLIGHT_MS;
  const mark = (selected ? '›' : ' ') + (recent ? '•' : ' ');
  const cells: string[] = [];
  const loaded = r.loaded;
  cells.push(padEnd(loaded ? r.status : '…', FIXED[0].width));
  // `-`: not read (an unavailable rollout, a state that did not parse), never a made-up 0.
  const unread = r.status === 'unavailable';
  const shown = (n: number | null) => (!loaded ? '' : n === null ? '-' : String(n));
  cells.push(padStart(shown(unread ? null : r.calls), FIXED[1].width));
  cells.push(padStart(shown(unread ? null : r.danglingIntents.length), FIXED[2].width));
  cells.push(padStart(shown(unread ? null : r.incompleteMarkers.length), FIXED[3].width));
  cells.push(padStart(shown(unread ? null : r.version), FIXED[4].width));
  cells.push(padStart(formatAgeSince(now, r.mtimeMs), FIXED[5].width));
  const mask = maskCell(r, now, lockWaitSince);
  const maskText = padLast ? padEnd(mask.text, cols.mask) : truncate(mask.text, cols.mask);

  const s = styles;
  const state = loaded ? s.badge(r.status) + cells[0].slice(r.status.length) : s.dim(cells[0]);
  const dang = r.danglingIntents.length > 0 ? s.warn(cells[2]) : cells[2];
  const inc = r.incompleteMarkers.length > 0 ? s.warn(cells[3]) : cells[3];
  const maskStyled =
    mask.tone === 'error'
      ? s.error(maskText)
      : mask.tone === 'masked'
        ? maskText.startsWith('masked')
          ? s.badge('masked') + maskText.slice('masked'.length)
          : maskText
        : mask.tone === 'ok'
          ? s.ok(maskText)
          : s.dim(maskText);
  const body = `${padEnd(r.id, cols.id)} ${state} ${cells[1]} ${dang} ${inc} ${cells[4]} ${s.dim(cells[5])} ${maskStyled}`;
  let line = (recent ? s.warn(mark) : mark) + body;
  if (recent) line = s.bold(line);
  if (selected) line = s.inverse(line);
  return line;
}
