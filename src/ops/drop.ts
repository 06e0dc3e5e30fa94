import { withRolloutLock } from '../lock/rollout-lock.js';
import { readState } from '../state/read-state.js';
import { fenceOf, isFrozen, snapshotId, stateVersion } from '../state/rollout-state.js';
import { fsyncDir } from '../state/fsync-dir.js';
import { writeState } from '../state/write-state.js';
import { removeRecordFiles } from './remove-files.js';
import { rolloutTarget, type StoreOptions } from './store.js';

/**
 * Conditional retirement of a consumed snapshot (docs/format.md#drop, newer store): false unless the
 * rollout is frozen with exactly this snapshot id and version; otherwise fence durably first,
 * then remove the records. A retired rollout is not refused (dropping again returns true).
 */
export async function dropRollout(store: StoreOptions, rolloutId: string, expectedSnapshotId: string, expectedVersion: number): Promise<boolean> {
  const t = rolloutTarget(store, rolloutId);
  return withRolloutLock(t.paths.lock, rolloutId, 'exclusive', { waitMs: t.lockWaitMs }, async () => {
    const state = await readState(t.paths.state, rolloutId);
    if (!isFrozen(state) || snapshotId(state) !== expectedSnapshotId || stateVersion(state, rolloutId) !== expectedVersion) {
      return false;
    }
    writeState(t.dir, t.paths.state, fenceOf(state), 'fence', rolloutId);
    fsyncDir(t.dir);
    removeRecordFiles(t.paths, rolloutId);
    fsyncDir(t.dir);
    return true;
  });
}
