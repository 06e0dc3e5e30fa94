import { withRolloutLock } from '../lock/rollout-lock.js';
import { readState } from '../state/read-state.js';
import { fenceOf, isFrozen, isRetired, snapshotId, stateVersion } from '../state/rollout-state.js';
import { fsyncDir } from '../state/fsync-dir.js';
import { writeState } from '../state/write-state.js';
import { removeRecordFiles } from './remove-files.js';
import { rolloutTarget, type StoreOptions } from './store.js';

/** Why a conditional drop was refused (read under the drop's own lock). */
export type DropRefusal = 'absent' | 'retired' | 'not_frozen' | 'snapshot_differs' | 'version_differs';

export type DropOutcome =
  | { dropped: true }
  | {
      dropped: false;
      reason: DropRefusal;
      /** What the state holds instead (for the message): its snapshot id or version. */
      actual?: string | number;
    };

/**
 * Conditional retirement of a consumed snapshot (docs/format.md#drop, newer store): refused
 * unless the rollout is frozen with exactly this snapshot id and version, and then it says why;
 * otherwise fence durably first, then remove the records. A retired rollout is not refused
 * (dropping again succeeds) when its fence still holds that snapshot.
 */
export async function dropRolloutOutcome(
  store: StoreOptions,
  rolloutId: string,
  expectedSnapshotId: string,
  expectedVersion: number,
): Promise<DropOutcome> {
  const t = rolloutTarget(store, rolloutId);
  return withRolloutLock(
    t.paths.lock,
    rolloutId,
    'exclusive',
    { waitMs: t.lockWaitMs },
    async (): Promise<DropOutcome> => {
      const state = await readState(t.paths.state, rolloutId);
      if (!state.exists) return { dropped: false, reason: 'absent' };
      if (!isFrozen(state)) return { dropped: false, reason: isRetired(state) ? 'retired' : 'not_frozen' };
      const sid = snapshotId(state) ?? '';
      if (sid !== expectedSnapshotId) return { dropped: false, reason: 'snapshot_differs', actual: sid };
      const version = stateVersion(state, rolloutId);
      if (version !== expectedVersion) return { dropped: false, reason: 'version_differs', actual: version };
      writeState(t.dir, t.paths.state, fenceOf(state), 'fence', rolloutId);
      fsyncDir(t.dir);
      removeRecordFiles(t.paths, rolloutId);
      fsyncDir(t.dir);
      return { dropped: true };
    },
  );
}

/** `dropRolloutOutcome` as the reference's boolean. */
export async function dropRollout(
  store: StoreOptions,
  rolloutId: string,
  expectedSnapshotId: string,
  expectedVersion: number,
): Promise<boolean> {
  return (await dropRolloutOutcome(store, rolloutId, expectedSnapshotId, expectedVersion)).dropped;
}
