import type { TokenId } from '../digest/token-digest.js';
import type { ChainBuild } from '../chains/chain-builder.js';
import { firstDivergences, type Divergence } from '../divergence/first-divergence.js';

/**
 * A call's tokens as its text view shows them: its full prompt split where the part it adds to
 * its parent's tokens begins, its generation with one log probability per token, and, for a
 * broken boundary, where it parts from its candidate parent (src/divergence).
 */
export interface CallTokens {
  readonly callId: string;
  readonly model: string;
  /** The parent the builder linked (or recovered); null for a root or a broken boundary. */
  readonly parentId: string | null;
  /** The call the first `inheritedLength` prompt ids come from: the parent, or the candidate parent. */
  readonly inheritedFrom: string | null;
  /** Prompt ids that are the parent's (or shared with the candidate) prompt + generation. */
  readonly inheritedLength: number;
  readonly prompt: readonly TokenId[];
  readonly generation: readonly TokenId[];
  readonly logProbs: readonly number[];
  readonly divergence: Divergence | null;
}

/** Band of a generated token's log probability: 0 likely (p ≥ 0.9), 1 (p ≥ 0.5), 2 (p ≥ 0.1), 3 unlikely. */
export type LogProbBand = 0 | 1 | 2 | 3;
const BAND_FLOORS = [Math.log(0.9), Math.log(0.5), Math.log(0.1)];
export const LOG_PROB_BANDS: readonly { readonly band: LogProbBand; readonly label: string }[] = [
  { band: 0, label: 'p ≥ 0.9' },
  { band: 1, label: '0.5 ≤ p < 0.9' },
  { band: 2, label: '0.1 ≤ p < 0.5' },
  { band: 3, label: 'p < 0.1' },
];

export function logProbBand(logProb: number): LogProbBand {
  if (logProb >= BAND_FLOORS[0]) return 0;
  if (logProb >= BAND_FLOORS[1]) return 1;
  if (logProb >= BAND_FLOORS[2]) return 2;
  return 3;
}

/** The placed (or dropped) call `callId` of a build; undefined when the build has no such call. */
export function callTokens(
  build: ChainBuild,
  callId: string,
  divergences?: readonly Divergence[],
): CallTokens | undefined {
  const call = build.calls.find((c) => c.id === callId);
  if (call === undefined) return undefined;
  const byId = new Map(build.calls.map((c) => [c.id, c]));
  const entry = call.entry;
  const divergence =
    (divergences ?? (call.parentId === null && call.status === 'placed' ? firstDivergences(build) : [])).find(
      (d) => d.callId === callId,
    ) ?? null;
  let inheritedFrom: string | null = null;
  let inheritedLength = 0;
  const parent = call.parentId === null ? undefined : byId.get(call.parentId);
  if (parent) {
    inheritedFrom = parent.id;
    inheritedLength = parent.entry.prompt_token_ids.length + parent.entry.generation_token_ids.length;
  } else if (divergence?.candidateParentId) {
    inheritedFrom = divergence.candidateParentId;
    inheritedLength = divergence.sharedLength;
  }
  return {
    callId,
    model: entry.model,
    parentId: call.parentId,
    inheritedFrom,
    inheritedLength: Math.min(inheritedLength, entry.prompt_token_ids.length),
    prompt: entry.prompt_token_ids,
    generation: entry.generation_token_ids,
    logProbs: entry.generation_log_probs,
    divergence,
  };
}
