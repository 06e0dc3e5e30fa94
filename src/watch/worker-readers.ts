/**
 * Batch row reads on both cores, for the live view and `watch --once`: this thread copies each
 * rollout of a batch under its lock (one at a time, docs/format.md#lock-mechanism) into an arena, moves the
 * arena to the read worker (read-worker.ts), which computes the rows, and copies the next batch
 * meanwhile. The worker is started on the first batch; if it cannot start (no compiled worker
 * next to this module, e.g. when running from sources) or dies, batches are read in this thread
 * instead, transparently (those in flight are read again here).
 *
 * Its parts: the worker's thread (read-worker-link.ts), the batches and their copies under lock
 * (worker-batches.ts), and the listings the worker makes (worker-listings.ts).
 */
import type { StoreOptions } from '../ops/store.js';
import { ReadWorkerLink } from './read-worker-link.js';
import type { BatchOptions, RowReadOutcome } from './row-batch.js';
import type { LoadListing, RescanListing } from './shared-stat.js';
import { readingModules, WorkerBatches } from './worker-batches.js';
import { sharedStat, WorkerListings } from './worker-listings.js';

export interface WorkerReaders {
  readBatch(store: StoreOptions, ids: readonly string[], options?: BatchOptions): Promise<RowReadOutcome[]>;
  /**
   * The directory listed by the worker, and a stat pass shared with it (shared-stat.ts), for the
   * start of a live load; undefined when there is no worker (the caller lists it itself).
   */
  scanForLoad(dir: string): Promise<LoadListing | undefined>;
  /**
   * The directory listed again by the worker, with every rollout's change signature (a rescan's
   * stat pass, off this thread); undefined when there is no worker (the caller lists and stats).
   */
  rescanListing(dir: string): Promise<RescanListing | undefined>;
  /**
   * Whether batches currently go to the worker (false before the first one, after a fallback, and
   * while the worker is busy with a load's listing and stat pass and has not loaded its reading
   * modules yet: those batches are read in this thread).
   */
  readonly inWorker: boolean;
  /**
   * Starts the worker now rather than on the first batch: it loads its modules while this
   * thread does something else (the live view loads its renderer), not while a batch waits.
   */
  start(): void;
  /**
   * Starts the worker and its listing of `dir` for a load now; the next `scanForLoad(dir)` (the
   * same string) takes that listing instead of asking for another.
   */
  prefetch(dir: string): void;
  /** Lets the batches in flight finish (at most `timeoutMs`), then stops the worker. */
  close(timeoutMs?: number): Promise<void>;
}

export function createWorkerReaders(workerUrl: URL = new URL('./read-worker.js', import.meta.url)): WorkerReaders {
  // (the listener is called once the worker runs: both parts exist by then)
  const link = new ReadWorkerLink(workerUrl, {
    reply(reply) {
      if (reply.type === 'batch') batches.onReply(reply);
      else if (reply.type === 'rescanned') listings.onRescanReply(reply);
      else listings.onScanReply(reply);
    },
    lost() {
      // A listing not given: this thread lists; a share of the stat pass not finished: this
      // thread stats what has no mtime. The copies went with the worker: read again, here.
      listings.abandon(false);
      batches.readAgainHere();
    },
  });
  const batches = new WorkerBatches(link);
  const listings = new WorkerListings(link);

  return {
    get inWorker() {
      return link.reading;
    },
    start() {
      link.start();
    },
    readBatch: (store, ids, options) => batches.read(store, ids, options),
    rescanListing: (dir) => listings.rescan(dir),
    prefetch(dir) {
      listings.prefetch(dir);
    },
    scanForLoad(dir) {
      const listing = listings.forLoad(dir);
      // Idle until the listing comes (a listing already there runs first): what the stat pass
      // and the first batch (read here while the worker loads its modules) call is loaded meanwhile.
      setImmediate(() => {
        void sharedStat().then(
          ({ prepareStat }) => prepareStat(),
          () => undefined,
        );
        // (a failure is the first batch's to report)
        readingModules().catch(() => undefined);
      });
      return listing;
    },
    async close(timeoutMs = 2000) {
      link.close();
      // Nobody waits for a load any more.
      listings.abandon(true);
      await batches.drain(timeoutMs);
      await link.terminate();
    },
  };
}
