import { computeTokenDigestOfParts, type TokenId } from '../digest/token-digest.js';
import type { TokenEntry } from '../records/token-entry.js';
import type { KeptEntry } from './dedupe.js';
import { concatTokens } from './token-arrays.js';

/** An entry after step 2: its `prompt_token_ids` is the full prompt, `prompt_is_delta` false. */
export interface MaterializedEntry {
  readonly entry: TokenEntry;
  /** The entry as stored (the same object unless it was a delta record). */
  readonly stored: TokenEntry;
  readonly fileIndex: number;
  /** The stored record held only a parent-relative prompt suffix. */
  readonly storedAsDelta: boolean;
  /** Token digest of the cumulative sequence, when step 2 already computed it. */
  readonly cumulativeDigest?: string;
}

export interface UnreconstructableEntry {
  readonly entry: TokenEntry;
  readonly fileIndex: number;
  /** `walk`: the parent walk hit an unknown id or a cycle; `digest`: stamped digest differs. */
  readonly why: 'walk' | 'digest';
}

export interface MaterializeResult {
  /** Kept entries in their input order (empty generations included). */
  readonly entries: MaterializedEntry[];
  readonly unreconstructable: UnreconstructableEntry[];
}

/**
 * Step 2 (docs/format.md#build-deltas): rebuild the full prompt of every delta entry by walking its parent
 * chain to a full-prompt entry. The walk is iterative (no recursion limit), memoized, and yields
 * none for an unknown id or a cycle. Only a delta entry's own stamped digest is verified.
 */
export function materializeDeltaPrompts(kept: readonly KeptEntry[]): MaterializeResult {
  const byId = new Map<string, TokenEntry>();
  for (const k of kept) byId.set(k.entry.model_call_id, k.entry);
  // id -> full prompt (cum(id) without its generation), or null when cum(id) is none.
  const fullPrompts = new Map<string, readonly TokenId[] | null>();

  const fullPromptOf = (startId: string): readonly TokenId[] | null => {
    const walk: TokenEntry[] = [];
    const onWalk = new Set<string>();
    let id = startId;
    let base: readonly TokenId[] | null;
    let baseEntry: TokenEntry | undefined;
    for (;;) {
      const memo = fullPrompts.get(id);
      if (memo !== undefined) {
        base = memo;
        baseEntry = byId.get(id);
        break;
      }
      const entry = byId.get(id);
      if (entry === undefined || onWalk.has(id)) {
        base = null;
        break;
      }
      if (!entry.prompt_is_delta) {
        base = entry.prompt_token_ids;
        baseEntry = entry;
        fullPrompts.set(id, base);
        break;
      }
      walk.push(entry);
      onWalk.add(id);
      id = entry.parent_call_id as string; // validated: a delta entry has a parent id
    }
    for (let i = walk.length - 1; i >= 0; i--) {
      const entry = walk[i];
      if (base !== null && baseEntry !== undefined) {
        base = concatTokens(base, baseEntry.generation_token_ids, entry.prompt_token_ids);
      } else {
        base = null;
      }
      baseEntry = entry;
      fullPrompts.set(entry.model_call_id, base);
    }
    return fullPrompts.get(startId) ?? null;
  };

  const entries: MaterializedEntry[] = [];
  const unreconstructable: UnreconstructableEntry[] = [];
  for (const { entry, fileIndex } of kept) {
    if (!entry.prompt_is_delta) {
      entries.push({ entry, stored: entry, fileIndex, storedAsDelta: false });
      continue;
    }
    const fullPrompt = fullPromptOf(entry.model_call_id);
    if (fullPrompt === null) {
      unreconstructable.push({ entry, fileIndex, why: 'walk' });
      continue;
    }
    let cumulativeDigest: string | undefined;
    if (entry.digest) {
      cumulativeDigest = computeTokenDigestOfParts([fullPrompt, entry.generation_token_ids]);
      if (cumulativeDigest !== entry.digest) {
        unreconstructable.push({ entry, fileIndex, why: 'digest' });
        continue;
      }
    }
    const materialized: TokenEntry = { ...entry, prompt_token_ids: fullPrompt as TokenId[], prompt_is_delta: false };
    entries.push({ entry: materialized, stored: entry, fileIndex, storedAsDelta: true, cumulativeDigest });
  }
  return { entries, unreconstructable };
}
