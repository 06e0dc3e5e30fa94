import { randomUUID } from 'node:crypto';
import { TokcapError } from '../errors.js';
import { openRegularForRead } from '../layout/safe-open.js';
import { readEntries } from '../jsonl/read-entries.js';
import { withRolloutLock } from '../lock/rollout-lock.js';
import type { TokenEntry } from '../records/token-entry.js';
import { danglingIntents, readIntents } from '../sidefiles/intents.js';
import { readState } from '../state/read-state.js';
import { isFrozen, isIncompleteFlag, isRetired, refusalCallIds, snapshotId, stateVersion } from '../state/rollout-state.js';
import { writeState } from '../state/write-state.js';
import { reconcileIndex } from './reconcile.js';
import { rolloutTarget, type StoreOptions } from './store.js';

export interface Snapshot {
  rolloutId: string;
  entries: TokenEntry[];
  incomplete: boolean;
  snapshotId: string;
  version: number;
  danglingIntents: string[];
}

export function retiredError(rolloutId: string): TokcapError {
  return new TokcapError('retired', `Token capture for rollout ${rolloutId} is retired`, { rolloutId, pyClass: 'RuntimeError' });
}

export function frozenError(rolloutId: string): TokcapError {
  return new TokcapError('frozen', `Token capture for rollout ${rolloutId} is already frozen`, { rolloutId, pyClass: 'RuntimeError' });
}

/** A fresh snapshot id: a random version-4 UUID as 32 lowercase hex characters (§5.2). */
export function newSnapshotId(): string {
  return randomUUID().replace(/-/g, '');
}

/**
 * freeze (FORMAT.md §7.7), under the exclusive lock: reconcile, freeze once (new snapshot id,
 * version + 1), read every entry, compute dangling intents with the newer rule (refusals).
 */
export async function freezeRollout(store: StoreOptions, rolloutId: string): Promise<Snapshot> {
  const t = rolloutTarget(store, rolloutId);
  const { paths } = t;
  return withRolloutLock(paths.lock, rolloutId, 'exclusive', { waitMs: t.lockWaitMs }, async () => {
    const state = await readState(paths.state, rolloutId);
    if (isRetired(state)) throw retiredError(rolloutId);
    const { changed } = await reconcileIndex({ dir: t.dir, rolloutId, jsonlPath: paths.jsonl, statePath: paths.state }, state);
    if (!isFrozen(state)) {
      state.data.frozen = true;
      state.data.snapshot_id = newSnapshotId();
      state.data.version = stateVersion(state, rolloutId) + 1;
      writeState(t.dir, paths.state, state.data, 'durable', rolloutId);
    } else if (changed) {
      writeState(t.dir, paths.state, state.data, 'durable', rolloutId);
    }
    let entries: TokenEntry[] = [];
    const fh = await openRegularForRead(paths.jsonl, rolloutId);
    if (fh) {
      try {
        entries = (await readEntries(fh, { rolloutId, file: paths.jsonl, tornTail: 'fail' })).entries;
      } finally {
        await fh.close();
      }
    }
    const intents = await readIntents(paths.intents, rolloutId);
    const dangling = danglingIntents(
      intents,
      entries.map((e) => e.model_call_id),
      refusalCallIds(state),
    );
    const sid = snapshotId(state);
    if (sid === undefined) {
      throw new TokcapError('corrupt', "'snapshot_id'", { rolloutId, file: paths.state, pyClass: 'KeyError' });
    }
    return {
      rolloutId,
      entries,
      incomplete: isIncompleteFlag(state) || dangling.length > 0,
      snapshotId: sid,
      version: stateVersion(state, rolloutId),
      danglingIntents: dangling,
    };
  });
}

/** The freeze result as CLI.md and the conformance corpus print it (entries as a count). */
export function snapshotSummary(s: Snapshot): {
  rollout_id: string;
  entries: number;
  entry_call_ids: string[];
  incomplete: boolean;
  snapshot_id: string;
  version: number;
  dangling_intents: string[];
} {
  return {
    rollout_id: s.rolloutId,
    entries: s.entries.length,
    entry_call_ids: s.entries.map((e) => e.model_call_id),
    incomplete: s.incomplete,
    snapshot_id: s.snapshotId,
    version: s.version,
    dangling_intents: s.danglingIntents,
  };
}
