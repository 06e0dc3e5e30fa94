import { round4 } from '../json/round4.js';
import type { ParentResolution, TokenEntry } from '../records/token-entry.js';
import { compareCodePoints } from '../json/canonical-json.js';
import { CumulativeSequence } from './cumulative-sequence.js';
import { dedupeByCallId, type DiscardedDuplicate } from './dedupe.js';
import { materializeDeltaPrompts, type MaterializedEntry } from './materialize-deltas.js';
import { parentVerifies } from './parent-verification.js';
import { PrefixIndex } from './prefix-index.js';
import { tokenIdsEqual } from './token-arrays.js';

/**
 * The `prefix_merging` chain builder, steps 1–11 of docs/format.md#builder. `buildChains` is the
 * one code path behind both the consumer result (consumer-result.ts) and the structured views
 * (human output, TUI).
 */

/** Keys of `parent_link_failures`, in the vocabulary of the reference. */
export type ParentLinkReason =
  | 'duplicate_call_id_conflict'
  | 'delta_chain_unreconstructable'
  | 'parent_unresolved'
  | 'resolved_parent_missing_id'
  | 'parent_call_id_missing_recovered'
  | 'parent_call_id_missing'
  | 'parent_digest_mismatch'
  | 'missing_resolution';

/** What became of a de-duplicated call. */
export type CallStatus =
  /** Dropped in step 2: its delta prompt could not be rebuilt (or its digest did not match). */
  | 'unreconstructable'
  /** Dropped in step 3: empty generation. */
  | 'empty_generation'
  /** Took part in steps 4–11. */
  | 'placed';

/**
 * How a placed call's parent was decided (step 7): `root` (a ROOT record), `linked` (claimed
 * parent found and verified), `recovered` (claimed parent not placed, found by prefix lookup),
 * `boundary` (no parent for any other reason: the call starts a fragment of its own).
 */
export type LinkOutcome = 'root' | 'linked' | 'recovered' | 'boundary';

export interface BuildCall {
  readonly id: string;
  /** Index in the snapshot (file order) of the kept copy. */
  readonly fileIndex: number;
  readonly status: CallStatus;
  /** Why an unreconstructable delta was dropped: its parent walk failed, or its digest differs. */
  readonly unreconstructable: 'parent_walk_failed' | 'digest_mismatch' | null;
  /** The stored record held only a parent-relative prompt suffix. */
  readonly storedAsDelta: boolean;
  readonly parentResolution: ParentResolution | null;
  /** `parent_call_id` of the record. */
  readonly claimedParentId: string | null;
  /** Position in the step-4 order (full prompt length, id); null when not placed. */
  readonly order: number | null;
  /** The parent decided in step 7 (null for roots and for calls that were not placed). */
  readonly parentId: string | null;
  readonly outcome: LinkOutcome | null;
  /** The `parent_link_failures` reason recorded for this call, if any. */
  readonly reason: ParentLinkReason | null;
  /** Full prompt length (null when unreconstructable). */
  readonly promptLength: number | null;
  /** Length of `prompt_token_ids` as stored (the suffix for a delta record). */
  readonly storedPromptLength: number;
  readonly generationLength: number;
  readonly emptyGeneration: boolean;
  readonly quarantined: boolean;
  /** A hard boundary: the reason does not end in `_recovered` (step 7). */
  readonly unresolvedBoundary: boolean;
  /** Children in step-4 order (quarantined ones included). */
  readonly children: readonly string[];
  /** Later copies of this id discarded by step 1, and how many of them conflicted. */
  readonly duplicateCopies: number;
  readonly conflictingCopies: number;
  /** The entry with its full prompt (the stored entry when unreconstructable). */
  readonly entry: TokenEntry;
}

export interface BuildChain {
  /** `main`, or `branch-0`, `branch-1`, … for the others in chain order. */
  readonly name: string;
  /** Root first. */
  readonly callIds: readonly string[];
  /** The links' entries with full prompts, root first. */
  readonly links: readonly TokenEntry[];
  readonly generatedTokens: number;
}

export interface BuildNotes {
  roots: number;
  chains: number;
  generated_tokens_captured: number;
  generated_tokens_delivered: number;
  /** round4(delivered / captured), or 0 when nothing was captured. */
  delivered_fraction: number;
  unresolved_retries: string[];
  empty_generation_calls: string[];
  /** Reason -> count, in insertion order. */
  parent_link_failures: Partial<Record<ParentLinkReason, number>>;
  unresolved_parent_calls: string[];
  quarantined: string[];
  /** tokcap addition: ids of conflicting duplicate copies (one per copy), as in step 6. */
  duplicate_conflicts: string[];
}

export interface ChainBuild {
  /** Every de-duplicated call, in file order. */
  readonly calls: readonly BuildCall[];
  /** Later copies discarded by step 1, in file order. */
  readonly duplicates: readonly DiscardedDuplicate[];
  /** Ids of the placed calls in step-4 order. */
  readonly placementOrder: readonly string[];
  /** Whether step 5 switched the prefix index on. */
  readonly prefixIndexActive: boolean;
  /** Chains in step-9 order. */
  readonly chains: readonly BuildChain[];
  readonly mainChain: BuildChain | null;
  readonly notes: BuildNotes;
}

interface Node {
  readonly id: string;
  readonly entry: TokenEntry;
  readonly cumulative: CumulativeSequence;
  readonly order: number;
  parent: Node | null;
  readonly children: Node[];
  quarantined: boolean;
  unresolvedBoundary: boolean;
  outcome: LinkOutcome;
  reason: ParentLinkReason | null;
}

/**
 * Runs steps 1–11 on a snapshot's entries (validated, in file order). Each step with a loop is a
 * function of its own: as one function of all the steps, V8 optimized it (with everything it
 * calls inlined) near the end of a preview of 200 rollouts, a compilation that cost ~70 ms of
 * CPU (5 % of the preview's) for code that hardly ran; the steps are small and cheap to optimize.
 */
export function buildChains(entries: readonly TokenEntry[]): ChainBuild {
  // Step 1.
  const deduped = dedupeByCallId(entries);
  // Step 2.
  const materialized = materializeDeltaPrompts(deduped.kept);
  const unreconstructable = materialized.unreconstructable.map((u) => u.entry.model_call_id);
  // Step 3.
  const { remaining, emptyGenerationCalls } = withoutEmptyGenerations(materialized.entries);

  const failures = new Map<ParentLinkReason, number>();
  if (remaining.length === 0) {
    if (unreconstructable.length > 0) failures.set('delta_chain_unreconstructable', unreconstructable.length);
    const notes: BuildNotes = {
      roots: 0,
      chains: 0,
      generated_tokens_captured: 0,
      generated_tokens_delivered: 0,
      delivered_fraction: 0,
      unresolved_retries: [],
      empty_generation_calls: emptyGenerationCalls,
      parent_link_failures: Object.fromEntries(failures),
      unresolved_parent_calls: [...unreconstructable],
      quarantined: [],
      duplicate_conflicts: [...deduped.duplicateConflicts],
    };
    return finish(deduped.discarded, materialized, [], false, [], null, notes);
  }

  // Step 4.
  remaining.sort(
    (a, b) =>
      a.entry.prompt_token_ids.length - b.entry.prompt_token_ids.length ||
      compareCodePoints(a.entry.model_call_id, b.entry.model_call_id),
  );
  // Step 5.
  const prefixIndexActive = claimsAnAbsentParent(remaining);
  // Step 6.
  const unresolvedParentCalls: string[] = [];
  for (const id of deduped.duplicateConflicts) {
    countFailure(failures, 'duplicate_call_id_conflict');
    unresolvedParentCalls.push(id);
  }
  for (const id of unreconstructable) {
    countFailure(failures, 'delta_chain_unreconstructable');
    unresolvedParentCalls.push(id);
  }
  // Step 7.
  const { nodes, roots } = placeCalls(remaining, prefixIndexActive, failures, unresolvedParentCalls);
  // Step 8.
  const { unresolvedRetries, quarantined } = quarantineRetries(nodes);
  // Steps 9 and 10.
  const { chains, mainChain } = chainsOf(nodes);

  // Step 11.
  let captured = 0;
  for (const n of nodes) captured += n.entry.generation_token_ids.length;
  const delivered = mainChain?.generatedTokens ?? 0;
  const notes: BuildNotes = {
    roots,
    chains: chains.length,
    generated_tokens_captured: captured,
    generated_tokens_delivered: delivered,
    delivered_fraction: captured === 0 ? 0 : round4(delivered / captured),
    unresolved_retries: unresolvedRetries,
    empty_generation_calls: emptyGenerationCalls,
    parent_link_failures: Object.fromEntries(failures),
    unresolved_parent_calls: unresolvedParentCalls,
    quarantined,
    duplicate_conflicts: [...deduped.duplicateConflicts],
  };
  return finish(deduped.discarded, materialized, nodes, prefixIndexActive, chains, mainChain, notes);
}

function countFailure(failures: Map<ParentLinkReason, number>, reason: ParentLinkReason): void {
  failures.set(reason, (failures.get(reason) ?? 0) + 1);
}

/** Step 3: the entries with a generation, and the ids of those without. */
function withoutEmptyGenerations(entries: readonly MaterializedEntry[]): {
  remaining: MaterializedEntry[];
  emptyGenerationCalls: string[];
} {
  const emptyGenerationCalls: string[] = [];
  const remaining: MaterializedEntry[] = [];
  for (const m of entries) {
    if (m.entry.generation_token_ids.length === 0) emptyGenerationCalls.push(m.entry.model_call_id);
    else remaining.push(m);
  }
  return { remaining, emptyGenerationCalls };
}

/** Step 5: whether some call claims a parent that is not among the remaining calls. */
function claimsAnAbsentParent(remaining: readonly MaterializedEntry[]): boolean {
  const remainingIds = new Set(remaining.map((m) => m.entry.model_call_id));
  return remaining.some((m) => m.entry.parent_call_id !== null && !remainingIds.has(m.entry.parent_call_id));
}

/**
 * Step 7: places the calls in step-4 order, each under its parent when that is decided; records
 * each failure's reason in `failures` and the hard boundaries in `unresolvedParentCalls`.
 */
function placeCalls(
  remaining: readonly MaterializedEntry[],
  prefixIndexActive: boolean,
  failures: Map<ParentLinkReason, number>,
  unresolvedParentCalls: string[],
): { nodes: Node[]; roots: number } {
  const nodes: Node[] = [];
  const placed = new Map<string, Node>();
  const index = prefixIndexActive ? new PrefixIndex<Node>() : undefined;
  let roots = 0;
  for (const source of remaining) {
    const entry = source.entry;
    const node: Node = {
      id: entry.model_call_id,
      entry,
      cumulative: new CumulativeSequence(entry.prompt_token_ids, entry.generation_token_ids, source.cumulativeDigest),
      order: nodes.length,
      parent: null,
      children: [],
      quarantined: false,
      unresolvedBoundary: false,
      outcome: 'boundary',
      reason: null,
    };
    const prompt = entry.prompt_token_ids;
    let parent: Node | null = null;
    let reason: ParentLinkReason | null = null;
    if (entry.parent_resolution === 'root') {
      node.outcome = 'root';
    } else if (entry.parent_resolution === 'unresolved') {
      reason = 'parent_unresolved';
    } else if (entry.parent_resolution === 'resolved' && entry.parent_call_id === null) {
      reason = 'resolved_parent_missing_id';
    } else if (entry.parent_call_id !== null) {
      const claimed = placed.get(entry.parent_call_id);
      if (claimed === undefined) {
        const match = index?.lookup(prompt);
        if (match !== undefined && !match.ambiguous) {
          parent = match.node;
          reason = 'parent_call_id_missing_recovered';
          node.outcome = 'recovered';
        } else {
          reason = 'parent_call_id_missing';
        }
      } else if (parentVerifies(claimed, prompt)) {
        parent = claimed;
        node.outcome = 'linked';
      } else {
        reason = 'parent_digest_mismatch';
      }
    } else {
      reason = 'missing_resolution';
    }
    node.reason = reason;
    if (reason !== null) {
      countFailure(failures, reason);
      if (!reason.endsWith('_recovered')) {
        node.unresolvedBoundary = true;
        unresolvedParentCalls.push(node.id);
      }
    }
    if (parent !== null) {
      node.parent = parent;
      parent.children.push(node);
    } else {
      roots++;
    }
    index?.add(node, node.cumulative);
    placed.set(node.id, node);
    nodes.push(node);
  }
  return { nodes, roots };
}

/** Step 8: retries of one prompt under one parent; all but the kept ones are quarantined. */
function quarantineRetries(nodes: readonly Node[]): { unresolvedRetries: string[]; quarantined: string[] } {
  const unresolvedRetries: string[] = [];
  const quarantined: string[] = [];
  const groups = new Map<Node | null, Node[]>();
  for (const node of nodes) {
    const group = groups.get(node.parent);
    if (group === undefined) groups.set(node.parent, [node]);
    else group.push(node);
  }
  for (const group of groups.values()) {
    for (const siblings of groupByIdenticalPrompt(group)) {
      if (siblings.length < 2) continue;
      const extended = siblings.filter((n) => n.children.some((c) => !c.quarantined));
      let kept: Set<Node>;
      if (extended.length > 0) {
        kept = new Set(extended);
      } else {
        let smallest = siblings[0];
        for (const n of siblings) if (compareCodePoints(n.id, smallest.id) < 0) smallest = n;
        kept = new Set([smallest]);
        for (const n of siblings) unresolvedRetries.push(n.id);
      }
      for (const n of siblings) {
        if (!kept.has(n) && !n.quarantined) {
          n.quarantined = true;
          quarantined.push(n.id);
        }
      }
    }
  }
  return { unresolvedRetries, quarantined };
}

/** Steps 9 and 10: one chain per leaf whose path has no quarantined call; the main chain named. */
function chainsOf(nodes: readonly Node[]): { chains: BuildChain[]; mainChain: BuildChain | null } {
  // Step 9.
  const paths: Node[][] = [];
  for (const leaf of nodes) {
    if (leaf.children.length > 0) continue;
    const path: Node[] = [];
    for (let n: Node | null = leaf; n !== null; n = n.parent) path.push(n);
    path.reverse();
    if (path.some((n) => n.quarantined)) continue;
    paths.push(path);
  }
  // Step 10.
  let mainIndex = -1;
  for (let i = 0; i < paths.length; i++) {
    if (mainIndex < 0 || compareRoots(paths[i][0], paths[mainIndex][0]) < 0) mainIndex = i;
  }
  let branch = 0;
  const chains: BuildChain[] = paths.map((path, i) => ({
    name: i === mainIndex ? 'main' : `branch-${branch++}`,
    callIds: path.map((n) => n.id),
    links: path.map((n) => n.entry),
    generatedTokens: path.reduce((sum, n) => sum + n.entry.generation_token_ids.length, 0),
  }));
  return { chains, mainChain: mainIndex >= 0 ? chains[mainIndex] : null };
}

/** Main-chain key (step 10): root `created_at`, then root id in code-point order. */
function compareRoots(a: Node, b: Node): number {
  const ca = a.entry.created_at;
  const cb = b.entry.created_at;
  if (ca !== cb) return ca < cb ? -1 : 1;
  return compareCodePoints(a.id, b.id);
}

/**
 * Sub-groups of nodes with identical full prompts, in order of first appearance (step 8).
 * Prompts are bucketed by length and compared from the end, where siblings usually differ.
 */
function groupByIdenticalPrompt(group: readonly Node[]): Node[][] {
  const subgroups: Node[][] = [];
  if (group.length < 2) return group.length === 1 ? [[group[0]]] : subgroups;
  const byLength = new Map<number, Node[][]>();
  for (const node of group) {
    const prompt = node.entry.prompt_token_ids;
    let candidates = byLength.get(prompt.length);
    if (candidates === undefined) {
      candidates = [];
      byLength.set(prompt.length, candidates);
    }
    const same = candidates.find((sub) => samePromptFromEnd(sub[0].entry.prompt_token_ids, prompt));
    if (same !== undefined) {
      same.push(node);
    } else {
      const sub = [node];
      candidates.push(sub);
      subgroups.push(sub);
    }
  }
  return subgroups;
}

function samePromptFromEnd(a: TokenEntry['prompt_token_ids'], b: TokenEntry['prompt_token_ids']): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = a.length - 1; i >= 0; i--) {
    if (!tokenIdsEqual(a[i], b[i])) return false;
  }
  return true;
}

/** What a call's view takes from the steps (everything but the record's own facts). */
type CallOutcome = Omit<
  BuildCall,
  | 'id'
  | 'fileIndex'
  | 'parentResolution'
  | 'claimedParentId'
  | 'generationLength'
  | 'emptyGeneration'
  | 'duplicateCopies'
  | 'conflictingCopies'
  | 'entry'
>;

/**
 * A call's view: one object literal with every field in order (object spread here cost ~10 µs
 * a call, a tenth of a build of small rollouts).
 */
function callView(
  entry: TokenEntry,
  fileIndex: number,
  copies: { all: number; conflicting: number } | undefined,
  o: CallOutcome,
): BuildCall {
  return {
    id: entry.model_call_id,
    fileIndex,
    parentResolution: entry.parent_resolution,
    claimedParentId: entry.parent_call_id,
    generationLength: entry.generation_token_ids.length,
    emptyGeneration: entry.generation_token_ids.length === 0,
    duplicateCopies: copies?.all ?? 0,
    conflictingCopies: copies?.conflicting ?? 0,
    status: o.status,
    unreconstructable: o.unreconstructable,
    storedAsDelta: o.storedAsDelta,
    order: o.order,
    parentId: o.parentId,
    outcome: o.outcome,
    reason: o.reason,
    promptLength: o.promptLength,
    storedPromptLength: o.storedPromptLength,
    quarantined: o.quarantined,
    unresolvedBoundary: o.unresolvedBoundary,
    children: o.children,
    entry,
  };
}

/** Assembles the per-call view (file order) from the steps' outcomes. */
function finish(
  discarded: readonly DiscardedDuplicate[],
  materialized: ReturnType<typeof materializeDeltaPrompts>,
  nodes: readonly Node[],
  prefixIndexActive: boolean,
  chains: BuildChain[],
  mainChain: BuildChain | null,
  notes: BuildNotes,
): ChainBuild {
  const copies = new Map<string, { all: number; conflicting: number }>();
  for (const d of discarded) {
    const c = copies.get(d.id) ?? { all: 0, conflicting: 0 };
    c.all++;
    if (d.conflict) c.conflicting++;
    copies.set(d.id, c);
  }
  const nodeById = new Map<string, Node>(nodes.map((n) => [n.id, n]));
  const calls: { fileIndex: number; call: BuildCall }[] = [];
  for (const u of materialized.unreconstructable) {
    calls.push({
      fileIndex: u.fileIndex,
      call: callView(u.entry, u.fileIndex, copies.get(u.entry.model_call_id), {
        status: 'unreconstructable',
        unreconstructable: u.why === 'walk' ? 'parent_walk_failed' : 'digest_mismatch',
        storedAsDelta: true,
        order: null,
        parentId: null,
        outcome: null,
        reason: 'delta_chain_unreconstructable',
        promptLength: null,
        storedPromptLength: u.entry.prompt_token_ids.length,
        quarantined: false,
        unresolvedBoundary: false,
        children: [],
      }),
    });
  }
  for (const m of materialized.entries) {
    const node = nodeById.get(m.entry.model_call_id);
    calls.push({
      fileIndex: m.fileIndex,
      call: callView(m.entry, m.fileIndex, copies.get(m.entry.model_call_id), {
        status: node === undefined ? 'empty_generation' : 'placed',
        unreconstructable: null,
        storedAsDelta: m.storedAsDelta,
        order: node?.order ?? null,
        parentId: node?.parent?.id ?? null,
        outcome: node?.outcome ?? null,
        reason: node?.reason ?? null,
        promptLength: m.entry.prompt_token_ids.length,
        storedPromptLength: m.stored.prompt_token_ids.length,
        quarantined: node?.quarantined ?? false,
        unresolvedBoundary: node?.unresolvedBoundary ?? false,
        children: node?.children.map((c) => c.id) ?? [],
      }),
    });
  }
  calls.sort((a, b) => a.fileIndex - b.fileIndex);
  return {
    calls: calls.map((c) => c.call),
    duplicates: discarded,
    placementOrder: nodes.map((n) => n.id),
    prefixIndexActive,
    chains,
    mainChain,
    notes,
  };
}
