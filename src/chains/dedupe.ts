import type { TokenEntry } from '../records/token-entry.js';
import { tokenArraysEqual } from './token-arrays.js';

/** An entry kept by de-duplication, with its position in the snapshot (file order). */
export interface KeptEntry {
  readonly entry: TokenEntry;
  readonly fileIndex: number;
}

/** A later copy of an already-seen call id, discarded by de-duplication. */
export interface DiscardedDuplicate {
  readonly id: string;
  readonly fileIndex: number;
  /** Its prompt or generation token arrays differ from the kept copy's. */
  readonly conflict: boolean;
}

export interface DedupeResult {
  readonly kept: KeptEntry[];
  readonly discarded: DiscardedDuplicate[];
  /** One id per conflicting copy, in file order (docs/format.md#build-dedupe). */
  readonly duplicateConflicts: string[];
}

/**
 * Step 1 (docs/format.md#build-dedupe): keep the first entry of every call id; a later copy whose
 * (prompt, generation) arrays differ is a conflict. Log probs and other fields are ignored.
 */
export function dedupeByCallId(entries: readonly TokenEntry[]): DedupeResult {
  const firstById = new Map<string, TokenEntry>();
  const kept: KeptEntry[] = [];
  const discarded: DiscardedDuplicate[] = [];
  const duplicateConflicts: string[] = [];
  entries.forEach((entry, fileIndex) => {
    const id = entry.model_call_id;
    const first = firstById.get(id);
    if (first === undefined) {
      firstById.set(id, entry);
      kept.push({ entry, fileIndex });
      return;
    }
    const conflict =
      !tokenArraysEqual(first.prompt_token_ids, entry.prompt_token_ids) ||
      !tokenArraysEqual(first.generation_token_ids, entry.generation_token_ids);
    discarded.push({ id, fileIndex, conflict });
    if (conflict) duplicateConflicts.push(id);
  });
  return { kept, discarded, duplicateConflicts };
}
