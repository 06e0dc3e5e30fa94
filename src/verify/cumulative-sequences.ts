import { computeTokenDigestOfParts, TokenSequence, type TokenId } from '../digest/token-digest.js';
import type { TokenEntry } from '../records/token-entry.js';

/** A call's full cumulative sequence (docs/format.md#cumulative-sequence), by its length and digest. */
export interface Cumulative {
  length: number;
  /** null: an id in it is negative, fractional or does not fit in 64 bits. */
  digest: string | null;
}

/**
 * The cumulative sequences of a rollout's calls (first valid line of each call id), rebuilt
 * through delta parents: `info(id)` is null when the chain cannot be walked to a full record
 * (a missing parent, a cycle).
 *
 * Delta chains are rebuilt as u64be bytes in one `TokenSequence` that holds a path of nested
 * cumulative sequences: a child extends its parent's bytes by its own suffix and generation, so
 * every id is converted and hashed with its own call only, and no array of a whole sequence is
 * made (the arrays were most of verify's time and garbage on delta stores). `ids(id)` builds the
 * array for the rare check that needs it.
 */
export class CumulativeSequences {
  private readonly memo = new Map<string, Cumulative | null>();
  private readonly seq: TokenSequence;
  /** Calls whose cumulative sequences are the nested prefixes of `seq`, shortest first. */
  private readonly held: string[] = [];
  private readonly heldLength: number[] = [];

  /**
   * `seq` is scratch space (emptied here), e.g. one kept for the next rollout so that its memory
   * is not grown again for each.
   */
  constructor(
    private readonly first: ReadonlyMap<string, TokenEntry>,
    seq: TokenSequence = new TokenSequence(),
  ) {
    seq.truncate(0);
    this.seq = seq;
  }

  info(id: string): Cumulative | null {
    const known = this.memo.get(id);
    if (known !== undefined || this.memo.has(id)) return known ?? null;
    // Walk up to a full record, a call already known, or a failure; then come back down.
    const path: TokenEntry[] = [];
    const onPath = new Set<string>();
    let cur: string | null = id;
    let base: Cumulative | null = null;
    let baseId: string | null = null;
    for (;;) {
      if (cur === null || onPath.has(cur)) break;
      if (this.memo.has(cur)) {
        base = this.memo.get(cur)!;
        baseId = cur;
        break;
      }
      const e = this.first.get(cur);
      if (!e) break;
      onPath.add(cur);
      if (!e.prompt_is_delta) {
        base = fullInfo(e);
        baseId = cur;
        this.memo.set(cur, base);
        break;
      }
      path.push(e);
      cur = e.parent_call_id;
    }
    // `path` holds the delta entries from `id` up to (excluding) the base, nearest first.
    for (let i = path.length - 1; i >= 0; i--) {
      const e = path[i];
      base = base === null ? null : this.extend(baseId!, base, e);
      baseId = e.model_call_id;
      this.memo.set(baseId, base);
    }
    if (!this.memo.has(id)) this.memo.set(id, base);
    return this.memo.get(id)!;
  }

  /** The ids of a reconstructable call's cumulative sequence, as an array. */
  ids(id: string): TokenId[] {
    const chain: TokenEntry[] = [];
    for (let e = this.first.get(id)!; ; e = this.first.get(e.parent_call_id!)!) {
      chain.push(e);
      if (!e.prompt_is_delta) break;
    }
    const out: TokenId[] = [];
    for (let i = chain.length - 1; i >= 0; i--) {
      for (const t of chain[i].prompt_token_ids) out.push(t);
      for (const t of chain[i].generation_token_ids) out.push(t);
    }
    return out;
  }

  /** The child `e` of `parentId` (whose sequence is `parent`, with a digest or not). */
  private extend(parentId: string, parent: Cumulative, e: TokenEntry): Cumulative {
    const length = parent.length + e.prompt_token_ids.length + e.generation_token_ids.length;
    // A bad id in the parent's sequence is in every descendant's.
    if (parent.digest === null) return { length, digest: null };
    this.hold(parentId);
    const seq = this.seq;
    try {
      seq.append(e.prompt_token_ids);
      seq.append(e.generation_token_ids);
    } catch {
      seq.truncate(parent.length);
      return { length, digest: null };
    }
    this.held.push(e.model_call_id);
    this.heldLength.push(seq.length);
    return { length, digest: seq.digest() };
  }

  /** Makes `seq` hold exactly the (digestible) cumulative sequence of `id`. */
  private hold(id: string): void {
    const k = this.held.lastIndexOf(id);
    if (k !== -1) {
      this.held.length = k + 1;
      this.heldLength.length = k + 1;
      this.seq.truncate(this.heldLength[k]);
      return;
    }
    // Not on the held path (another branch, or the first child of a full record): rebuild it.
    const chain: TokenEntry[] = [];
    for (let e = this.first.get(id)!; ; e = this.first.get(e.parent_call_id!)!) {
      chain.push(e);
      if (!e.prompt_is_delta) break;
    }
    this.held.length = 0;
    this.heldLength.length = 0;
    this.seq.truncate(0);
    for (let i = chain.length - 1; i >= 0; i--) {
      this.seq.append(chain[i].prompt_token_ids);
      this.seq.append(chain[i].generation_token_ids);
      this.held.push(chain[i].model_call_id);
      this.heldLength.push(this.seq.length);
    }
  }
}

function fullInfo(e: TokenEntry): Cumulative {
  const length = e.prompt_token_ids.length + e.generation_token_ids.length;
  let digest: string | null;
  try {
    digest = computeTokenDigestOfParts([e.prompt_token_ids, e.generation_token_ids]);
  } catch {
    digest = null;
  }
  return { length, digest };
}
