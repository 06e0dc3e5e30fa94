import { toTokcapError, type TokcapError } from '../errors.js';
import { rolloutPaths } from '../layout/file-names.js';
import { validateRolloutIdBatch } from '../layout/rollout-id.js';
import { withRolloutLock } from '../lock/rollout-lock.js';
import { readState } from '../state/read-state.js';
import { fenceOf, isRetired } from '../state/rollout-state.js';
import { fsyncDir } from '../state/fsync-dir.js';
import { writeState } from '../state/write-state.js';
import { hasRecordFiles, removeRecordFiles } from './remove-files.js';
import { lockWaitOf, type StoreOptions } from './store.js';

export interface RemovalResult {
  removed: string[];
  absent: string[];
  /** Ids that could not be processed (unreadable state, lock timeout, I/O); not in the reference. */
  failed: { rolloutId: string; error: TokcapError }[];
}

/**
 * Batch retire as the reference answers it (docs/format.md#retire): `{removed, absent}`, or the
 * failure of the first id that could not be retired (an unreadable state is `corrupt`), as the
 * reference raises. The rest of the batch has still been retired; `retireRolloutsOutcome` gives
 * the per-id account.
 */
export async function retireRollouts(store: StoreOptions, ids: readonly string[]): Promise<RemovalResult> {
  const result = await retireRolloutsOutcome(store, ids);
  if (result.failed.length > 0) throw result.failed[0]!.error;
  return result;
}

/**
 * Batch retire (docs/format.md#retire): validate all ids first; phase 1 writes every missing fence
 * (temp-file fsync, no directory fsync); one directory fsync; phase 2 removes records only while
 * the state is still retired; one directory fsync. An id whose state cannot be read is reported
 * in `failed` and its records are never removed; the other ids are still retired.
 */
export async function retireRolloutsOutcome(store: StoreOptions, ids: readonly string[]): Promise<RemovalResult> {
  const batch = validateRolloutIdBatch(ids);
  const result: RemovalResult = { removed: [], absent: [], failed: [] };
  if (batch.length === 0) return result;
  const waitMs = lockWaitOf(store);
  const had = new Map<string, boolean>();
  const failed = new Set<string>();
  for (const id of batch) {
    const paths = rolloutPaths(store.dir, id);
    try {
      await withRolloutLock(paths.lock, id, 'exclusive', { waitMs }, async () => {
        const state = await readState(paths.state, id);
        had.set(id, hasRecordFiles(paths));
        if (!isRetired(state)) writeState(store.dir, paths.state, fenceOf(state), 'fence', id);
      });
    } catch (e) {
      failed.add(id);
      result.failed.push({ rolloutId: id, error: toTokcapError(e, { rolloutId: id }) });
    }
  }
  // Always, even without a new fence: one found on disk may come from a retire that never synced.
  fsyncDir(store.dir);
  for (const id of batch) {
    if (failed.has(id) || !had.get(id)) continue;
    const paths = rolloutPaths(store.dir, id);
    try {
      await withRolloutLock(paths.lock, id, 'exclusive', { waitMs }, async () => {
        const state = await readState(paths.state, id);
        if (isRetired(state)) removeRecordFiles(paths, id);
      });
    } catch (e) {
      failed.add(id);
      result.failed.push({ rolloutId: id, error: toTokcapError(e, { rolloutId: id }) });
    }
  }
  fsyncDir(store.dir);
  for (const id of batch) {
    if (failed.has(id)) continue;
    (had.get(id) ? result.removed : result.absent).push(id);
  }
  return result;
}
