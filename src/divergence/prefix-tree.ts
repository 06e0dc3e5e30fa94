import type { TokenId } from '../digest/token-digest.js';

/**
 * A radix tree over token sequences that answers "which stored sequence shares the longest prefix
 * with this one, and how long is it". Edges are slices of the stored sequences (nothing copied),
 * so inserting a sequence costs its length at most, a lookup the length of the shared prefix, and
 * the whole tree one node per branching point: a rollout of hundreds of calls of 100k tokens each
 * is compared without comparing every pair.
 *
 * The chain builder's prefix index (src/chains/prefix-index.ts) answers another question (which
 * stored sequence is a whole prefix of a prompt, keyed by hashes of exact lengths); it cannot say
 * where two sequences part, so this tree is separate.
 */

/** A sequence read by position, without concatenating its parts. */
export interface TokenSequence {
  readonly length: number;
  at(i: number): TokenId;
}

/** A stored sequence's rank among those tied for the longest shared prefix: smaller wins. */
export interface Ranked<T> {
  readonly value: T;
  /** Compared first: the shortest sequence (the call whose own tokens hold the divergence). */
  readonly length: number;
  /** Then the earliest inserted. */
  readonly order: number;
}

interface Node<T> {
  /** The edge into this node: `seq[from, to)`. */
  seq: TokenSequence;
  from: number;
  to: number;
  children: Map<TokenId, Node<T>> | null;
  /** The best-ranked sequence stored at or below this node. */
  best: Ranked<T>;
}

export interface LongestPrefix<T> {
  /** The best-ranked stored sequence among those sharing `shared` tokens with the query. */
  readonly match: T;
  readonly shared: number;
}

/** Token ids as map keys: a bigint within the safe range is the same id as its number. */
function key(id: TokenId): TokenId {
  return typeof id === 'bigint' && id <= BigInt(Number.MAX_SAFE_INTEGER) && id >= 0n ? Number(id) : id;
}

function better<T>(a: Ranked<T>, b: Ranked<T>): boolean {
  return a.length < b.length || (a.length === b.length && a.order < b.order);
}

export class PrefixTree<T> {
  private root: Node<T> | null = null;
  private count = 0;

  insert(seq: TokenSequence, value: T): void {
    const ranked: Ranked<T> = { value, length: seq.length, order: this.count++ };
    const empty: TokenSequence = { length: 0, at: () => 0 };
    if (this.root === null) this.root = { seq: empty, from: 0, to: 0, children: null, best: ranked };
    let node = this.root;
    let i = 0;
    for (;;) {
      if (better(ranked, node.best)) node.best = ranked;
      if (i === seq.length) return;
      const id = key(seq.at(i));
      const child = node.children?.get(id);
      if (child === undefined) {
        node.children ??= new Map();
        node.children.set(id, { seq, from: i, to: seq.length, children: null, best: ranked });
        return;
      }
      // Follow the edge while it agrees.
      let j = child.from;
      while (j < child.to && i < seq.length && key(child.seq.at(j)) === key(seq.at(i))) {
        j++;
        i++;
      }
      if (j < child.to) {
        // The sequence parts from the edge (or ends) inside it: split the edge at j.
        const lower: Node<T> = { seq: child.seq, from: j, to: child.to, children: child.children, best: child.best };
        child.to = j;
        child.children = new Map([[key(child.seq.at(j)), lower]]);
      }
      node = child;
    }
  }

  /** The stored sequence sharing the longest prefix with `query`; undefined when the tree is empty. */
  longestPrefix(query: TokenSequence): LongestPrefix<T> | undefined {
    if (this.root === null) return undefined;
    let node = this.root;
    let i = 0;
    for (;;) {
      if (i === query.length) return { match: node.best.value, shared: i };
      const child = node.children?.get(key(query.at(i)));
      if (child === undefined) return { match: node.best.value, shared: i };
      let j = child.from;
      while (j < child.to && i < query.length && key(child.seq.at(j)) === key(query.at(i))) {
        j++;
        i++;
      }
      // Stopped inside the edge: every sequence below shares exactly i tokens.
      if (j < child.to) return { match: child.best.value, shared: i };
      node = child;
    }
  }
}
