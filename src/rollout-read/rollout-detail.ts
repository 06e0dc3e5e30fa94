/**
 * The rollout detail behind `tokcap inspect DIR ID` and `tokcap watch`'s rollout view (both
 * render this one object), a view of the one reading of the rollout (read-rollout.ts, with the
 * digest check on the same copy): its status and conditions, the chain tree of a rollout (every
 * call under its parent as the builder decided), the calls the builder dropped, the dangling
 * intents, the incomplete markers (the empty call id kept), the digest check per call and the
 * build verdict with every mask cause. Read-only, nothing written. A rollout whose facts could
 * not be read is `unavailable` and nothing more is claimed about it. When the records could not
 * be read (a lock timeout, an I/O error), status and conditions stay the summary's
 * (rollout-status.ts) and every part that needs the records is unavailable with that error.
 */
import { errorFactsOf, type ErrorFacts } from '../errors.js';
import type { BuildCall, ChainBuild, LinkOutcome } from '../chains/chain-builder.js';
import type { ConsumerResult } from '../chains/consumer-result.js';
import { describeReason, type MaskCause } from '../chains/mask-causes.js';
import { firstDivergences, type Divergence } from '../divergence/first-divergence.js';
import type { RolloutFacts } from '../facts/rollout-facts.js';
import type { copyRollout } from '../ops/rollout-copy.js';
import type { StoreOptions } from '../ops/store.js';
import type { Finding } from '../verify/findings.js';
import { previewError, readRollout, type RolloutRead } from './read-rollout.js';
import { rolloutStatus, type RolloutStatusAnswer } from '../status/rollout-status.js';
import type { Verdict, VerdictAnswer } from '../status/verdict.js';

/** What the detail shows of the preview build. */
export type PreviewOutcome =
  | {
      kind: 'built';
      /** What `build` (without --freeze) prints for this rollout. */
      result: ConsumerResult;
      /** The chain build behind a successful (or builder-failed) result; null otherwise. */
      chains: ChainBuild | null;
      /** Dangling intents of the snapshot read (the facts' when it could not be read). */
      danglingIntents: readonly string[];
      /** Byte offset of a torn final line a freeze would truncate (the preview skips it). */
      tornTailAt?: number;
      causes: MaskCause[];
      verdict: VerdictAnswer;
    }
  | {
      /** The preview could not be computed at all (lock timeout, I/O error, unexpected failure). */
      kind: 'unreadable';
      error: ErrorFacts;
      verdict: VerdictAnswer;
    };

/** The digest check of one call (`verify-digests` findings that name it). */
export type DigestCheck =
  { status: 'ok' } | { status: 'unchecked' } | { status: 'findings'; severity: 'error' | 'warning'; codes: string[] };

export interface TreeNode {
  readonly id: string;
  readonly depth: number;
  /** For each ancestor level 1..depth-1: whether a later sibling follows there (draw a `│`). Roots draw none. */
  readonly guides: readonly boolean[];
  /** Last child of its parent (or last root). */
  readonly last: boolean;
  readonly outcome: LinkOutcome;
  /** The `parent_link_failures` reason, if any, and its explanation. */
  readonly reason: string | null;
  readonly reasonText: string | null;
  /** The parent the record claimed (when it differs from where the builder put it, it shows). */
  readonly claimedParentId: string | null;
  readonly promptLength: number | null;
  readonly storedPromptLength: number;
  readonly storedAsDelta: boolean;
  readonly generationLength: number;
  readonly quarantined: boolean;
  readonly unresolvedRetry: boolean;
  readonly unresolvedBoundary: boolean;
  readonly onMain: boolean;
  readonly duplicateCopies: number;
  readonly conflictingCopies: number;
  readonly digest: DigestCheck;
}

/** A call the builder did not place (steps 2 and 3). */
export interface UnplacedCall {
  readonly id: string;
  readonly why: 'empty_generation' | 'unreconstructable';
  readonly detail: string;
  readonly storedAsDelta: boolean;
  readonly digest: DigestCheck;
}

export interface BuildVerdict {
  /** Whether a preview build ran (not when the rollout could not be read). */
  readonly built: boolean;
  /** The consumer verdict (src/status/verdict.ts); null when no build ran. */
  readonly verdict: Verdict | null;
  /** The result is the failed-build dictionary ("could not be built"). */
  readonly unbuilt: boolean;
  readonly masked: boolean | null;
  /** The failed build's `error` string. */
  readonly error?: string;
  readonly causes: readonly MaskCause[];
  readonly roots?: number;
  readonly chains?: number;
  readonly nCalls?: number;
  readonly deliveredFraction?: number;
  readonly tokensDelivered?: number;
  readonly tokensCaptured?: number;
}

export interface RolloutDetail {
  readonly id: string;
  /** Status and conditions (src/status/rollout-status.ts), as every command gives them. */
  readonly status: RolloutStatusAnswer;
  /** null when the rollout could not be read (`status` is then `unavailable`). */
  readonly facts: RolloutFacts | null;
  readonly tree: readonly TreeNode[];
  readonly unplaced: readonly UnplacedCall[];
  readonly chains: readonly { name: string; callIds: readonly string[]; generatedTokens: number }[];
  readonly danglingIntents: readonly string[];
  readonly incompleteMarkers: readonly string[];
  readonly incompleteFlag: boolean;
  /** A torn final line (crash artefact) and where it starts, when the snapshot read saw one. */
  readonly tornTail: { at?: number } | null;
  readonly verdict: BuildVerdict;
  /** The chain build the tree comes from (a call's tokens for its text view); null when not built. */
  readonly build: ChainBuild | null;
  /** Where a masked rollout's broken boundaries part from their candidate parents (src/divergence). */
  readonly divergences: readonly Divergence[];
  /** verify-digests findings that name no call (torn tail, unindexed tail, index problems...). */
  readonly rolloutFindings: readonly Finding[];
  readonly digestError?: string;
  /**
   * Why the records could not be read although the status was answered (the verdict is then
   * `unavailable` and the digests unchecked); absent otherwise, and when `status` is `unavailable`.
   */
  readonly recordsError?: ErrorFacts;
  readonly errors: readonly ErrorFacts[];
}

export interface DetailReaders {
  /** Takes the rollout's copy under its lock (default `copyRollout`). */
  copy: typeof copyRollout;
}

export interface DetailOptions {
  /** Count every line of J (`inspect DIR ID`); the watch reads the index plus the tail. */
  deep?: boolean;
}

export async function loadRolloutDetail(
  store: StoreOptions,
  id: string,
  readers: Partial<DetailReaders> = {},
  options: DetailOptions = {},
): Promise<RolloutDetail> {
  const read = await readRollout(store, id, { deep: options.deep, digests: true, copy: readers.copy });
  return detailOf(read);
}

/** The detail's view of a reading with its digest check. */
export function detailOf(read: RolloutRead): RolloutDetail {
  const { id, status, facts } = read;
  const errors: ErrorFacts[] = facts ? facts.errors.map(errorFactsOf) : [status.error!];
  // Made-up facts are worse than none: an unavailable rollout is reported as such, no more.
  if (status.status === 'unavailable' || !facts)
    return assembleDetail(id, null, undefined, null, undefined, errors, status);
  const preview = previewOf(read, facts);
  if (preview.kind === 'unreadable') errors.push(preview.error);
  return assembleDetail(id, facts, preview, read.findings ?? null, read.digestError, errors, status, read.recordsError);
}

function previewOf(read: RolloutRead, facts: RolloutFacts): PreviewOutcome {
  const { build, verdict } = read;
  const error = previewError(read);
  if (error !== undefined || build === undefined) return { kind: 'unreadable', error: error!, verdict };
  return {
    kind: 'built',
    result: build.result,
    chains: build.chains,
    danglingIntents: build.readFailure === undefined ? build.danglingIntents : facts.dangling_intents,
    tornTailAt: build.tornTailAt,
    causes: build.causes,
    verdict,
  };
}

/** Pure part of `loadRolloutDetail` (exported for tests). */
export function assembleDetail(
  id: string,
  facts: RolloutFacts | null,
  preview: PreviewOutcome | undefined,
  findings: readonly Finding[] | null,
  digestError: string | undefined,
  errors: ErrorFacts[],
  status: RolloutStatusAnswer = facts ? rolloutStatus(facts) : { status: 'unavailable', conditions: [] },
  recordsError?: ErrorFacts,
): RolloutDetail {
  const built = preview?.kind === 'built' ? preview : undefined;
  const chains = built?.chains ?? null;
  const byCall = new Map<string, Finding[]>();
  const rolloutFindings: Finding[] = [];
  for (const f of findings ?? []) {
    if (f.call_id === undefined) rolloutFindings.push(f);
    else byCall.set(f.call_id, [...(byCall.get(f.call_id) ?? []), f]);
  }
  const digestOf = (callId: string): DigestCheck => {
    if (findings === null) return { status: 'unchecked' };
    const fs = byCall.get(callId);
    if (!fs || fs.length === 0) return { status: 'ok' };
    return {
      status: 'findings',
      severity: fs.some((f) => f.severity === 'error') ? 'error' : 'warning',
      codes: [...new Set(fs.map((f) => f.code))],
    };
  };

  const result = built?.result;
  const verdict: BuildVerdict = built
    ? {
        built: true,
        verdict: built.verdict.verdict,
        unbuilt: built.verdict.unbuilt,
        masked: result!.mask_sample,
        error: 'error' in result! ? result.error : undefined,
        causes: built.causes,
        ...('error' in result!
          ? { nCalls: result.metrics.n_calls }
          : {
              roots: result!.metrics.roots,
              chains: result!.metrics.chains,
              nCalls: result!.metrics.n_calls,
              deliveredFraction: result!.metrics.delivered_fraction.value,
              tokensDelivered: result!.metrics.generated_tokens_delivered,
              tokensCaptured: result!.metrics.generated_tokens_captured,
            }),
      }
    : {
        built: false,
        verdict: preview?.verdict.verdict ?? (status.status === 'unavailable' ? 'unavailable' : null),
        unbuilt: false,
        masked: null,
        causes: [],
      };

  return {
    id,
    status,
    facts,
    tree: chains
      ? chainTree(chains, new Set(result && 'unresolved_retries' in result ? result.unresolved_retries : []), digestOf)
      : [],
    unplaced: chains ? unplacedCalls(chains, digestOf) : [],
    chains: chains
      ? chains.chains.map((c) => ({ name: c.name, callIds: c.callIds, generatedTokens: c.generatedTokens }))
      : [],
    danglingIntents: built?.danglingIntents ?? facts?.dangling_intents ?? [],
    incompleteMarkers: facts?.incomplete_marker_calls ?? [],
    incompleteFlag: facts?.incomplete_flag ?? false,
    tornTail: built?.tornTailAt !== undefined ? { at: built.tornTailAt } : facts?.torn_tail ? {} : null,
    verdict,
    build: chains,
    divergences: chains && result?.mask_sample ? firstDivergences(chains) : [],
    rolloutFindings,
    digestError,
    ...(recordsError && status.status !== 'unavailable' ? { recordsError } : {}),
    errors,
  };
}

/** Flattens the builder's parent links into a pre-order tree (roots and children in step-4 order). */
export function chainTree(
  build: ChainBuild,
  unresolvedRetries: ReadonlySet<string>,
  digestOf: (id: string) => DigestCheck,
): TreeNode[] {
  const placed = build.calls.filter((c) => c.status === 'placed');
  const byId = new Map<string, BuildCall>(placed.map((c) => [c.id, c]));
  const main = new Set(build.mainChain?.callIds ?? []);
  const roots = placed
    .filter((c) => c.parentId === null || !byId.has(c.parentId))
    .sort((a, b) => (a.order ?? 0) - (b.order ?? 0));
  const out: TreeNode[] = [];
  const visit = (call: BuildCall, depth: number, guides: boolean[], last: boolean) => {
    out.push({
      id: call.id,
      depth,
      guides,
      last,
      outcome: call.outcome ?? 'boundary',
      reason: call.reason,
      reasonText: call.reason ? describeReason(call.reason) : null,
      claimedParentId: call.claimedParentId,
      promptLength: call.promptLength,
      storedPromptLength: call.storedPromptLength,
      storedAsDelta: call.storedAsDelta,
      generationLength: call.generationLength,
      quarantined: call.quarantined,
      unresolvedRetry: unresolvedRetries.has(call.id),
      unresolvedBoundary: call.unresolvedBoundary,
      onMain: main.has(call.id),
      duplicateCopies: call.duplicateCopies,
      conflictingCopies: call.conflictingCopies,
      digest: digestOf(call.id),
    });
    const kids = call.children.map((k) => byId.get(k)).filter((k): k is BuildCall => k !== undefined);
    // Roots are drawn flush left, so guides start below them.
    const childGuides = depth === 0 ? [] : [...guides, !last];
    kids.forEach((k, i) => visit(k, depth + 1, childGuides, i === kids.length - 1));
  };
  roots.forEach((r, i) => visit(r, 0, [], i === roots.length - 1));
  return out;
}

function unplacedCalls(build: ChainBuild, digestOf: (id: string) => DigestCheck): UnplacedCall[] {
  const out: UnplacedCall[] = [];
  for (const c of build.calls) {
    if (c.status === 'empty_generation') {
      out.push({
        id: c.id,
        why: 'empty_generation',
        detail: 'empty generation (dropped before linking)',
        storedAsDelta: c.storedAsDelta,
        digest: digestOf(c.id),
      });
    } else if (c.status === 'unreconstructable') {
      const detail =
        c.unreconstructable === 'digest_mismatch'
          ? 'delta prompt rebuilt but its digest differs'
          : 'delta prompt cannot be rebuilt (parent walk failed)';
      out.push({ id: c.id, why: 'unreconstructable', detail, storedAsDelta: c.storedAsDelta, digest: digestOf(c.id) });
    }
  }
  return out;
}
