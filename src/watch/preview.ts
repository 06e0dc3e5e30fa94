/**
 * The read-only preview build behind the watch view: the same dictionary `buildRollout(store, id,
 * { freeze: false })` returns (one shared-lock read of the snapshot, nothing written), plus the
 * chain build and the snapshot's dangling intents, so that the mask causes are explained from the
 * very snapshot the verdict came from. `preview.test.ts` checks it against `buildRollout`.
 */
import { toTokcapError } from '../errors.js';
import { rolloutFacts, type FactsOptions, type RolloutFacts } from '../facts/rollout-facts.js';
import type { FileKind } from '../layout/file-names.js';
import { assembleWithChains, failedBuild, finishConsumerResult, noRecordsResult, type ConsumerResult } from '../build/consumer-result.js';
import type { ChainBuild } from '../build/chain-builder.js';
import { maskCauses, type MaskCause } from '../build/mask-causes.js';
import { readSnapshotReadOnly, type ReadOnlyCopySource } from '../ops/read-snapshot.js';
import type { StoreOptions } from '../ops/store.js';
import type { RowError } from './rows.js';

export type PreviewOutcome =
  | {
      kind: 'built';
      /** What `build` (without --freeze) prints for this rollout. */
      result: ConsumerResult;
      /** The chain build behind a successful (or builder-failed) result; null otherwise. */
      chains: ChainBuild | null;
      /** Dangling intents of the snapshot read (the failed read falls back to the caller's). */
      danglingIntents: readonly string[];
      /** Byte offset of a torn final line a freeze would truncate (the preview skips it). */
      tornTailAt?: number;
      causes: MaskCause[];
    }
  | {
      /** The preview could not be computed at all (lock timeout, unexpected failure). */
      kind: 'unreadable';
      error: RowError;
    };

export interface PreviewContext {
  /** Incomplete-marker call ids (for the cause text). */
  incompleteMarkers: readonly string[];
  /** The state's incomplete flag. */
  incompleteFlag: boolean;
  /** Dangling intents as the caller read them, used when the snapshot itself cannot be read. */
  danglingIntents: readonly string[];
}

export async function previewRollout(
  store: StoreOptions,
  rolloutId: string,
  context: PreviewContext,
  copySource?: ReadOnlyCopySource,
): Promise<PreviewOutcome> {
  let snapshot;
  try {
    snapshot = await readSnapshotReadOnly(store, rolloutId, copySource);
  } catch (e) {
    const err = toTokcapError(e, { rolloutId });
    if (err.kind === 'lock_timeout') return { kind: 'unreadable', error: { kind: err.kind, message: err.message } };
    const result: ConsumerResult = { ...failedBuild(rolloutId, err.pythonString(), 0), preview: true };
    return {
      kind: 'built',
      result,
      chains: null,
      danglingIntents: context.danglingIntents,
      causes: maskCauses(result, { ...context, chains: null }),
    };
  }
  try {
    let chains: ChainBuild | null = null;
    let result: ConsumerResult;
    if (snapshot.entries.length === 0) result = noRecordsResult(rolloutId);
    else ({ result, chains } = assembleWithChains(rolloutId, snapshot.entries, ''));
    result = { ...finishConsumerResult(result, { incomplete: snapshot.incomplete }), preview: true };
    return {
      kind: 'built',
      result,
      chains,
      danglingIntents: snapshot.danglingIntents,
      tornTailAt: snapshot.tornTailAt,
      causes: maskCauses(result, {
        danglingIntents: snapshot.danglingIntents,
        incompleteMarkers: context.incompleteMarkers,
        incompleteFlag: context.incompleteFlag,
        chains,
      }),
    };
  } catch (e) {
    // The reference would crash here (an error its consumer does not catch); show it, keep going.
    const err = toTokcapError(e, { rolloutId });
    return { kind: 'unreadable', error: { kind: err.kind, message: `build crashed: ${err.message}` } };
  }
}

/**
 * What a directory row keeps of a preview: the verdict and its causes, not the rebuilt response
 * or the chains (10,000 rows stay small, and this crosses a worker boundary as plain data).
 */
export type RowPreview =
  | {
      kind: 'built';
      wouldMask: boolean;
      /** The failed build's `error` string. */
      buildError?: string;
      danglingIntents: readonly string[];
      tornTailAt?: number;
      causes: MaskCause[];
    }
  | { kind: 'unreadable'; error: RowError };

export function rowPreview(p: PreviewOutcome): RowPreview {
  if (p.kind === 'unreadable') return p;
  const out: RowPreview = { kind: 'built', wouldMask: p.result.mask_sample, danglingIntents: [...p.danglingIntents], causes: p.causes.map((c) => ({ ...c })) };
  if ('error' in p.result) out.buildError = p.result.error;
  if (p.tornTailAt !== undefined) out.tornTailAt = p.tornTailAt;
  return out;
}

/** Everything a directory row is derived from: the facts, and the preview unless retired. */
export interface RowRead {
  facts: RolloutFacts;
  preview?: RowPreview;
}

/**
 * Where a row read gets its copies taken under a lock. The defaults take them in this thread; the
 * read worker (read-worker.ts) asks the main thread, which takes every rollout lock of the process.
 */
export interface RowCopySources {
  readJsonl?: FactsOptions['readJsonl'];
  readOnlyCopy?: ReadOnlyCopySource;
}

/** The row read: facts, then the preview build. */
export async function readRow(store: StoreOptions, rolloutId: string, files: ReadonlySet<FileKind>, sources: RowCopySources = {}): Promise<RowRead> {
  const facts = await rolloutFacts(store, rolloutId, { files: new Set(files), readJsonl: sources.readJsonl });
  if (facts.retired) return { facts };
  const context = {
    incompleteMarkers: facts.incomplete_marker_calls,
    incompleteFlag: facts.incomplete_flag,
    danglingIntents: facts.dangling_intents,
  };
  const preview = await previewRollout(store, rolloutId, context, sources.readOnlyCopy);
  return { facts, preview: rowPreview(preview) };
}
