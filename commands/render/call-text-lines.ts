/**
 * A call's text as `inspect DIR ID --call CALL_ID` and the live view's call view show it: the
 * prompt it adds to its parent's tokens (the inherited part folded to a count), then its
 * generation, each generated token shaded by its log-prob band (a legend says which is which;
 * no shading without colour), long stretches folded with counts. Without a tokenizer the ids are
 * the text. Store text goes through terminal-safe.ts; whitespace is made visible (`⏎` ends a line).
 */
import type { TokenId } from '../../src/digest/token-digest.js';
import { LOG_PROB_BANDS, logProbBand, type CallTokens } from '../../src/call-text/call-tokens.js';
import { terminalSafe } from '../../src/text/terminal-safe.js';
import type { TokenText } from '../../src/tokenizer/token-text.js';
import { formatCount } from './divergence-lines.js';
import { showId } from '../cli/shared.js';
import type { Styles } from './styles.js';
import { cellWidth } from '../watch/cells.js';
import { section } from '../watch/rollout-lines.js';

/** Lines of one part beyond which its middle is folded to a count. */
export const FOLD_AFTER_LINES = 40;
const KEEP_HEAD = 16;
const KEEP_TAIL = 16;

interface Piece {
  readonly text: string;
  readonly ids: number;
  readonly style?: (s: string) => string;
}

/** One display line: its styled text and the ids it shows. */
interface Line {
  text: string;
  ids: number;
}

function piecesOf(
  ids: readonly TokenId[],
  text: TokenText | null,
): { text: string; ids: readonly TokenId[]; index: number }[] {
  if (text) return text.pieces(ids);
  return ids.map((id, index) => ({ text: `${String(id)} `, ids: [id], index }));
}

/** Pieces into lines of at most `width` cells: a line feed ends a line (shown as `⏎`). */
function layout(pieces: readonly Piece[], width: number, indent: string): Line[] {
  const lines: Line[] = [];
  let cur: Line = { text: indent, ids: 0 };
  let used = cellWidth(indent);
  const flush = () => {
    lines.push(cur);
    cur = { text: indent, ids: 0 };
    used = cellWidth(indent);
  };
  for (const p of pieces) {
    const parts = p.text.split('\n');
    parts.forEach((part, i) => {
      const shown = terminalSafe(part.replace(/\t/g, '⇥').replace(/\r/g, '␍')) + (i < parts.length - 1 ? '⏎' : '');
      const w = cellWidth(shown);
      if (used + w > width && used > cellWidth(indent)) flush();
      cur.text += p.style && shown ? p.style(shown) : shown;
      used += w;
      if (i === 0) cur.ids += p.ids;
      if (i < parts.length - 1) flush();
    });
  }
  if (cur.ids > 0 || cur.text !== indent) lines.push(cur);
  return lines;
}

function fold(lines: Line[], styles: Styles, indent: string): string[] {
  if (lines.length <= FOLD_AFTER_LINES) return lines.map((l) => l.text);
  const hidden = lines.slice(KEEP_HEAD, lines.length - KEEP_TAIL);
  const ids = hidden.reduce((n, l) => n + l.ids, 0);
  return [
    ...lines.slice(0, KEEP_HEAD).map((l) => l.text),
    styles.dim(`${indent}┆ … ${formatCount(hidden.length)} lines folded (${formatCount(ids)} tokens) …`),
    ...lines.slice(lines.length - KEEP_TAIL).map((l) => l.text),
  ];
}

/** Every line of a call's text view. */
export function callTextLines(t: CallTokens, text: TokenText | null, width: number, styles: Styles): string[] {
  const out: string[] = [];
  const indent = '  ';
  const model = t.model === '' ? 'model not recorded' : `model ${terminalSafe(t.model)}`;
  out.push(styles.heading(`call ${showId(t.callId)}`) + `  ${model}  ${text ? 'decoded' : 'ids (no tokenizer)'}`);

  const added = t.prompt.slice(t.inheritedLength);
  out.push(
    section(`prompt (${formatCount(t.prompt.length)} tokens, ${formatCount(added.length)} added)`, width, styles),
  );
  if (t.inheritedLength > 0 && t.inheritedFrom !== null) {
    const whose =
      t.parentId !== null
        ? `from its parent ${showId(t.inheritedFrom)} (prompt + generation)`
        : `shared with ${showId(t.inheritedFrom)}, the candidate parent`;
    out.push(styles.dim(`${indent}┆ ${formatCount(t.inheritedLength)} tokens ${whose}, folded`));
  }
  if (
    t.divergence?.position !== null &&
    t.divergence?.position !== undefined &&
    t.divergence.candidateParentId !== null
  ) {
    out.push(
      styles.mark(
        `${indent}▶ diverges here from ${showId(t.divergence.candidateParentId)} at token ${formatCount(t.divergence.position)}`,
      ),
    );
  } else if (added.length > 0) {
    out.push(styles.dim(`${indent}▶ added by this call:`));
  }
  const promptPieces = piecesOf(added, text).map((p) => ({ text: p.text, ids: p.ids.length }));
  out.push(...fold(layout(promptPieces, width, indent), styles, indent));

  out.push(section(`generation (${formatCount(t.generation.length)} tokens)`, width, styles));
  if (styles.level > 0) {
    out.push(`${indent}log-prob: ` + LOG_PROB_BANDS.map((b) => styles.logProb[b.band](`■ ${b.label}`)).join('  '));
  }
  const genPieces = piecesOf(t.generation, text).map((p) => {
    // A piece of several ids (one character split over byte tokens) takes its least likely id's band.
    let band = 0;
    for (let i = p.index; i < p.index + p.ids.length; i++) band = Math.max(band, logProbBand(t.logProbs[i] ?? 0));
    return { text: p.text, ids: p.ids.length, style: styles.logProb[band] };
  });
  out.push(...fold(layout(genPieces, width, indent), styles, indent));
  return out;
}
