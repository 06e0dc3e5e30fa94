/**
 * Every line of the rollout view (the chain tree, dangling intents, incomplete markers, the build
 * verdict, digest findings, read errors) from the library's rollout detail; `inspect DIR ID`
 * prints the same lines.
 */
import type { Styles } from '../render/styles.js';
import { formatAgeSince, showId } from '../cli/shared.js';
import { couldNotBeRead } from '../cli/errors.js';
import type { DigestCheck, RolloutDetail, TreeNode } from '../../src/rollout-read/rollout-detail.js';
import { knownVersion } from '../../src/status/rollout-status.js';
import { cellWidth as stringWidth } from './cells.js';
import { truncate, wrapText } from './fit-text.js';
import { divergenceLine, windowLines } from '../render/divergence-lines.js';
import type { TokenText } from '../../src/tokenizer/token-text.js';

/** A decoder for a model's ids, when one was loaded (outside the view); null shows ids. */
export type TextsByModel = ReadonlyMap<string, TokenText | null>;

/** A rollout's detail with the decoders its loader found for its models (the live view's). */
export type ShownDetail = RolloutDetail & { readonly texts?: TextsByModel };

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
  const prompt =
    n.promptLength === null
      ? 'prompt ?'
      : n.storedAsDelta
        ? `prompt ${n.promptLength} (Δ${n.storedPromptLength})`
        : `prompt ${n.promptLength} full`;
  const marks: string[] = [];
  if (n.onMain) marks.push('main');
  if (n.quarantined) marks.push('quarantined retry');
  if (n.unresolvedRetry) marks.push('unresolved retry');
  if (n.duplicateCopies > 0)
    marks.push(`${n.duplicateCopies} dup${n.conflictingCopies ? `, ${n.conflictingCopies} conflicting` : ''}`);
  const outcome =
    OUTCOME_TEXT[n.outcome] +
    (n.outcome === 'boundary' && n.reason
      ? ` (${n.reason})`
      : n.outcome === 'recovered'
        ? ` (claimed ${showId(n.claimedParentId ?? '')})`
        : '');
  const parts = [`${treePrefix(n)}${showId(n.id)}`, outcome, prompt, `gen ${n.generationLength}`, digestText(n.digest)];
  const plain = truncate(parts.join('  ') + (marks.length ? `  [${marks.join('] [')}]` : ''), width);
  let styled = plain;
  if (n.unresolvedBoundary || n.digest.status === 'findings')
    styled = n.digest.status === 'findings' && n.digest.severity === 'error' ? styles.error(plain) : styles.warn(plain);
  else if (n.quarantined || n.unresolvedRetry) styled = styles.warn(plain);
  else if (n.onMain) styled = styles.ok(plain);
  return styled;
}

/** A section's heading rule, as wide as the view (a terminal's width when nothing is cut). */
export function section(title: string, width: number, styles: Styles): string {
  const head = `── ${title} `;
  // An unlimited width (a pipe: nothing is cut) still draws a rule of a terminal's width.
  const rule = Number.isFinite(width) ? width : 100;
  return styles.heading(head + '─'.repeat(Math.max(0, rule - stringWidth(head))));
}

/** Every line of the rollout view (scrolled by the component). */
export function detailLines(
  d: RolloutDetail,
  width: number,
  now: number,
  styles: Styles,
  texts?: TextsByModel,
): string[] {
  const out: string[] = [];
  headLines(out, d, width, now, styles);
  treeLines(out, d, width, styles);
  sideFileLines(out, d, width, styles);
  verdictLines(out, d, width, styles);
  divergenceLines(out, d, width, styles, texts);
  checkLines(out, d, width, styles);
  return out;
}

/** The rollout's heading: id, status, version, calls, files and age; conditions; why it is unread. */
function headLines(out: string[], d: RolloutDetail, width: number, now: number, styles: Styles): void {
  const f = d.facts;
  const badge = styles.badge(d.status.status);
  const head = `rollout ${d.id}`;
  const files = f ? f.files.map((s) => s.replace(/^\.tokens\./, '').replace(/\.json$/, '')).join('+') : '';
  const meta = f
    ? `  v${knownVersion(f) ?? '-'}  ${f.entries} calls  files ${files || 'none'}  changed ${formatAgeSince(now, f.mtime_ms)} ago`
    : '';
  out.push(
    styles.heading(truncate(head, width - 12)) +
      ' ' +
      badge +
      truncate(meta, Math.max(0, width - stringWidth(head) - d.status.status.length - 1)),
  );
  if (d.status.conditions.length) out.push(`conditions: ${d.status.conditions.map((c) => styles.badge(c)).join(' ')}`);
  // Unavailable, or its status answered but its records not read: the same words either way.
  const unread = d.status.error ?? d.recordsError;
  if (unread) out.push(styles.error(truncate(couldNotBeRead(unread), width)));
  if (f?.snapshot_id) out.push(styles.dim(truncate(`snapshot ${f.snapshot_id}${f.frozen ? ' (frozen)' : ''}`, width)));
}

/** The chain tree: every placed call, the calls not placed, and the chains when more than one. */
function treeLines(out: string[], d: RolloutDetail, width: number, styles: Styles): void {
  out.push(
    section(
      `chain tree (${d.tree.length} placed call${d.tree.length === 1 ? '' : 's'}, ${d.chains.length} chain${d.chains.length === 1 ? '' : 's'})`,
      width,
      styles,
    ),
  );
  if (d.tree.length === 0)
    out.push(styles.dim(d.verdict.built ? '  no placed calls' : '  not built (the rollout could not be read)'));
  for (const n of d.tree) out.push(nodeLine(n, width, styles));
  for (const u of d.unplaced)
    out.push(styles.warn(truncate(`✗ ${showId(u.id)}  not placed: ${u.detail}  ${digestText(u.digest)}`, width)));
  if (d.chains.length > 1) {
    for (const c of d.chains)
      out.push(styles.dim(truncate(`  ${c.name}: ${c.callIds.map(showId).join(' → ')}`, width)));
  }
}

/** What the side files and J's tail say: dangling intents, incomplete markers, a torn tail. */
function sideFileLines(out: string[], d: RolloutDetail, width: number, styles: Styles): void {
  out.push(section(`dangling intents (${d.danglingIntents.length})`, width, styles));
  if (d.danglingIntents.length === 0) out.push(styles.dim('  none'));
  for (const id of d.danglingIntents)
    out.push(styles.warn(truncate(`  ${showId(id)}  intent without entry (dispatched, never captured)`, width)));

  const markerTitle = `incomplete markers (${d.incompleteMarkers.length})${d.incompleteFlag ? ' · state flag set' : ''}`;
  out.push(section(markerTitle, width, styles));
  if (d.incompleteMarkers.length === 0)
    out.push(styles.dim(d.incompleteFlag ? '  no marker lines (flag set by a conflict or an older writer)' : '  none'));
  for (const id of d.incompleteMarkers)
    out.push(
      styles.warn(truncate(`  ${showId(id)}${id === '' ? '  (a call lost before its id was known)' : ''}`, width)),
    );

  if (d.tornTail) {
    out.push(section('torn tail', width, styles));
    const at = d.tornTail.at !== undefined ? ` at byte ${d.tornTail.at}` : '';
    out.push(
      styles.error(
        truncate(
          `  the last line of the record file is torn${at} (a crash mid-append); read-only: left as is, a freeze would truncate it`,
          width,
        ),
      ),
    );
  }
}

/** The build's verdict (a preview: nothing written) and its causes. */
function verdictLines(out: string[], d: RolloutDetail, width: number, styles: Styles): void {
  out.push(section('build verdict (preview, nothing written)', width, styles));
  const v = d.verdict;
  if (!v.built)
    out.push(
      styles.dim(truncate(d.facts?.retired ? '  not built: retired tombstone (consumed)' : '  not built', width)),
    );
  else {
    // Delivered as `build` says it: tokens delivered/captured and the percentage.
    const delivered = `${v.tokensDelivered}/${v.tokensCaptured} (${((v.deliveredFraction ?? 0) * 100).toFixed(1)}%)`;
    const stats =
      v.error !== undefined
        ? `  ${v.nCalls ?? 0} calls`
        : `  roots ${v.roots}  chains ${v.chains}  calls ${v.nCalls}  delivered ${delivered}`;
    out.push(
      v.masked
        ? `  ${styles.badge('masked')}${truncate(` (would be)${stats}`, width - 8)}`
        : styles.ok(truncate(`  trainable${stats}`, width)),
    );
    if (v.error !== undefined)
      for (const l of wrapText(`error: ${v.error}`, width - 4, '  ')) out.push(styles.error(`    ${l}`));
    for (const c of v.causes) {
      const wrapped = wrapText(`${c.code}: ${c.message}`, width - 4, '  ');
      wrapped.forEach((l, i) => out.push(i === 0 ? `  • ${l}` : `    ${l}`));
    }
  }
}

/** Each broken boundary's first divergence, with the decoded text around it when `texts` has its model's. */
function divergenceLines(out: string[], d: RolloutDetail, width: number, styles: Styles, texts?: TextsByModel): void {
  if (d.divergences.length > 0) {
    out.push(
      section(
        `first divergence (${d.divergences.length} broken boundar${d.divergences.length === 1 ? 'y' : 'ies'})`,
        width,
        styles,
      ),
    );
    for (const dv of d.divergences) {
      const text = texts?.get(dv.model) ?? null;
      const wrapped = wrapText(divergenceLine(dv, text), width - 4, '  ');
      wrapped.forEach((l, i) => out.push(styles.warn(i === 0 ? `  ↳ ${l}` : `    ${l}`)));
      for (const w of windowLines(dv, text))
        for (const l of wrapText(w, width - 6, '  ')) out.push(styles.dim(`      ${l}`));
    }
  }
}

/** The digest check's findings, and the errors met reading the rollout. */
function checkLines(out: string[], d: RolloutDetail, width: number, styles: Styles): void {
  if (d.rolloutFindings.length > 0 || d.digestError) {
    out.push(section('digest check', width, styles));
    for (const fd of d.rolloutFindings) {
      const line = truncate(
        `  ${fd.severity} ${fd.code}${fd.line !== undefined ? ` (line ${fd.line})` : ''}: ${fd.message}`,
        width,
      );
      out.push(fd.severity === 'error' ? styles.error(line) : styles.warn(line));
    }
    if (d.digestError) out.push(styles.error(truncate(`  not checked: ${d.digestError}`, width)));
  }

  if (d.errors.length > 0) {
    out.push(section('read errors', width, styles));
    for (const e of d.errors)
      for (const l of wrapText(`${e.kind}: ${e.message}`, width - 2, '  ')) out.push(styles.error(`  ${l}`));
  }
}
