import { toTokcapError } from '../errors.js';
import { rolloutPaths } from '../layout/file-names.js';
import { validateRolloutIdBatch } from '../layout/rollout-id.js';
import { withRolloutLock } from '../lock/rollout-lock.js';
import { fsyncDir } from '../state/fsync-dir.js';
import { hasRecordFiles, removeRecordFiles, unlinkIfPresent } from './remove-files.js';
import type { RemovalResult } from './retire.js';
import { lockWaitOf, type StoreOptions } from './store.js';

/**
 * Batch delete (docs/format.md#delete, newer store): records and fence, J, M, I before S so a crash
 * never leaves a fresh unfenced state beside old records. The lock file stays. One directory
 * fsync per non-empty batch, even when nothing was found.
 */
export async function deleteRollouts(store: StoreOptions, ids: readonly string[]): Promise<RemovalResult> {
  const batch = validateRolloutIdBatch(ids);
  const result: RemovalResult = { removed: [], absent: [], failed: [] };
  if (batch.length === 0) return result;
  const waitMs = lockWaitOf(store);
  for (const id of batch) {
    const paths = rolloutPaths(store.dir, id);
    try {
      const had = await withRolloutLock(paths.lock, id, 'exclusive', { waitMs }, () => {
        const had = hasRecordFiles(paths);
        removeRecordFiles(paths, id);
        unlinkIfPresent(paths.state, id);
        return had;
      });
      (had ? result.removed : result.absent).push(id);
    } catch (e) {
      result.failed.push({ rolloutId: id, error: toTokcapError(e, { rolloutId: id }) });
    }
  }
  fsyncDir(store.dir);
  return result;
}
