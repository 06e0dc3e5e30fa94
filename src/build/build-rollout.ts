import { toTokcapError } from '../errors.js';
import { isValidRolloutId, invalidRolloutIdError } from '../layout/rollout-id.js';
import { freezeRollout } from '../ops/freeze.js';
import { readSnapshotReadOnly } from '../ops/read-snapshot.js';
import type { StoreOptions } from '../ops/store.js';
import { assemble, failedBuild, finishConsumerResult, noRecordsResult, type ConsumerResult } from './consumer-result.js';

export interface BuildRolloutOptions {
  /** Model name put in the rebuilt response (the reference's default is ""). */
  model?: string;
  /**
   * true: exactly the reference consumer (`trajectories_for_rollout`): freeze, then build.
   * false: a read-only preview of what that would return, labelled `preview: true`, without
   * `_capture_snapshot`; nothing on disk changes.
   */
  freeze: boolean;
}

/**
 * Builds one rollout's trajectory (FORMAT.md §9.16). Never throws for store problems: like the
 * reference consumer, a failure becomes the failed-build dictionary with `error` as
 * "<PythonClass>: <message>". An invalid id is such a failure too (CLI.md).
 */
export async function buildRollout(store: StoreOptions, rolloutId: string, options: BuildRolloutOptions): Promise<ConsumerResult> {
  const model = options.model ?? '';
  if (!isValidRolloutId(rolloutId)) return failedBuild(rolloutId, invalidRolloutIdError(rolloutId).pythonString(), 0);
  let snapshot;
  try {
    snapshot = options.freeze ? await freezeRollout(store, rolloutId) : await readSnapshotReadOnly(store, rolloutId);
  } catch (e) {
    const err = toTokcapError(e, { rolloutId });
    // A lock timeout is tokcap's own failure, not the store's: let the caller report it.
    if (err.kind === 'lock_timeout') throw err;
    const failed = failedBuild(rolloutId, err.pythonString(), 0);
    return options.freeze ? failed : { ...failed, preview: true };
  }
  const result = snapshot.entries.length === 0 ? noRecordsResult(rolloutId) : assemble(rolloutId, snapshot.entries, model);
  if (options.freeze) {
    return finishConsumerResult(result, { incomplete: snapshot.incomplete, snapshot_id: snapshot.snapshotId, version: snapshot.version });
  }
  const finished = finishConsumerResult(result, { incomplete: snapshot.incomplete });
  return { ...finished, preview: true };
}
