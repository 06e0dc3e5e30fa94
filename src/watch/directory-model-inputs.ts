/**
 * What the directory model (directory-model.ts) is given and what it gives: the readers it reads
 * the store through (injectable for tests; by default the library's read-only paths in this
 * thread, worker-readers.ts adds the second core), its options, and its snapshot.
 */
import type { ErrorFacts } from '../errors.js';
import { scanDirectory, type DirectoryListing } from '../layout/scan-directory.js';
import type { StoreOptions } from '../ops/store.js';
import { CopyArena } from '../ops/rollout-copy.js';
import { lstatStamp, type FileStat } from './file-signature.js';
import { readBatchHere, type BatchOptions, type RowReadOutcome } from './row-batch.js';
import type { DirectoryTotals, RolloutRow, RowDelta } from './rows.js';
import type { LoadListing, RescanListing } from './shared-stat.js';

/** Everything the model reads, injectable for tests (defaults: the library's read-only paths). */
export interface WatchReaders {
  scan(dir: string): Promise<DirectoryListing>;
  /** lstat; null when the file does not exist. */
  stat(path: string): Promise<FileStat | null>;
  /**
   * The rows of many rollouts, in order: each copied once under its lock, then read from the
   * copy (default: in this thread; worker-readers.ts adds the second core).
   */
  readBatch(store: StoreOptions, ids: readonly string[], options?: BatchOptions): Promise<RowReadOutcome[]>;
  /**
   * For the first scan of a live load (optional): the listing made in another thread, which
   * also takes half of the stat pass (shared-stat.ts); undefined: `scan` and stat here.
   */
  scanForLoad?(dir: string): Promise<LoadListing | undefined>;
  /**
   * For a rescan once rows are known (optional): the listing and every listed rollout's change
   * signature, made in another thread (the backstop's stat pass at 100,000 rollouts is seconds
   * of lstat); undefined: `scan` and stat here.
   */
  rescanListing?(dir: string): Promise<RescanListing | undefined>;
}

export const DEFAULT_READERS: WatchReaders = {
  scan: scanDirectory,
  // Synchronous (file-signature.ts `lstatStamp`): the store is single-host
  // (docs/format.md#lock-implementation), and the stat pass yields between batches.
  async stat(path) {
    return lstatStamp(path);
  },
  // An arena per batch: two batches in flight in one thread must not share one.
  readBatch: (store, ids, options) => readBatchHere(store, ids, new CopyArena(64 * 1024), options),
};

export interface DirectoryModelOptions {
  dir: string;
  lockWaitMs?: number;
  /** Batches of rollout reads in flight at once (default 3: some parsed while the next is copied). */
  concurrency?: number;
  /** Rollouts per batch (default 128; the first batch of a load is a screenful). */
  batchSize?: number;
  /** Rollouts in the first batch of a load (default 48): at least the rows of the first screen. */
  firstBatch?: number;
  /**
   * Stat rollouts not read yet before reading them (default true), so that they are read, and
   * shown, most recently modified first. `watch --once` has no screen to fill first.
   */
  statUnread?: boolean;
  /** Stat workers during a rescan (default 4; the default stat is synchronous, see DEFAULT_READERS). */
  statConcurrency?: number;
  /** Clock for `changedAt` and lock waits (default Date.now). */
  now?: () => number;
  /**
   * Whether a row read once the load is done carries when (`changedAt`, the view's mark; default
   * true). `watch --once` takes one snapshot: it has nothing earlier to compare a row with.
   */
  markChanges?: boolean;
  readers?: Partial<WatchReaders>;
  /** Told when each stage of a load starts or ends (a name per event), for timing the load. */
  trace?: (event: string) => void;
}

export interface DirectorySnapshot {
  readonly dir: string;
  /** Every known rollout, in no particular order (see rows.ts `visibleRows`). */
  readonly rows: readonly RolloutRow[];
  /**
   * The rows added, changed or removed since the model's previous snapshot (version `since`),
   * so that a view can keep its sorted rows up to date (rows.ts `VisibleRowsCache`); absent for
   * the first snapshot and when too much changed to be worth listing.
   */
  readonly delta?: RowDelta & { readonly since: number };
  readonly totals: DirectoryTotals;
  readonly invalidNames: readonly string[];
  readonly tempStateFiles: readonly string[];
  /** Rollout reads queued or running (not those waiting for a lock: `lockWaits`). */
  readonly pending: number;
  /**
   * Rollouts whose lock another process holds, read in the background with their own wait, and
   * since when (model clock): their rows keep what was read before, or stay unread.
   */
  readonly lockWaits: ReadonlyMap<string, number>;
  /** The first full scan and all its reads are done. */
  readonly ready: boolean;
  /** The directory itself could not be listed (last attempt). */
  readonly scanError?: ErrorFacts;
  /** Bumped on every change. */
  readonly version: number;
}
