/**
 * The read-only preview build behind the watch view: the same dictionary `buildRollout(store, id,
 * { freeze: false })` returns (one shared-lock read of the snapshot, nothing written), plus the
 * chain build and the snapshot's dangling intents, so that the mask causes are explained from the
 * very snapshot the verdict came from. `preview.test.ts` checks it against `buildRollout`.
 */
import { toTokcapError, type ErrorFacts } from '../errors.js';
import { rolloutFacts, type FactsOptions, type RolloutFacts } from '../facts/rollout-facts.js';
import type { FileKind } from '../layout/file-names.js';
import type { ConsumerResult } from '../chains/consumer-result.js';
import type { ChainBuild } from '../chains/chain-builder.js';
import { buildRolloutDetailed, type SnapshotSource } from '../chains/build-rollout.js';
import type { MaskCause } from '../chains/mask-causes.js';
import { copyReadOnlySnapshot, type ReadOnlyCopySource } from '../ops/read-snapshot.js';
import { snapshotCopyOf, type RolloutCopyRecord } from '../ops/rollout-copy.js';
import type { StoreOptions } from '../ops/store.js';
import type { JsonBytesReader } from '../json/parse-json.js';
import { rolloutStatus, type RolloutStatusAnswer } from '../status/rollout-status.js';
import { unavailableVerdict, verdictOf, type VerdictAnswer } from '../status/verdict.js';

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
      verdict: VerdictAnswer;
    }
  | {
      /** The preview could not be computed at all (lock timeout, I/O error, unexpected failure). */
      kind: 'unreadable';
      error: ErrorFacts;
      verdict: VerdictAnswer;
    };

export interface PreviewContext {
  /** Incomplete-marker call ids (for the cause text). */
  incompleteMarkers: readonly string[];
  /** The state's incomplete flag. */
  incompleteFlag: boolean;
  /** Dangling intents as the caller read them, used when the snapshot itself cannot be read. */
  danglingIntents: readonly string[];
}

/** A read-only `SnapshotSource` over a copy source (a preview never freezes). */
function readOnlySource(store: StoreOptions, copySource: ReadOnlyCopySource): SnapshotSource {
  return {
    frozen: () => Promise.reject(new Error('internal: a preview does not freeze')),
    readOnly: (id) => copySource(store, id),
  };
}

/** The read-only preview build of `build` (`buildRolloutDetailed`), as the watch and inspect show it. */
export async function previewRollout(
  store: StoreOptions,
  rolloutId: string,
  context: PreviewContext,
  copySource: ReadOnlyCopySource = copyReadOnlySnapshot,
  jsonReader?: JsonBytesReader,
): Promise<PreviewOutcome> {
  let d;
  try {
    d = await buildRolloutDetailed(store, rolloutId, {
      freeze: false,
      source: readOnlySource(store, copySource),
      incompleteContext: { incompleteFlag: context.incompleteFlag, incompleteMarkers: context.incompleteMarkers },
      jsonReader,
    });
  } catch (e) {
    // The reference would crash here (an error its consumer does not catch); show it, keep going.
    const err = toTokcapError(e, { rolloutId });
    return {
      kind: 'unreadable',
      error: { ...err.facts(), message: `build crashed: ${err.message}` },
      verdict: unavailableVerdict(err.facts()),
    };
  }
  const verdict = verdictOf(d);
  if (verdict.verdict === 'unavailable') {
    return { kind: 'unreadable', error: d.readFailure!.facts(), verdict };
  }
  const read = d.readFailure === undefined;
  return {
    kind: 'built',
    result: d.result,
    chains: d.chains,
    danglingIntents: read ? d.danglingIntents : context.danglingIntents,
    tornTailAt: d.tornTailAt,
    causes: d.causes,
    verdict,
  };
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
      verdict: VerdictAnswer;
    }
  | { kind: 'unreadable'; error: ErrorFacts; verdict: VerdictAnswer };

export function rowPreview(p: PreviewOutcome): RowPreview {
  if (p.kind === 'unreadable') return { kind: 'unreadable', error: p.error, verdict: plainVerdict(p.verdict) };
  const out: RowPreview = {
    kind: 'built',
    wouldMask: p.result.mask_sample,
    danglingIntents: [...p.danglingIntents],
    causes: p.causes.map((c) => ({ ...c })),
    verdict: plainVerdict(p.verdict),
  };
  if ('error' in p.result) out.buildError = p.result.error;
  if (p.tornTailAt !== undefined) out.tornTailAt = p.tornTailAt;
  return out;
}

/** A verdict as plain data (it crosses a worker boundary). */
function plainVerdict(v: VerdictAnswer): VerdictAnswer {
  return { ...v, causes: v.causes.map((c) => ({ ...c })) };
}

/** Everything a directory row is derived from: the facts and their status, and the preview. */
export interface RowRead {
  facts: RolloutFacts;
  status: RolloutStatusAnswer;
  /** Absent only when the facts could not be read (nothing was built then). */
  preview?: RowPreview;
}

/**
 * Where a row read gets its copies taken under a lock. The defaults take them in this thread; the
 * read worker (read-worker.ts) asks the main thread, which takes every rollout lock of the process.
 */
export interface RowCopySources {
  readJsonl?: FactsOptions['readJsonl'];
  readOnlyCopy?: ReadOnlyCopySource;
  /**
   * One copy of the rollout taken under one lock (src/ops/rollout-copy.ts): the facts and the
   * preview are both computed from it, and nothing is read or locked here (any thread).
   */
  copy?: { arena: Uint8Array; record: RolloutCopyRecord };
  /** Reads the JSON: the calling thread's reader when it reads many rollouts (default: new ones per rollout). */
  jsonReader?: JsonBytesReader;
}

/**
 * The row read: facts, then the preview build. A rollout whose facts could not be read is not
 * built (its read would wait for the same lock again): status and verdict are `unavailable`.
 */
export async function readRow(
  store: StoreOptions,
  rolloutId: string,
  files: ReadonlySet<FileKind> | undefined,
  sources: RowCopySources = {},
): Promise<RowRead> {
  const { copy, jsonReader } = sources;
  const facts = await rolloutFacts(store, rolloutId, {
    files: files && new Set(files),
    readJsonl: sources.readJsonl,
    copy,
    jsonReader,
  });
  if (copy) sources = { readOnlyCopy: async () => snapshotCopyOf(copy.arena, copy.record, facts.retired) };
  const status = rolloutStatus(facts);
  if (status.status === 'unavailable') {
    return {
      facts,
      status,
      preview: { kind: 'unreadable', error: status.error!, verdict: unavailableVerdict(status.error!) },
    };
  }
  const context = {
    incompleteMarkers: facts.incomplete_marker_calls,
    incompleteFlag: facts.incomplete_flag,
    danglingIntents: facts.dangling_intents,
  };
  const preview = await previewRollout(store, rolloutId, context, sources.readOnlyCopy, jsonReader);
  return { facts, status, preview: rowPreview(preview) };
}
