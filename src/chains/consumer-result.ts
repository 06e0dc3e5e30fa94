import { TokcapError } from '../errors.js';
import { pyRepr } from '../layout/py-repr.js';
import { round4 } from '../json/round4.js';
import { isJsonObject, JsonFloat, truthy } from '../json/value.js';
import type { TokenEntry } from '../records/token-entry.js';
import { buildChains, type ChainBuild } from './chain-builder.js';
import { checkPrefixContiguity, projectChainNoting, type ProjectedResponse } from './projection.js';
import { builderError, CONSUMER_CAUGHT_CLASSES, PythonBuildError } from './python-semantics.js';

/**
 * The reference consumer's result for one rollout (docs/format.md#consumer-result): the success object or the
 * failed-build object, keys in the documented order, and the snapshot finishing steps 3–4.
 */

export const BUILDER_NAME = 'prefix_merging';
export const KNOWN_BUILDERS: readonly string[] = [BUILDER_NAME];
export const NO_TOKEN_RECORDS = 'capture contains no token records';
export const NO_SAFE_CHAIN = 'capture produced no safe trainable chain';

export type CaptureSnapshot = { snapshot_id: string; version: number };

export type BuildMetrics = {
  n_calls: number;
  chains: number;
  roots: number;
  quarantined_calls: number;
  quarantined_fraction: JsonFloat;
  delivered_fraction: JsonFloat;
  generated_tokens_captured: number;
  generated_tokens_delivered: number;
  parent_link_failures: { [reason: string]: number };
  unresolved_parent_calls: number;
  empty_generation_calls: number;
  /** Added (last) by `finishConsumerResult` when the snapshot is incomplete. */
  capture_incomplete?: true;
};

export type SuccessfulBuildResult = {
  rollout_id: string;
  builder: 'prefix_merging';
  rebuilt_response: ProjectedResponse;
  metrics: BuildMetrics;
  mask_sample: boolean;
  unresolved_retries: string[];
  unresolved_parent_calls: string[];
  /** Added (last) by `finishConsumerResult`. */
  _capture_snapshot?: CaptureSnapshot;
  /** tokcap's label for a read-only dry build (docs/cli.md#json-commands); never set by this module. */
  preview?: true;
};

export type FailedBuildResult = {
  rollout_id: string;
  builder: 'prefix_merging';
  rebuilt_response: null;
  mask_sample: true;
  error: string;
  metrics: { n_calls: number; capture_incomplete?: true };
  _capture_snapshot?: CaptureSnapshot;
  /** tokcap's label for a read-only dry build (docs/cli.md#json-commands); never set by this module. */
  preview?: true;
};

export type ConsumerResult = SuccessfulBuildResult | FailedBuildResult;

export interface SnapshotFacts {
  /** The freeze's `incomplete` (state flag or dangling intents). */
  incomplete: boolean;
  /** The frozen snapshot's identity; omit both for a dry build (no `_capture_snapshot`). */
  snapshot_id?: string;
  version?: number;
}

/** The failed-build object (keys in the reference's order). */
export function failedBuild(rolloutId: string, error: string, nCalls: number): FailedBuildResult {
  return {
    rollout_id: rolloutId,
    builder: BUILDER_NAME,
    rebuilt_response: null,
    mask_sample: true,
    error,
    metrics: { n_calls: nCalls },
  };
}

/** docs/format.md#consumer-result step 2: the snapshot holds no entries (bare message, no exception class). */
export function noRecordsResult(rolloutId: string): FailedBuildResult {
  return failedBuild(rolloutId, NO_TOKEN_RECORDS, 0);
}

/**
 * The `error` string for a failure the consumer catches (`"<Class>: <message>"`), or undefined
 * when the reference would let it propagate. An id that does not fit in 64 bits is reported
 * rather than wrapped (the reference crashes with StopIteration, docs/format.md#token-digest-errors).
 */
export function consumerErrorString(e: unknown): string | undefined {
  if (e instanceof PythonBuildError) return e.pythonString();
  if (e instanceof TokcapError) {
    if (!(CONSUMER_CAUGHT_CLASSES as readonly string[]).includes(e.pyClass)) return undefined;
    if (/^token id .* does not fit in 64 bits$/.test(e.message)) return undefined;
    return e.pythonString();
  }
  return undefined;
}

export interface AssembledBuild {
  readonly result: ConsumerResult;
  /** The chain build behind the result; null when the builder itself failed. */
  readonly chains: ChainBuild | null;
}

/**
 * `assemble(R, entries)` of the reference, returning the structured chain build as well so that
 * views and the result come from one computation. `entries` are the snapshot's validated
 * entries in file order (duplicates included).
 */
export function assembleWithChains(
  rolloutId: string,
  entries: readonly TokenEntry[],
  model = '',
  builder: string = BUILDER_NAME,
): AssembledBuild {
  let chains: ChainBuild | null = null;
  try {
    if (builder !== BUILDER_NAME) {
      throw builderError(
        'ValueError',
        `unknown builder ${pyRepr(builder)}; known: [${KNOWN_BUILDERS.map(pyRepr).join(', ')}]`,
      );
    }
    chains = buildChains(entries);
    return { result: resultFromChains(rolloutId, chains, entries.length, model), chains };
  } catch (e) {
    const error = consumerErrorString(e);
    if (error === undefined) throw e;
    return { result: failedBuild(rolloutId, error, entries.length), chains };
  }
}

/** `assemble(R, entries)` (docs/format.md#consumer-result): success or failed-build object. */
export function assemble(
  rolloutId: string,
  entries: readonly TokenEntry[],
  model = '',
  builder: string = BUILDER_NAME,
): ConsumerResult {
  return assembleWithChains(rolloutId, entries, model, builder).result;
}

/** docs/format.md#consumer-result step 2: "no token records" for an empty snapshot, else `assemble`. */
export function consumerResultFor(
  rolloutId: string,
  entries: readonly TokenEntry[],
  model = '',
  builder: string = BUILDER_NAME,
): ConsumerResult {
  return entries.length === 0 ? noRecordsResult(rolloutId) : assemble(rolloutId, entries, model, builder);
}

/**
 * The success object from a chain build: log-prob check, projection of the main chain,
 * contiguity check, metrics and mask. Throws the builder's Python-classed errors.
 */
function resultFromChains(rolloutId: string, build: ChainBuild, nCalls: number, model: string): SuccessfulBuildResult {
  // Per-chain log-prob check (unreachable for validated entries, docs/format.md#open-question-8).
  for (const chain of build.chains) {
    for (const link of chain.links) {
      const a = link.generation_token_ids.length;
      const b = link.generation_log_probs.length;
      if (a !== b) {
        throw builderError(
          'ValueError',
          `call ${pyRepr(link.model_call_id)} has ${a} generated tokens but ${b} log probs`,
        );
      }
    }
  }
  if (build.mainChain === null) throw builderError('ValueError', NO_SAFE_CHAIN);
  const { response, contiguousByConstruction } = projectChainNoting(rolloutId, build.mainChain.links, model);
  if (!contiguousByConstruction) checkPrefixContiguity(response.output);

  const notes = build.notes;
  const quarantined = notes.quarantined.length;
  const hasGeneratedTokens = response.output.some((item) => isJsonObject(item) && truthy(item.generation_token_ids));
  const maskSample =
    notes.unresolved_retries.length > 0 ||
    notes.unresolved_parent_calls.length > 0 ||
    notes.roots !== 1 ||
    notes.chains !== 1 ||
    !hasGeneratedTokens;
  return {
    rollout_id: rolloutId,
    builder: BUILDER_NAME,
    rebuilt_response: response,
    metrics: {
      n_calls: nCalls,
      chains: notes.chains,
      roots: notes.roots,
      quarantined_calls: quarantined,
      quarantined_fraction: new JsonFloat(nCalls === 0 ? 0 : round4(quarantined / nCalls)),
      delivered_fraction: new JsonFloat(notes.delivered_fraction),
      generated_tokens_captured: notes.generated_tokens_captured,
      generated_tokens_delivered: notes.generated_tokens_delivered,
      parent_link_failures: { ...notes.parent_link_failures },
      unresolved_parent_calls: notes.unresolved_parent_calls.length,
      empty_generation_calls: notes.empty_generation_calls.length,
    },
    mask_sample: maskSample,
    unresolved_retries: [...notes.unresolved_retries],
    unresolved_parent_calls: [...notes.unresolved_parent_calls],
  };
}

/**
 * docs/format.md#consumer-result steps 3–4, for every result except a freeze failure: an incomplete snapshot masks the
 * sample and adds `capture_incomplete: true` as the last metrics key; `_capture_snapshot` is
 * added as the last top-level key (only when the snapshot identity is given). Returns a new
 * object.
 */
export function finishConsumerResult<R extends ConsumerResult>(result: R, snapshot: SnapshotFacts): R {
  const metrics = snapshot.incomplete
    ? { ...result.metrics, capture_incomplete: true as const }
    : { ...result.metrics };
  const finished: R = { ...result, mask_sample: snapshot.incomplete ? true : result.mask_sample, metrics };
  if (snapshot.snapshot_id !== undefined && snapshot.version !== undefined) {
    finished._capture_snapshot = { snapshot_id: snapshot.snapshot_id, version: snapshot.version };
  }
  return finished;
}
