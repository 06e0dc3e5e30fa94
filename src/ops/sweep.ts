import { existsSync, statSync } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { ioError, toTokcapError, type TokcapError } from '../errors.js';
import { SUFFIX, rolloutPaths } from '../layout/file-names.js';
import { isValidRolloutId } from '../layout/rollout-id.js';
import { withRolloutLock } from '../lock/rollout-lock.js';
import { readState } from '../state/read-state.js';
import { isRetired } from '../state/rollout-state.js';
import { fsyncDir } from '../state/fsync-dir.js';
import { unlinkIfPresent } from './remove-files.js';
import { DEFAULT_LOCK_WAIT_MS, type StoreOptions } from './store.js';

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
  /** Clock, for tests. */
  now?: () => number;
}

/**
 * sweep of retired tombstones (docs/format.md#sweep, older `sweep_retired` semantics plus tokcap's
 * safety rule). The reference aborts the whole sweep on a malformed state; tokcap reports that
 * rollout and goes on with the others (the exit code still says something went wrong).
 * With dryRun nothing is locked, created or removed: candidates are judged from a plain read.
 * Without it, only candidates are locked (and so get a lock file, which sweep then removes).
 */
export async function sweepRetired(store: StoreOptions, options: SweepOptions): Promise<SweepResult> {
  const now = (options.now ?? (() => Date.now() / 1000))();
  const cutoff = now - options.olderThanSeconds;
  const waitMs = store.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS;
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
  for (const id of ids) {
    const paths = rolloutPaths(store.dir, id);
    try {
      // A first look without the lock: most state files are not old retired tombstones, and
      // locking them would create a lock file per rollout on every cron run. Candidates are
      // examined again under the exclusive lock before anything is removed.
      const first = await examine(id);
      const verdict = dryRun || first !== 'remove'
        ? first
        : await withRolloutLock(paths.lock, id, 'exclusive', { waitMs }, async () => {
            const v = await examine(id);
            if (v === 'remove') {
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
          });
      if (verdict === 'remove') result.removed.push({ rolloutId: id, ageSeconds: ages.get(id) ?? 0 });
      else if (verdict === 'records') result.skippedWithRecords.push(id);
    } catch (e) {
      result.failed.push({ rolloutId: id, error: toTokcapError(e, { rolloutId: id }) });
    }
  }
  if (removedAny) fsyncDir(store.dir);
  return result;
}
