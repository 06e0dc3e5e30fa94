/**
 * A divergence in words, one line (src/divergence computes it; the tokenizer decodes its ids):
 * `call-002 diverges from call-001 at token 1,398: generated `</think>` `⏎⏎` [151668, 271],
 * re-rendered `</think>` `⏎` `⏎` [151668, 198, 198]`. Each id's text is quoted on its own, so
 * where the tokens part shows; store text goes through terminal-safe.ts.
 */
import type { TokenId } from '../../src/digest/token-digest.js';
import type { Divergence } from '../../src/divergence/first-divergence.js';
import { terminalSafe } from '../../src/text/terminal-safe.js';
import { visibleWhitespace, type TokenText } from '../../src/tokenizer/token-text.js';
import { showId } from '../cli/shared.js';

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

export function idList(ids: readonly TokenId[]): string {
  return `[${ids.map(String).join(', ')}]`;
}

/** Each id's (or id group's) visible text, back-quoted: `</think>` `⏎⏎`. */
export function quotedPieces(ids: readonly TokenId[], text: TokenText): string {
  return text
    .pieces(ids)
    .map((p) => `\`${terminalSafe(visibleWhitespace(p.text))}\``)
    .join(' ');
}

function run(ids: readonly TokenId[], text: TokenText | null): string {
  if (ids.length === 0) return 'nothing';
  return text ? `${quotedPieces(ids, text)} ${idList(ids)}` : idList(ids);
}

/** The one line of a divergence. */
export function divergenceLine(d: Divergence, text: TokenText | null): string {
  const call = showId(d.callId);
  if (d.candidateParentId === null)
    return `${call} shares no token with an earlier call (its prompt starts ${run(d.rerendered.ids, text)})`;
  const parent = showId(d.candidateParentId);
  if (d.position === null) {
    return d.sharedLength >= d.candidateLength
      ? `${call} extends ${parent}'s ${formatCount(d.candidateLength)} tokens without a difference (the tokens agree; the link was not made: ${d.reason ?? 'a root record'})`
      : `${call}'s prompt (${formatCount(d.promptLength)} tokens) is a prefix of ${parent}'s tokens (a retry of the same request?)`;
  }
  const [theirs, ours] =
    d.candidatePart === 'generation' ? ['generated', 're-rendered'] : [`${parent}'s prompt`, 'this prompt'];
  return `${call} diverges from ${parent} at token ${formatCount(d.position)}: ${theirs} ${run(d.hunk.generated, text)}, ${ours} ${run(d.hunk.rerendered, text)}`;
}

/** The windows of both sides (8 ids before and after the position), decoded side by side when possible. */
export function windowLines(d: Divergence, text: TokenText | null): string[] {
  if (d.candidateParentId === null) return [];
  const at = d.generated.start;
  const side = (label: string, ids: readonly TokenId[]) =>
    `${label} @${formatCount(at)} ${text ? `${quotedPieces(ids, text)}  ` : ''}${idList(ids)}`;
  return [
    side(d.candidatePart === 'prompt' ? 'theirs     ' : 'generated  ', d.generated.ids),
    side(d.candidatePart === 'prompt' ? 'ours       ' : 're-rendered', d.rerendered.ids),
  ];
}
