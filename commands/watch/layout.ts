/**
 * Text layout of the watch view: fixed-width lines built from model values (no React, no
 * filesystem). The Ink components render these lines, and `watch --once` prints them, so the
 * live view and the one-shot rendering cannot drift apart.
 *
 * Widths are measured in terminal cells on the plain text; colour is applied after padding, and
 * only through the semantic styles (commands/styles.ts), so NO_COLOR / --no-color give plain text.
 */
import { cellWidth as stringWidth, charWidth } from './cells.js';
import { terminalSafe as sanitize } from '../../src/text/terminal-safe.js';
import type { Styles } from '../styles.js';
import { formatAgeSince } from '../shared.js';
import { couldNotBeRead } from '../errors.js';
import { conditionTokens, statusTokens, verdictTokens } from '../summary-text.js';
import type { MaskCause } from '../../src/build/mask-causes.js';
import type { DirectoryTotals, RolloutRow, RowFilter, SortMode } from '../../src/watch/rows.js';
import { SORT_LABEL } from '../../src/watch/rows.js';
import type { DigestCheck, RolloutDetail, TreeNode } from '../../src/status/rollout-detail.js';

/** Rows that changed less than this long ago are highlighted. */
export const HIGHLIGHT_MS = 5000;

// ---------------------------------------------------------------------------------------------
// Cells
// ---------------------------------------------------------------------------------------------

/** Cuts `text` to at most `width` cells, ending with `…` when cut; control characters are escaped. */
export function truncate(raw: string, width: number): string {
  if (width <= 0) return '';
  const text = sanitize(raw);
  if (stringWidth(text) <= width) return text;
  let out = '';
  let w = 0;
  for (const ch of text) {
    const cw = charWidth(ch);
    if (w + cw > width - 1) break;
    out += ch;
    w += cw;
  }
  return out + '…';
}

export function padEnd(text: string, width: number): string {
  const t = truncate(text, width);
  return t + ' '.repeat(Math.max(0, width - stringWidth(t)));
}

export function padStart(text: string, width: number): string {
  const t = truncate(text, width);
  return ' '.repeat(Math.max(0, width - stringWidth(t))) + t;
}

/** Greedy word wrap to `width` cells; words longer than a line are cut. */
export function wrapText(text: string, width: number, indent = ''): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of sanitize(text).split(/\s+/).filter(Boolean)) {
    const candidate = line === '' ? word : `${line} ${word}`;
    if (stringWidth(candidate) <= width || line === '') {
      line = stringWidth(candidate) <= width ? candidate : truncate(candidate, width);
    } else {
      lines.push(line);
      line = indent + word;
      if (stringWidth(line) > width) line = truncate(line, width);
    }
  }
  if (line !== '' || lines.length === 0) lines.push(line);
  return lines;
}

/** A call id as the view shows it: the empty one as `""`. */
export function showId(id: string): string {
  return id === '' ? '""' : sanitize(id);
}

// ---------------------------------------------------------------------------------------------
// Directory view
// ---------------------------------------------------------------------------------------------

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
}

/** The mask column's plain text and style of a row. */
function maskCell(r: RolloutRow): { text: string; tone: 'error' | 'masked' | 'ok' | 'dim' } {
  if (r.error) return { text: couldNotBeRead(r.error), tone: 'error' };
  if (!r.loaded) return { text: '…', tone: 'dim' };
  if (r.wouldMask === null) return { text: '-', tone: 'dim' };
  if (!r.wouldMask) return { text: 'no', tone: 'ok' };
  const first = r.causes[0];
  const more = r.causes.length > 1 ? ` +${r.causes.length - 1}` : '';
  return { text: `masked: ${first ? causeLabel(first) : '?'}${more}`, tone: 'masked' };
}

/** One row of the directory list, exactly `MARK_WIDTH + cols + …` cells wide. */
export function rowLine(r: RolloutRow, { now, selected, cols, styles }: RowLineOptions): string {
  const recent = r.changedAt !== null && now - r.changedAt < HIGHLIGHT_MS;
  const mark = (selected ? '›' : ' ') + (recent ? '•' : ' ');
  const cells: string[] = [];
  const loaded = r.loaded;
  cells.push(padEnd(loaded ? r.status : '…', FIXED[0].width));
  cells.push(padStart(loaded ? String(r.calls) : '', FIXED[1].width));
  cells.push(padStart(loaded ? String(r.danglingIntents.length) : '', FIXED[2].width));
  cells.push(padStart(loaded ? String(r.incompleteMarkers.length) : '', FIXED[3].width));
  cells.push(padStart(loaded ? String(r.version) : '', FIXED[4].width));
  cells.push(padStart(formatAgeSince(now, r.mtimeMs), FIXED[5].width));
  const mask = maskCell(r);
  const maskText = padEnd(mask.text, cols.mask);

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

export interface HeaderInfo {
  dir: string;
  totals: DirectoryTotals;
  pending: number;
  ready: boolean;
  scanError?: string;
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
  const status = h.scanError
    ? styles.error(`cannot list: ${h.scanError}`)
    : !h.ready
      ? styles.warn(`reading ${t.loaded}/${t.rollouts}`)
      : h.pending > 0
        ? styles.dim(`updating ${h.pending}`)
        : styles.ok('up to date');
  const statusPlain = h.scanError ? `cannot list: ${h.scanError}` : !h.ready ? `reading ${t.loaded}/${t.rollouts}` : h.pending > 0 ? `updating ${h.pending}` : 'up to date';
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

// ---------------------------------------------------------------------------------------------
// Rollout view
// ---------------------------------------------------------------------------------------------

export function digestText(d: DigestCheck): string {
  if (d.status === 'ok') return 'digest ok';
  if (d.status === 'unchecked') return 'digest ?';
  return `digest ${d.codes.join(',')}`;
}

const OUTCOME_TEXT: Record<TreeNode['outcome'], string> = {
  root: 'root',
  linked: 'resolved',
  recovered: 'recovered',
  boundary: 'unresolved',
};

/** The tree-drawing prefix of a node: guides of its ancestors, then its own connector. */
export function treePrefix(n: TreeNode): string {
  if (n.depth === 0) return '● ';
  let p = '';
  for (const g of n.guides) p += g ? '│  ' : '   ';
  return p + (n.last ? '└─ ' : '├─ ');
}

export function nodeLine(n: TreeNode, width: number, styles: Styles): string {
  const prompt = n.promptLength === null ? 'prompt ?' : n.storedAsDelta ? `prompt ${n.promptLength} (Δ${n.storedPromptLength})` : `prompt ${n.promptLength} full`;
  const marks: string[] = [];
  if (n.onMain) marks.push('main');
  if (n.quarantined) marks.push('quarantined retry');
  if (n.unresolvedRetry) marks.push('unresolved retry');
  if (n.duplicateCopies > 0) marks.push(`${n.duplicateCopies} dup${n.conflictingCopies ? `, ${n.conflictingCopies} conflicting` : ''}`);
  const outcome = OUTCOME_TEXT[n.outcome] + (n.outcome === 'boundary' && n.reason ? ` (${n.reason})` : n.outcome === 'recovered' ? ` (claimed ${showId(n.claimedParentId ?? '')})` : '');
  const parts = [`${treePrefix(n)}${showId(n.id)}`, outcome, prompt, `gen ${n.generationLength}`, digestText(n.digest)];
  const plain = truncate(parts.join('  ') + (marks.length ? `  [${marks.join('] [')}]` : ''), width);
  let styled = plain;
  if (n.unresolvedBoundary || n.digest.status === 'findings') styled = n.digest.status === 'findings' && n.digest.severity === 'error' ? styles.error(plain) : styles.warn(plain);
  else if (n.quarantined || n.unresolvedRetry) styled = styles.warn(plain);
  else if (n.onMain) styled = styles.ok(plain);
  return styled;
}

function section(title: string, width: number, styles: Styles): string {
  const head = `── ${title} `;
  return styles.heading(head + '─'.repeat(Math.max(0, width - stringWidth(head))));
}

/** Every line of the rollout view (scrolled by the component). */
export function detailLines(d: RolloutDetail, width: number, now: number, styles: Styles): string[] {
  const out: string[] = [];
  const f = d.facts;
  const badge = styles.badge(d.status.status);
  const head = `rollout ${d.id}`;
  const files = f ? f.files.map((s) => s.replace(/^\.tokens\./, '').replace(/\.json$/, '')).join('+') : '';
  const meta = f ? `  v${f.version}  ${f.entries} calls  files ${files || 'none'}  changed ${formatAgeSince(now, f.mtime_ms)} ago` : '';
  out.push(styles.heading(truncate(head, width - 12)) + ' ' + badge + truncate(meta, Math.max(0, width - stringWidth(head) - d.status.status.length - 1)));
  if (d.status.conditions.length) out.push(`conditions: ${d.status.conditions.map((c) => styles.badge(c)).join(' ')}`);
  if (d.status.error) out.push(styles.error(truncate(couldNotBeRead(d.status.error), width)));
  if (f?.snapshot_id) out.push(styles.dim(truncate(`snapshot ${f.snapshot_id}${f.frozen ? ' (frozen)' : ''}`, width)));

  out.push(section(`chain tree (${d.tree.length} placed call${d.tree.length === 1 ? '' : 's'}, ${d.chains.length} chain${d.chains.length === 1 ? '' : 's'})`, width, styles));
  if (d.tree.length === 0) out.push(styles.dim(d.verdict.built ? '  no placed calls' : '  not built (the rollout could not be read)'));
  for (const n of d.tree) out.push(nodeLine(n, width, styles));
  for (const u of d.unplaced) out.push(styles.warn(truncate(`✗ ${showId(u.id)}  not placed: ${u.detail}  ${digestText(u.digest)}`, width)));
  if (d.chains.length > 1) {
    for (const c of d.chains) out.push(styles.dim(truncate(`  ${c.name}: ${c.callIds.map(showId).join(' → ')}`, width)));
  }

  out.push(section(`dangling intents (${d.danglingIntents.length})`, width, styles));
  if (d.danglingIntents.length === 0) out.push(styles.dim('  none'));
  for (const id of d.danglingIntents) out.push(styles.warn(truncate(`  ${showId(id)}  intent without entry (dispatched, never captured)`, width)));

  const markerTitle = `incomplete markers (${d.incompleteMarkers.length})${d.incompleteFlag ? ' · state flag set' : ''}`;
  out.push(section(markerTitle, width, styles));
  if (d.incompleteMarkers.length === 0) out.push(styles.dim(d.incompleteFlag ? '  no marker lines (flag set by a conflict or an older writer)' : '  none'));
  for (const id of d.incompleteMarkers) out.push(styles.warn(truncate(`  ${showId(id)}${id === '' ? '  (a call lost before its id was known)' : ''}`, width)));

  if (d.tornTail) {
    out.push(section('torn tail', width, styles));
    const at = d.tornTail.at !== undefined ? ` at byte ${d.tornTail.at}` : '';
    out.push(styles.error(truncate(`  the last line of the record file is torn${at} (a crash mid-append); read-only: left as is, a freeze would truncate it`, width)));
  }

  out.push(section('build verdict (preview, nothing written)', width, styles));
  const v = d.verdict;
  if (!v.built) out.push(styles.dim(truncate(f?.retired ? '  not built: retired tombstone (consumed)' : '  not built', width)));
  else {
    const stats = v.error !== undefined ? `  ${v.nCalls ?? 0} calls` : `  roots ${v.roots}  chains ${v.chains}  calls ${v.nCalls}  delivered ${v.deliveredFraction}`;
    out.push(v.masked ? `  ${styles.badge('masked')}${truncate(` (would be)${stats}`, width - 8)}` : styles.ok(truncate(`  trainable${stats}`, width)));
    if (v.error !== undefined) for (const l of wrapText(`error: ${v.error}`, width - 4, '  ')) out.push(styles.error(`    ${l}`));
    for (const c of v.causes) {
      const wrapped = wrapText(`${c.code}: ${c.message}`, width - 4, '  ');
      wrapped.forEach((l, i) => out.push(i === 0 ? `  • ${l}` : `    ${l}`));
    }
  }

  if (d.rolloutFindings.length > 0 || d.digestError) {
    out.push(section('digest check', width, styles));
    for (const fd of d.rolloutFindings) {
      const line = truncate(`  ${fd.severity} ${fd.code}${fd.line !== undefined ? ` (line ${fd.line})` : ''}: ${fd.message}`, width);
      out.push(fd.severity === 'error' ? styles.error(line) : styles.warn(line));
    }
    if (d.digestError) out.push(styles.error(truncate(`  not checked: ${d.digestError}`, width)));
  }

  if (d.errors.length > 0) {
    out.push(section('read errors', width, styles));
    for (const e of d.errors) for (const l of wrapText(`${e.kind}: ${e.message}`, width - 2, '  ')) out.push(styles.error(`  ${l}`));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Footer and help
// ---------------------------------------------------------------------------------------------

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
  'Anywhere: ? help, q quit.',
  '',
  '• marks a row that changed in the last 5 s. WOULD MASK is what the reference consumer',
  'would decide if the rollout were consumed now, with its first cause (+N more).',
  'Nothing is written: no lock file is created, locks are shared and short.',
];
