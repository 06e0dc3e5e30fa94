/**
 * A live-view row's part of the one reading of a rollout (read-rollout.ts): the facts, the status
 * and what the row keeps of the preview build. The main thread copies the rollout under its lock
 * (src/watch/row-batch.ts); the row is read from that copy here or in the read worker.
 */
import { errorFromFacts, type ErrorFacts } from '../errors.js';
import type { RolloutFacts } from '../facts/rollout-facts.js';
import type { JsonBytesReader } from '../json/parse-json.js';
import type { FileKind } from '../layout/file-names.js';
import type { MaskCause } from '../chains/mask-causes.js';
import type { StoreOptions } from '../ops/store.js';
import type { RolloutStatusAnswer } from '../status/rollout-status.js';
import { unavailableVerdict, type VerdictAnswer } from '../status/verdict.js';
import { previewError, readCopy, type RolloutCopy, type RolloutRead } from './read-rollout.js';

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

/** Everything a directory row is derived from: the facts and their status, and the preview. */
export interface RowRead {
  facts: RolloutFacts;
  status: RolloutStatusAnswer;
  /** Absent only when the facts could not be read (nothing was built then). */
  preview?: RowPreview;
}

/**
 * The row of a rollout copied already (`files`: those the copy holds, undefined when it failed):
 * nothing is read or locked here, so any thread can do it.
 */
export async function readRow(
  store: StoreOptions,
  copy: RolloutCopy,
  files: ReadonlySet<FileKind> | undefined,
  jsonReader?: JsonBytesReader,
): Promise<RowRead> {
  return rowRead(await readCopy(store, copy, files, { jsonReader }));
}

/**
 * The row's view of a reading. Facts that could not be gathered fail the row as a whole; a
 * rollout that could not be read shows no preview, only why.
 */
export function rowRead(read: RolloutRead): RowRead {
  const { facts, status } = read;
  if (facts === undefined) throw errorFromFacts(status.error!, { rolloutId: read.id });
  if (status.status === 'unavailable') {
    return {
      facts,
      status,
      preview: { kind: 'unreadable', error: status.error!, verdict: unavailableVerdict(status.error!) },
    };
  }
  return { facts, status, preview: rowPreview(read, facts) };
}

function rowPreview(read: RolloutRead, facts: RolloutFacts): RowPreview {
  const { build, verdict } = read;
  const error = previewError(read);
  if (error !== undefined || build === undefined)
    return { kind: 'unreadable', error: error!, verdict: plainVerdict(verdict) };
  const out: RowPreview = {
    kind: 'built',
    wouldMask: build.result.mask_sample,
    // A snapshot that could not be read has no intents of its own: the facts' are shown.
    danglingIntents: [...(build.readFailure === undefined ? build.danglingIntents : facts.dangling_intents)],
    causes: build.causes.map((c) => ({ ...c })),
    verdict: plainVerdict(verdict),
  };
  if ('error' in build.result) out.buildError = build.result.error;
  if (build.tornTailAt !== undefined) out.tornTailAt = build.tornTailAt;
  return out;
}

/** A verdict as plain data (it crosses a worker boundary). */
function plainVerdict(v: VerdictAnswer): VerdictAnswer {
  return { ...v, causes: v.causes.map((c) => ({ ...c })) };
}
