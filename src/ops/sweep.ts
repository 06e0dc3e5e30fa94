import { existsSync, statSync } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { ioError, toTokcapError, type TokcapError } from '../errors.js';
import { SUFFIX, rolloutPaths } from '../layout/file-names.js';
import { isValidRolloutId } from '../layout/rollout-id.js';
import { withRolloutLock, type HeldLock } from '../lock/rollout-lock.js';
import { readState } from '../state/read-state.js';
import { isRetired } from '../state/rollout-state.js';
import { fsyncDir } from '../state/fsync-dir.js';
import { unlinkIfPresent } from './remove-files.js';
import { lockWaitOf, type StoreOptions } from './store.js';

export interface SweepCandidate {
  rolloutId: string;
  /** Age of the state file in seconds when it was examined. */
  ageSeconds: number;
}

export interface SweepResult {
  /** Removed (or, with dryRun, removable) ids, sorted by code point. */
  removed: SweepCandidate[];
  /** Retired, old enough, but J still exists: left alone (tokcap's safety rule, docs/format.md#differs-sweep-records). */
  skippedWithRecords: string[];
  /** Ids whose state could not be read or whose lock timed out. */
  failed: { rolloutId: string; error: TokcapError }[];
  dryRun: boolean;
}

export interface SweepOptions {
  olderThanSeconds: number;
  dryRun?: boolean;
  /**
   * Called for each rollout as soon as it is removed (with dryRun: found removable), before the
   * next one is examined: an interrupted sweep has reported everything it removed.
   */
  onRemoved?: (candidate: SweepCandidate) => void;
  /** Clock, for tests. */
  now?: () => number;
}

/**
 * sweep of retired tombstones (docs/format.md#sweep, older `sweep_retired` semantics plus tokcap's
 * safety rule). The reference aborts the whole sweep on a malformed state; tokcap reports that
 * rollout and goes on with the others (the exit code still says something went wrong).
 * With dryRun nothing is locked, created or removed: candidates are judged from a plain read.
 * Without it, only candidates are locked, through their existing lock file (one is created only
 * for a tombstone that never had one, and sweep then removes it).
 */
export async function sweepRetired(store: StoreOptions, options: SweepOptions): Promise<SweepResult> {
  const now = (options.now ?? (() => Date.now() / 1000))();
  const cutoff = now - options.olderThanSeconds;
  const waitMs = lockWaitOf(store);
  const dryRun = options.dryRun ?? false;
  const ids: string[] = [];
  let dirHandle;
  try {
    dirHandle = await opendir(store.dir);
  } catch (e) {
    throw ioError(e, store.dir);
  }
  for await (const ent of dirHandle) {
    if (!ent.name.endsWith(SUFFIX.state)) continue;
    const id = ent.name.slice(0, -SUFFIX.state.length);
    if (isValidRolloutId(id)) ids.push(id);
  }
  ids.sort();
  const result: SweepResult = { removed: [], skippedWithRecords: [], failed: [], dryRun };
  const examine = async (id: string): Promise<'remove' | 'skip' | 'records'> => {
    const paths = rolloutPaths(store.dir, id);
    let mtime: number;
    try {
      mtime = statSync(paths.state).mtimeMs / 1000;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'skip';
      throw ioError(e, paths.state, id);
    }
    if (mtime > cutoff) return 'skip';
    const state = await readState(paths.state, id);
    if (!isRetired(state)) return 'skip';
    if (existsSync(paths.jsonl)) return 'records';
    ages.set(id, Math.max(0, now - mtime));
    return 'remove';
  };
  const ages = new Map<string, number>();
  let removedAny = false;
  type Verdict = 'remove' | 'skip' | 'records' | 'no_lock_file';
  const removeUnderLock =
    (id: string) =>
    async (held: HeldLock): Promise<Verdict> => {
      if (!held.locked) return 'no_lock_file';
      const v = await examine(id);
      if (v === 'remove') {
        const paths = rolloutPaths(store.dir, id);
        // Side files first, then the fence (the reference unlinks S first): a crash in
        // between then leaves a fence that the next sweep finishes, never an I or M with no
        // state beside it, which no sweep visits again and which a fresh capture of the same
        // id would adopt (stale intents read as dangling). Same rule as delete (docs/format.md#delete-order).
        unlinkIfPresent(paths.intents, id);
        unlinkIfPresent(paths.incomplete, id);
        unlinkIfPresent(paths.state, id);
        // Still holding the lock on it: waiters on this inode are why sweep is age-gated.
        unlinkIfPresent(paths.lock, id);
        removedAny = true;
      }
      return v;
    };
  for (const id of ids) {
    const paths = rolloutPaths(store.dir, id);
    try {
      // A first look without the lock: most state files are not old retired tombstones, and
      // locking them would create a lock file per rollout on every cron run. Candidates are
      // examined again under the exclusive lock before anything is removed.
      let verdict: Verdict = await examine(id);
      if (!dryRun && verdict === 'remove') {
        // The existing lock file only, never a new one: a concurrent sweep that removed this
        // rollout meanwhile also unlinked its lock file, and creating one again (as a plain
        // mutating lock does when the file vanished while it waited) would leave a lock file
        // beside nothing, which no sweep ever visits (docs/format.md#lock-file-lifetime).
        verdict = await withRolloutLock(paths.lock, id, 'exclusive', { waitMs, readOnly: true }, removeUnderLock(id));
        if (verdict === 'no_lock_file') {
          // No lock file and no state: removed by someone else; nothing to do, nothing created.
          // No lock file but a state: a store that never had lock files (a copy); lock it as
          // the reference does, creating the file, which the removal then unlinks. (Should a
          // concurrent sweep remove the rollout between this check and the creation, the new
          // file is left alone: unlinking a lock file others may already wait on is the very
          // hazard the age gate exists for.)
          verdict = existsSync(paths.state)
            ? await withRolloutLock(paths.lock, id, 'exclusive', { waitMs }, removeUnderLock(id))
            : 'skip';
        }
      }
      if (verdict === 'remove') {
        const candidate = { rolloutId: id, ageSeconds: ages.get(id) ?? 0 };
        result.removed.push(candidate);
        options.onRemoved?.(candidate);
      } else if (verdict === 'records') result.skippedWithRecords.push(id);
    } catch (e) {
      result.failed.push({ rolloutId: id, error: toTokcapError(e, { rolloutId: id }) });
    }
  }
  if (removedAny) fsyncDir(store.dir);
  return result;
}
