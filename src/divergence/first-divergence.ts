import type { TokenId } from '../digest/token-digest.js';
import type { BuildCall, ChainBuild, ParentLinkReason } from '../chains/chain-builder.js';
import { tokenIdsEqual } from '../chains/token-arrays.js';
import { PrefixTree, type TokenSequence } from './prefix-tree.js';

/**
 * Where a broken chain's tokens part: for every call whose parent boundary did not resolve and
 * every extra root, the earlier call whose prompt + generation shares the longest prefix with
 * this call's prompt, the first position where they differ, and the ids around it on both sides.
 * A pure function of a chain build; commands, the live view and the report render its answer
 * (the text of the ids is src/tokenizer's).
 */

/** Ids on each side of the first differing position. */
export const WINDOW_BEFORE = 8;
export const WINDOW_AFTER = 8;

export interface IdWindow {
  /** Position in the sequence of the first id. */
  readonly start: number;
  readonly ids: readonly TokenId[];
}

/**
 * The two runs that differ, from the last shared id up to where the sequences agree again (four
 * ids in a row, or the end of one of them), at most WINDOW_AFTER ids each after the shared one:
 * the drift itself, e.g. [151668, 271] generated against [151668, 198, 198] re-rendered.
 */
export interface DivergenceHunk {
  readonly start: number;
  readonly generated: readonly TokenId[];
  readonly rerendered: readonly TokenId[];
}

export interface Divergence {
  readonly callId: string;
  /** `boundary`: its parent did not resolve; `extra_root`: one more parentless call. */
  readonly kind: 'boundary' | 'extra_root';
  /** The builder's reason for the boundary (null for a root record). */
  readonly reason: ParentLinkReason | null;
  /** The record's `model` (for finding its tokenizer). */
  readonly model: string;
  /** The earlier call sharing the longest prefix; null when none shares a token. */
  readonly candidateParentId: string | null;
  /** Tokens this call's prompt shares with the candidate's prompt + generation. */
  readonly sharedLength: number;
  /** The first differing position (= sharedLength), or null when one sequence extends the other. */
  readonly position: number | null;
  /** The candidate's prompt + generation length, and where its generation starts. */
  readonly candidateLength: number;
  readonly candidatePromptLength: number;
  readonly promptLength: number;
  /** Which part of the candidate the position falls in (`generation`: the tokens the model sampled). */
  readonly candidatePart: 'prompt' | 'generation' | null;
  /** The candidate's prompt + generation around the position (what was generated). */
  readonly generated: IdWindow;
  /** This call's prompt around the position (what was re-rendered). */
  readonly rerendered: IdWindow;
  readonly hunk: DivergenceHunk;
}

class CallSequence implements TokenSequence {
  readonly length: number;
  constructor(
    readonly prompt: readonly TokenId[],
    readonly generation: readonly TokenId[],
  ) {
    this.length = prompt.length + generation.length;
  }
  at(i: number): TokenId {
    return i < this.prompt.length ? this.prompt[i] : this.generation[i - this.prompt.length];
  }
  slice(from: number, to: number): TokenId[] {
    const out: TokenId[] = [];
    const end = Math.min(to, this.length);
    for (let i = Math.max(0, from); i < end; i++) out.push(this.at(i));
    return out;
  }
}

class PromptSequence implements TokenSequence {
  readonly length: number;
  constructor(readonly ids: readonly TokenId[]) {
    this.length = ids.length;
  }
  at(i: number): TokenId {
    return this.ids[i];
  }
}

/** The calls a divergence is asked for: unresolved boundaries, and parentless calls beyond the main root. */
export function divergenceTargets(build: ChainBuild): BuildCall[] {
  const mainRoot = build.mainChain?.callIds[0];
  const placed = build.calls.filter((c) => c.status === 'placed' && c.parentId === null);
  if (placed.length === 0) return [];
  // Without a main chain the first parentless call in step-4 order is the one that is not extra.
  const firstRoot = mainRoot ?? placed.reduce((a, b) => ((b.order ?? 0) < (a.order ?? 0) ? b : a)).id;
  return placed
    .filter((c) => c.unresolvedBoundary || c.id !== firstRoot)
    .sort((a, b) => (a.order ?? 0) - (b.order ?? 0));
}

/**
 * The first divergence of every target call (`divergenceTargets`), in step-4 order. Earlier calls
 * are the placed calls before it in step-4 order (the builder's "earlier"). Costs nothing when
 * there is no target; otherwise one pass over the calls up to the last target.
 */
export function firstDivergences(build: ChainBuild): Divergence[] {
  const targets = divergenceTargets(build);
  if (targets.length === 0) return [];
  const wanted = new Set(targets.map((c) => c.id));
  const byId = new Map(build.calls.map((c) => [c.id, c]));
  const tree = new PrefixTree<{ call: BuildCall; seq: CallSequence }>();
  const out: Divergence[] = [];
  for (const id of build.placementOrder) {
    const call = byId.get(id)!;
    const prompt = call.entry.prompt_token_ids;
    if (wanted.has(id)) {
      out.push(divergenceOf(call, tree.longestPrefix(new PromptSequence(prompt))));
      if (out.length === wanted.size) break;
    }
    const seq = new CallSequence(prompt, call.entry.generation_token_ids);
    tree.insert(seq, { call, seq });
  }
  return out;
}

function divergenceOf(
  call: BuildCall,
  found: { match: { call: BuildCall; seq: CallSequence }; shared: number } | undefined,
): Divergence {
  const prompt = call.entry.prompt_token_ids;
  const base = {
    callId: call.id,
    kind: call.unresolvedBoundary ? ('boundary' as const) : ('extra_root' as const),
    reason: call.reason,
    model: call.entry.model,
    promptLength: prompt.length,
  };
  if (found === undefined || found.shared === 0) {
    const rerendered = { start: 0, ids: prompt.slice(0, WINDOW_AFTER) };
    return {
      ...base,
      candidateParentId: null,
      sharedLength: 0,
      position: found === undefined ? null : 0,
      candidateLength: 0,
      candidatePromptLength: 0,
      candidatePart: null,
      generated: { start: 0, ids: [] },
      rerendered,
      hunk: { start: 0, generated: [], rerendered: rerendered.ids },
    };
  }
  const { seq } = found.match;
  const p = found.shared;
  const parted = p < seq.length && p < prompt.length;
  const from = Math.max(0, p - WINDOW_BEFORE);
  return {
    ...base,
    candidateParentId: found.match.call.id,
    sharedLength: p,
    position: parted ? p : null,
    candidateLength: seq.length,
    candidatePromptLength: seq.prompt.length,
    candidatePart: p >= seq.length ? null : p < seq.prompt.length ? 'prompt' : 'generation',
    generated: { start: from, ids: seq.slice(from, p + WINDOW_AFTER) },
    rerendered: { start: from, ids: prompt.slice(from, p + WINDOW_AFTER) },
    hunk: hunkAt(seq, new PromptSequence(prompt), p),
  };
}

/** Agreement this long after the differing runs counts as the sequences meeting again. */
const RESYNC = 4;

/** The differing runs after position p (see `DivergenceHunk`), with the last shared id before them. */
function hunkAt(a: TokenSequence, b: TokenSequence, p: number): DivergenceHunk {
  const start = Math.max(0, p - 1);
  const take = (s: TokenSequence, n: number) => {
    const out: TokenId[] = [];
    for (let i = start; i < Math.min(s.length, p + n); i++) out.push(s.at(i));
    return out;
  };
  // The smallest total of skipped ids (i on a's side, j on b's) after which both agree again.
  for (let total = 1; total <= 2 * WINDOW_AFTER; total++) {
    for (let i = Math.max(0, total - WINDOW_AFTER); i <= Math.min(total, WINDOW_AFTER); i++) {
      const j = total - i;
      if (agreeFrom(a, p + i, b, p + j)) return { start, generated: take(a, i), rerendered: take(b, j) };
    }
  }
  return { start, generated: take(a, WINDOW_AFTER), rerendered: take(b, WINDOW_AFTER) };
}

function agreeFrom(a: TokenSequence, i: number, b: TokenSequence, j: number): boolean {
  if (i > a.length || j > b.length) return false;
  let n = 0;
  while (n < RESYNC && i + n < a.length && j + n < b.length) {
    if (!tokenIdsEqual(a.at(i + n), b.at(j + n))) return false;
    n++;
  }
  // RESYNC ids agreed, or some agreed up to the end of one side, or both end here.
  return n === RESYNC || (n > 0 && (i + n === a.length || j + n === b.length)) || (i === a.length && j === b.length);
}
