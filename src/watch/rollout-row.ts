/**
 * One row of the live view's directory list, as plain data (the view only ever sees these
 * values): rows.ts derives and packs rows, row-list.ts keeps them in order.
 */
import type { ErrorFacts } from '../errors.js';
import type { MaskCause } from '../chains/mask-causes.js';
import type { Condition, RolloutStatus } from '../status/rollout-status.js';
import type { Verdict } from '../status/verdict.js';

/** A row's error: plain data, it crosses from the read worker (batch-codec.ts). */
export type RowError = ErrorFacts;

export interface RolloutRow {
  readonly id: string;
  /** false until the first read of this rollout finished (the other fields are placeholders). */
  readonly loaded: boolean;
  /** The rollout's status and conditions (src/status), as every command gives them. */
  readonly status: RolloutStatus;
  readonly conditions: readonly Condition[];
  readonly frozen: boolean;
  readonly retired: boolean;
  readonly tornTail: boolean;
  readonly incompleteFlag: boolean;
  /** Entry lines in J (what `inspect` counts); null when they could not be counted (unavailable). */
  readonly calls: number | null;
  readonly danglingIntents: readonly string[];
  /** Call ids in the incomplete-marker file, one per mark, "" kept. */
  readonly incompleteMarkers: readonly string[];
  /** The state's version; null when the state could not be read or parsed (never a made-up 0). */
  readonly version: number | null;
  readonly snapshotId: string;
  /** Newest mtime among the rollout's files (ms since the epoch); 0 when unknown. */
  readonly mtimeMs: number;
  /** When this model saw the rollout change (ms, model clock); null for what the first scan found. */
  readonly changedAt: number | null;
  /** The consumer verdict of the preview build (src/status/verdict.ts); null until loaded. */
  readonly verdict: Verdict | null;
  /** The preview is the failed-build dictionary ("could not be built"). */
  readonly unbuilt: boolean;
  /** `verdict === 'masked'`; null when there is no verdict or it is `unavailable`. */
  readonly wouldMask: boolean | null;
  /** Every mask cause, in `build`'s vocabulary (empty when not masked). */
  readonly causes: readonly MaskCause[];
  /** The preview build's `error` string, for a failed build. */
  readonly buildError?: string;
  /** Why the rollout (or part of it) could not be read; the row still shows what was read. */
  readonly error?: RowError;
  /** Bumped every time the row's content changes (views key reloads on it). */
  readonly seq: number;
}
